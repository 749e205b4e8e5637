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
// Nothing else of cudag includes this header: it alone reads Boost.Hana
// (<boost/hana.hpp>, whole, so that every algorithm is at hand), and a
// translation unit that does not include it reads no Hana header
// (tests/dsl/no_hana_test.cpp; what it costs where included: dsl/README.md).
//
// Everything here is computed from what the graph's type already holds (its
// shape, G::shape, and its items' types): nothing is added to a graph's
// type, and a graph never viewed costs nothing more.
#include <boost/hana.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl.hpp"

namespace cudag::dsl::hana_view {

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
}  // namespace detail

/// The other way: a DSL name as a Hana compile-time string,
/// `string_c<"scale"> == BOOST_HANA_STRING("scale")`.
template <fixed_string S>
inline constexpr auto string_c = detail::string_of<S>(std::make_index_sequence<S.size()>{});

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

/// Node V's name (G::shape.names[V]) as a Hana string.
template <class G, std::size_t V, std::size_t... I>
constexpr boost::hana::string<G::shape.names[V][I]...> node_name(std::index_sequence<I...>) noexcept {
  return {};
}
template <class G, std::size_t V>
inline constexpr auto node_name_c = node_name<G, V>(std::make_index_sequence<G::shape.names[V].size()>{});

template <class G, std::size_t V, std::size_t... K>
constexpr auto depends_on(std::index_sequence<K...>) noexcept {
  return boost::hana::make_tuple(node_name_c<G, G::shape.deps[G::shape.dep_begin[V] + K]>...);
}

template <node_kind Kind, std::size_t... I>
constexpr boost::hana::string<kind_name(Kind)[I]...> kind_string(std::index_sequence<I...>) noexcept {
  return {};
}

template <class G, std::size_t V>
constexpr auto node_at() noexcept {
  constexpr node_kind kind = G::shape.kinds[V];
  using name_t = std::remove_const_t<decltype(node_name_c<G, V>)>;
  using kind_t = boost::hana::integral_constant<node_kind, kind>;
  using kind_name_t = decltype(kind_string<kind>(std::make_index_sequence<kind_name(kind).size()>{}));
  using deps_t = decltype(depends_on<G, V>(
      std::make_index_sequence<G::shape.dep_begin[V + 1] - G::shape.dep_begin[V]>{}));
  return node_info<name_t, kind_t, kind_name_t, deps_t>{};
}

template <class G, std::size_t... V>
constexpr auto nodes(std::index_sequence<V...>) noexcept {
  return boost::hana::make_tuple(node_at<G, V>()...);
}

template <class G, std::size_t... K>
constexpr auto order(std::index_sequence<K...>) noexcept {
  return boost::hana::make_tuple(node_name_c<G, G::shape.order[K]>...);
}

// ---------------------------------------------------------- parameters --
// A graph's shape keeps a parameter's name and a type id, not its type; the
// type is in the items' types, as param<"x", T> among a node's stored
// arguments (kernel, host, captured, memcpy, memset and event operands, a
// kernel's launch rules) and, for a child or conditional node, in its
// graphs' items. params_in<T> finds every param_t in T: a class template's
// type arguments are searched, and the DSL's class templates that take a
// value first are taken apart one by one below.
template <class... T>
struct type_pack {};
template <class... A, class... B>
type_pack<A..., B...> operator+(type_pack<A...>, type_pack<B...>);  // decltype only

template <class T>
struct params_in;
template <class... T>
using params_in_all =
    decltype((type_pack<>{} + ... + typename params_in<std::remove_cvref_t<T>>::type{}));

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

template <named_param P>
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
struct params_in<event_body<Record, E>> {
  using type = params_in_all<E>;
};
template <conditional_kind Kind, class Condition, class... Bodies>
struct params_in<conditional_body<Kind, Condition, Bodies...>> {
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

template <std::size_t J, class... P>
using param_at = typename decltype(+boost::hana::at_c<J>(boost::hana::tuple_t<P...>))::type;

template <class G, std::size_t I, class... P>
constexpr auto param_at_slot(type_pack<P...> found) noexcept {
  constexpr ref_info declared = G::shape.params[I];
  constexpr std::size_t j = find_param(declared.name, found);
  static_assert(j != sizeof...(P),
                "cudag::dsl::hana_view: a parameter's declaration was not found among the graph's "
                "item types (a node kind this header does not search)");
  using P_j = param_at<j, P...>;
  using T = typename P_j::value_type;
  static_assert(type_id_of<T> == declared.type);
  return param_info<std::remove_const_t<decltype(string_c<P_j::name>)>, boost::hana::type<T>>{};
}

template <class G, std::size_t... I>
constexpr auto params(std::index_sequence<I...>) noexcept {
  using found = typename params_in<G>::type;
  return boost::hana::make_tuple(param_at_slot<G, I>(found{})...);
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
  static T* element(const alloc_body<Buffer, T>*);
};
template <class Body>
using alloc_element_t = std::remove_pointer_t<decltype(alloc_of<to_fixed<Body::allocates.size()>(
    Body::allocates)>::element(static_cast<const Body*>(nullptr)))>;

template <class G, class... Items>
constexpr auto alloc_nodes(const graph_t<Items...>*) noexcept {
  constexpr bool allocates[] = {false, is_alloc<typename Items::body_type>()...};
  constexpr std::size_t count = count_of_values(allocates);
  std::array<std::uint32_t, count> out{};
  std::size_t k = 0;
  for (std::uint32_t v = 0; v != G::node_count; ++v)
    if (allocates[G::shape.position[v] + 1]) out[k++] = v;
  return out;
}
template <class G>
inline constexpr auto alloc_node_list = alloc_nodes<G>(static_cast<const G*>(nullptr));

template <class G, std::size_t P, class... Items>
constexpr auto item_type(const graph_t<Items...>*) noexcept {
  return boost::hana::at_c<P>(boost::hana::tuple_t<typename Items::body_type...>);
}
template <class G, std::size_t P>
using body_at = typename decltype(item_type<G, P>(static_cast<const G*>(nullptr)))::type;

template <class G, std::size_t V>
constexpr auto buffer_at(const G& g) noexcept {
  constexpr std::size_t position = G::shape.position[V];
  using body = body_at<G, position>;
  constexpr std::string_view buffer = body::allocates;
  constexpr auto name = to_fixed<buffer.size()>(buffer);
  using name_t = std::remove_const_t<decltype(string_c<name>)>;
  using node_name_t = std::remove_const_t<decltype(node_name_c<G, V>)>;
  return buffer_info<name_t, boost::hana::type<alloc_element_t<body>>,
                     node_name_t>{
      {}, {}, {}, get<position>(g.items).count};
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
