#pragma once
// Opt-in: a DSL graph's nodes, parameters and buffers as Boost.Hana
// sequences, for compile-time introspection with Hana's algorithms, and
// Hana compile-time strings as names.
//
//   #include "cudag/dsl/hana.hpp"
//   namespace hana = boost::hana;
//   namespace hv = cudag::dsl::hana_view;
//
//   constexpr auto ns = hv::nodes(g);               // hana::tuple, declaration order
//   static_assert(hana::size(ns) == hana::size_c<3>);
//   static_assert(hana::at_c<1>(ns).name == BOOST_HANA_STRING("scale"));
//   static_assert(hana::at_c<0>(hv::params(g)).type == hana::type_c<float*>);
//   kernel<hv::name(BOOST_HANA_STRING("scale")), scale>(...)   // a Hana string as a name
//
// Nothing else of cudag includes this header: it alone reads Boost.Hana,
// and a translation unit that does not include it reads no Hana header
// (tests/dsl/no_hana_test.cpp; what it costs where included:
// docs/guide/introspection.md).
//
// Everything here is computed from what the graph's type already holds (its
// shape, G::shape, and its items' types): nothing is added to a graph's
// type, and a graph never viewed costs nothing more.
// The Hana headers the view is made of (tuples, strings, types, integral
// constants, Structs, and equal: views compare). Include the algorithms you
// use (<boost/hana/for_each.hpp>, ...). Not <boost/hana.hpp> whole: with
// Boost 1.74 it reads boost/hana/traits.hpp, which names std::result_of and
// std::is_literal_type, gone from libc++'s C++20 mode (clang++ 14 and libc++
// refuse it).
#include <boost/hana/define_struct.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl.hpp"

namespace cudag::dsl::hana_view {

namespace detail {
// The DSL's internals this view reads (cudag::dsl::detail).
using cudag::dsl::detail::alloc_body;
using cudag::dsl::detail::conditional_body;
using cudag::dsl::detail::count_of_values;
using cudag::dsl::detail::event_body;
using cudag::dsl::detail::get;
using cudag::dsl::detail::named_param;
using cudag::dsl::detail::ref_info;
using cudag::dsl::detail::ref_kind;
using cudag::dsl::detail::to_fixed;
using cudag::dsl::detail::type_id_of;
}  // namespace detail

// --------------------------------------------------------------- names --
/// A Hana compile-time string as the DSL's name: usable wherever the DSL
/// takes a name as a template argument,
/// `kernel<name(BOOST_HANA_STRING("scale")), scale>(...)`,
/// `ex.set_enabled<name(BOOST_HANA_STRING("scale"))>(false)`.
template <char... C>
[[nodiscard]] constexpr fixed_string<sizeof...(C)> name(boost::hana::string<C...>) noexcept {
  fixed_string<sizeof...(C)> out;
  std::size_t i = 0;
  ((out.chars[i++] = C), ...);
  return out;
}

namespace detail {
template <fixed_string S, std::size_t... I>
constexpr boost::hana::string<S.chars[I]...> string_of(std::index_sequence<I...>) noexcept {
  return {};
}
/// A DSL name computed here as a Hana string. (Not offered for a literal,
/// hana_string<"scale">(): nvcc 13.0 then writes the literal's template
/// parameter object out for its host compiler undeclared, '__T8' was not
/// declared in this scope. Write BOOST_HANA_STRING("scale").)
template <fixed_string S>
[[nodiscard]] constexpr auto hana_string() noexcept {
  return string_of<S>(std::make_index_sequence<S.size()>{});
}
}  // namespace detail

// --------------------------------------------------------- descriptors --
// Hana Structs (BOOST_HANA_DEFINE_STRUCT): members by name (`n.name`), and
// hana::equal, hana::keys, hana::members, hana::to_map apply. Their members
// are compile-time values (Hana strings, types, integral constants, tuples
// of them), a buffer's count aside, so comparing two descriptors gives a
// compile-time answer.

/// A node: its name, kind (an integral constant of cudag::node_kind), the
/// kind's name ("kernel", "mem_alloc": cudag::kind_name) and the names of
/// the nodes it depends on (deduplicated, in edge declaration order).
template <class Name, class Kind, class KindName, class DependsOn>
struct node_info {
  BOOST_HANA_DEFINE_STRUCT(node_info, (Name, name), (Kind, kind), (KindName, kind_name),
                           (DependsOn, depends_on));
};

/// A parameter: its name and its C++ type (hana::type<T>, T as declared in
/// param<"x", T>).
template <class Name, class Type>
struct param_info {
  BOOST_HANA_DEFINE_STRUCT(param_info, (Name, name), (Type, type));
};

/// A buffer a mem_alloc node of the graph produces: its name, its element
/// type (hana::type<T> of buffer<"tmp", T>), the allocating node's name and
/// the element count (a value: the graph object holds it).
template <class Name, class Type, class Node>
struct buffer_info {
  BOOST_HANA_DEFINE_STRUCT(buffer_info, (Name, name), (Type, type), (Node, node),
                           (std::size_t, count));
};

namespace detail {

template <class G>
using graph_of = std::remove_cvref_t<G>;

// Each node's description is made by templates named by small values only
// (its name, kind and its dependencies' names as fixed strings), from one
// table of the graph's names made once per graph: under nvcc, templates
// named by the graph's type for each node cost seconds more at 64 nodes.

/// A graph's node names, joined, and each node's dependencies' names,
/// joined with a '\0' after each.
template <std::size_t N, std::size_t NameChars, std::size_t DepChars>
struct name_table {
  std::array<char, NameChars + 1> names{};
  std::array<std::uint32_t, N + 1> name_begin{};
  std::array<char, DepChars + 1> deps{};
  std::array<std::uint32_t, N + 1> deps_begin{};

  [[nodiscard]] constexpr std::string_view name(std::size_t v) const noexcept {
    return {names.data() + name_begin[v], name_begin[v + 1] - name_begin[v]};
  }
  [[nodiscard]] constexpr std::string_view dep_list(std::size_t v) const noexcept {
    return {deps.data() + deps_begin[v], deps_begin[v + 1] - deps_begin[v]};
  }
};

template <class G>
consteval std::size_t name_chars() noexcept {
  std::size_t n = 0;
  for (const std::string_view name : G::shape.names) n += name.size();
  return n;
}
template <class G>
consteval std::size_t dep_chars() noexcept {
  std::size_t n = 0;
  for (std::uint32_t k = 0; k != G::shape.dep_begin[G::node_count]; ++k)
    n += G::shape.names[G::shape.deps[k]].size() + 1;
  return n;
}
template <class G>
consteval auto make_name_table() noexcept {
  name_table<G::node_count, name_chars<G>(), dep_chars<G>()> t;
  std::uint32_t n = 0, d = 0;
  for (std::size_t v = 0; v != G::node_count; ++v) {
    t.name_begin[v] = n;
    for (const char c : G::shape.names[v]) t.names[n++] = c;
    t.deps_begin[v] = d;
    for (std::uint32_t k = G::shape.dep_begin[v]; k != G::shape.dep_begin[v + 1]; ++k) {
      for (const char c : G::shape.names[G::shape.deps[k]]) t.deps[d++] = c;
      t.deps[d++] = '\0';
    }
  }
  t.name_begin[G::node_count] = n;
  t.deps_begin[G::node_count] = d;
  return t;
}
template <class G>
inline constexpr auto names_of = make_name_table<G>();

/// Part K of a list of '\0'-terminated names: where it begins and its length.
consteval std::size_t part_begin(std::string_view joined, std::size_t k) noexcept {
  std::size_t at = 0;
  for (; k != 0; --k) at = joined.find('\0', at) + 1;
  return at;
}
consteval std::size_t part_size(std::string_view joined, std::size_t k) noexcept {
  const std::size_t at = part_begin(joined, k);
  return joined.find('\0', at) - at;
}
template <fixed_string Joined, std::size_t... K>
constexpr auto split(std::index_sequence<K...>) noexcept {
  return boost::hana::make_tuple(detail::hana_string<detail::to_fixed<part_size(Joined.view(), K)>(
      Joined.view().substr(part_begin(Joined.view(), K)))>()...);
}
consteval std::size_t part_count(std::string_view joined) noexcept {
  std::size_t n = 0;
  for (const char c : joined) n += c == '\0';
  return n;
}

template <node_kind Kind, std::size_t... I>
constexpr boost::hana::string<kind_name(Kind)[I]...> kind_string(std::index_sequence<I...>) noexcept {
  return {};
}

template <fixed_string Name, node_kind Kind, fixed_string Deps>
constexpr auto make_node() noexcept {
  using name_t = std::remove_const_t<decltype(detail::hana_string<Name>())>;
  using kind_t = boost::hana::integral_constant<node_kind, Kind>;
  using kind_name_t = decltype(kind_string<Kind>(std::make_index_sequence<kind_name(Kind).size()>{}));
  using deps_t = decltype(split<Deps>(std::make_index_sequence<part_count(Deps.view())>{}));
  return node_info<name_t, kind_t, kind_name_t, deps_t>{};
}

template <class G, std::size_t... V>
constexpr auto nodes(std::index_sequence<V...>) noexcept {
  constexpr const auto& t = names_of<G>;
  return boost::hana::make_tuple(make_node<detail::to_fixed<t.name(V).size()>(t.name(V)), G::shape.kinds[V],
                                           detail::to_fixed<t.dep_list(V).size()>(t.dep_list(V))>()...);
}

template <class G, std::size_t... K>
constexpr auto order(std::index_sequence<K...>) noexcept {
  constexpr const auto& t = names_of<G>;
  return boost::hana::make_tuple(
      detail::hana_string<detail::to_fixed<t.name(G::shape.order[K]).size()>(t.name(G::shape.order[K]))>()...);
}

/// The body of the item at position P of G (a node: never among the runs
/// of edges a graph's tuple holds without leaves).
template <class G, std::size_t P>
using body_at = std::remove_cvref_t<decltype(detail::get<P>(std::declval<const G&>().items))>;

// ---------------------------------------------------------- parameters --
// A graph's shape keeps a parameter's name and a type id, not its type; the
// type is in the items' types, as param<"x", T> among a node's stored
// arguments (kernel, host, captured, memcpy, memset and event operands, a
// kernel's launch rules) and, for a child or conditional node, in its
// graphs' items. Each parameter is looked for in the body of the first item
// that reads it: params_in<T> finds every param_t in T (a class template's
// type arguments are searched; the DSL's class templates that take a value
// first are taken apart one by one below). Only that body is searched, not
// every item: nvcc's front end took 17 s more for a 64-node graph's
// parameters when every body was searched.
template <class... T>
struct type_pack {};

/// Packs joined, one after the other.
template <class... Packs>
struct concat {
  using type = type_pack<>;
};
template <class... A>
struct concat<type_pack<A...>> {
  using type = type_pack<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<type_pack<A...>, type_pack<B...>, Rest...> : concat<type_pack<A..., B...>, Rest...> {};

template <class T>
struct params_in;
template <class... T>
using params_in_all = typename concat<typename params_in<std::remove_cvref_t<T>>::type...>::type;

/// A class that is no template of types only: its stored arguments (`args`,
/// a captured node's), or nothing. (nvcc's front end deduces no class-type
/// template argument, a fixed_string: captured_body<What, F, S...> is read
/// through its member, not taken apart.)
template <class T>
consteval auto params_in_members() noexcept {
  if constexpr (requires(const T& t) { t.args; })
    return params_in_all<decltype(std::declval<const T&>().args)>{};
  else
    return type_pack<>{};
}
template <class T>
struct params_in {
  using type = decltype(params_in_members<T>());
};

template <detail::named_param P>
struct params_in<P> {
  using type = type_pack<P>;
};
template <template <class...> class TT, class... A>
struct params_in<TT<A...>> {
  using type = params_in_all<A...>;
};
template <class... Items>
struct params_in<graph_t<Items...>> {
  using type = params_in_all<typename Items::body_type...>;
};
template <bool Record, class E>
struct params_in<detail::event_body<Record, E>> {
  using type = params_in_all<E>;
};
template <conditional_kind Kind, class Condition, class... Bodies>
struct params_in<detail::conditional_body<Kind, Condition, Bodies...>> {
  using type = params_in_all<Bodies...>;
};

/// The first of P... named `name` (sizeof...(P) when none is).
template <class... P>
constexpr std::size_t find_param(std::string_view name, type_pack<P...>) noexcept {
  const bool named[] = {false, (P::name.view() == name)...};
  for (std::size_t j = 0; j != sizeof...(P); ++j)
    if (named[j + 1]) return j;
  return sizeof...(P);
}

template <std::size_t J, class Pack>
struct pack_at;
template <std::size_t J, class First, class... Rest>
struct pack_at<J, type_pack<First, Rest...>> : pack_at<J - 1, type_pack<Rest...>> {};
template <class First, class... Rest>
struct pack_at<0, type_pack<First, Rest...>> {
  using type = First;
};

/// The position of the first item of G that reads parameter `name`.
template <class G>
consteval std::size_t first_reader(std::string_view name) noexcept {
  for (std::size_t i = 0; i != G::items_info.size(); ++i)
    for (const detail::ref_info& r : G::items_info[i].refs)
      if (r.kind == detail::ref_kind::param && r.name == name) return i;
  return G::items_info.size();
}

template <class G, std::size_t I>
constexpr auto param_at_slot() noexcept {
  constexpr detail::ref_info declared = G::shape.params[I];
  constexpr std::size_t reader = first_reader<G>(declared.name);
  static_assert(reader != G::items_info.size());  // the shape's parameters are its items'
  using found = typename params_in<body_at<G, reader>>::type;
  constexpr std::size_t j = find_param(declared.name, found{});
  if constexpr (requires { typename pack_at<j, found>::type; }) {
    using P_j = typename pack_at<j, found>::type;
    using T = typename P_j::value_type;
    static_assert(detail::type_id_of<T> == declared.type);
    return param_info<std::remove_const_t<decltype(detail::hana_string<P_j::name>())>, boost::hana::type<T>>{};
  } else {
    // Unreachable from a user's graph: every node kind that reads a
    // parameter is searched (the tests cover each). A new node kind that is
    // not stops here rather than giving a wrong type.
    static_assert(sizeof(found) == 0);
  }
}

template <class G, std::size_t... I>
constexpr auto params(std::index_sequence<I...>) noexcept {
  return boost::hana::make_tuple(param_at_slot<G, I>()...);
}

// ------------------------------------------------------------- buffers --
template <class Body>
consteval bool is_alloc() noexcept {
  if constexpr (requires { Body::kind; })  // an edge item's body has none
    return Body::kind == node_kind::mem_alloc;
  else
    return false;
}

/// The element type T of alloc_body<Buffer, T>, Buffer given (not deduced:
/// nvcc's front end deduces no fixed_string).
template <fixed_string Buffer>
struct alloc_of {
  template <class T>
  static T* element(const detail::alloc_body<Buffer, T>*);
};
template <class Body>
using alloc_element_t = std::remove_pointer_t<decltype(alloc_of<detail::to_fixed<Body::allocates.size()>(
    Body::allocates)>::element(static_cast<const Body*>(nullptr)))>;

template <class G, class... Items>
constexpr auto alloc_nodes(const graph_t<Items...>*) noexcept {
  constexpr bool allocates[] = {false, is_alloc<typename Items::body_type>()...};
  constexpr std::size_t count = detail::count_of_values(allocates);
  std::array<std::uint32_t, count> out{};
  std::size_t k = 0;
  for (std::uint32_t v = 0; v != G::node_count; ++v)
    if (allocates[G::shape.position[v] + 1]) out[k++] = v;
  return out;
}
template <class G>
inline constexpr auto alloc_node_list = alloc_nodes<G>(static_cast<const G*>(nullptr));

template <class G, std::size_t V>
constexpr auto buffer_at(const G& g) noexcept {
  constexpr std::size_t position = G::shape.position[V];
  using body = body_at<G, position>;
  constexpr std::string_view buffer = body::allocates;
  constexpr auto name = detail::to_fixed<buffer.size()>(buffer);
  using name_t = std::remove_const_t<decltype(detail::hana_string<name>())>;
  constexpr const auto& t = names_of<G>;
  using node_name_t = std::remove_const_t<decltype(detail::hana_string<detail::to_fixed<t.name(V).size()>(t.name(V))>())>;
  return buffer_info<name_t, boost::hana::type<alloc_element_t<body>>,
                     node_name_t>{
      {}, {}, {}, detail::get<position>(g.items).count};
}

template <class G, std::size_t... K>
constexpr auto buffers(const G& g, std::index_sequence<K...>) noexcept {
  return boost::hana::make_tuple(buffer_at<G, alloc_node_list<G>[K]>(g)...);
}

}  // namespace detail

// ------------------------------------------------------------ the views --
/// The nodes of graph type G, in declaration order, as a hana::tuple of
/// node_info. (A graph's type: `nodes_of<decltype(g)>`.)
template <class G>
inline constexpr auto nodes_of = detail::nodes<detail::graph_of<G>>(
    std::make_index_sequence<detail::graph_of<G>::node_count>{});

/// The parameters of graph type G (its nested graphs' included), in the
/// order of first use (the spec's), as a hana::tuple of param_info.
template <class G>
inline constexpr auto params_of = detail::params<detail::graph_of<G>>(
    std::make_index_sequence<detail::graph_of<G>::shape.params.size()>{});

/// The node names of graph type G in the order the graph is built (the
/// compile-time topological order: producers first, ties in declaration
/// order), as a hana::tuple of Hana strings.
template <class G>
inline constexpr auto order_of = detail::order<detail::graph_of<G>>(
    std::make_index_sequence<detail::graph_of<G>::node_count>{});

/// The same of a graph object.
template <class... Items>
[[nodiscard]] constexpr auto nodes(const graph_t<Items...>&) noexcept {
  return nodes_of<graph_t<Items...>>;
}
template <class... Items>
[[nodiscard]] constexpr auto params(const graph_t<Items...>&) noexcept {
  return params_of<graph_t<Items...>>;
}
template <class... Items>
[[nodiscard]] constexpr auto order(const graph_t<Items...>&) noexcept {
  return order_of<graph_t<Items...>>;
}

/// The buffers the graph's own mem_alloc nodes produce (not those of its
/// child graphs: view a child's graph for those), in declaration order, as
/// a hana::tuple of buffer_info; each count is read from the graph object.
template <class... Items>
[[nodiscard]] constexpr auto buffers(const graph_t<Items...>& g) noexcept {
  using G = graph_t<Items...>;
  return detail::buffers(g, std::make_index_sequence<detail::alloc_node_list<G>.size()>{});
}

}  // namespace cudag::dsl::hana_view
