#pragma once
// What a node declares about the memory its pointer arguments reach, where
// its types say too much (cudag/memory_access.hpp's model): a `T*` the
// kernel only reads, atomics that may run beside other atomics, the bytes
// an argument reaches.
//
//   with_access<0, access_mode::read>(kernel<"norm", norm>(4, 128, x, n))
//   with_access<0, access_mode::concurrent>(kernel<"count", count>(4, 128, hist, keys))
//   with_access<1, access_mode::read_write, 4096>(host<"log">(log_fn, n, out))
//
// The race rule judges the declaration at compile time, and to_spec()
// writes it into the node (kernel_node::accesses, host_node::accesses,
// captured_node::accesses), so check() judges the same.
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cudag/memory_access.hpp"
#include "cudag/dsl/host_nodes.hpp"
#include "cudag/dsl/kernel_node.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl {

using cudag::access_mode;
using cudag::to_the_end;

/// with_access<Argument, ...> on node `Node` names no pointer or buffer
/// argument of it (past its arguments, or a value): a refusal under g++
/// (CUDAG_DSL_REFUSAL), elsewhere never defined.
template <fixed_string Node, std::uint32_t Argument>
struct access_declared_for_no_pointer_argument
    CUDAG_DSL_REFUSAL(access_declared_for_no_pointer_argument);

namespace detail {

/// Body with the accesses Declared... of its arguments declared: its
/// references say so, and its spec node lists them. A later declaration of
/// one argument replaces an earlier one, as check() reads them.
template <class Body, access_declaration... Declared>
struct access_declared : Body {
  static constexpr std::array<access_declaration, sizeof...(Declared)> declared{Declared...};
  static constexpr auto refs = [] {
    auto out = Body::refs;
    for (const access_declaration& d : declared) {
      if (d.argument + 1 >= Body::arg_ref.size()) continue;  // refused where declared
      const std::size_t at = Body::arg_ref[d.argument];
      if (at == Body::arg_ref[d.argument + 1]) continue;  // a literal: check() follows its address
      out[at].touches_memory = true;
      out[at].access = d.mode;
      out[at].extent_bytes = d.extent_bytes;
    }
    return out;
  }();

  void write_spec(spec_writer& w, std::string_view name) const {
    Body::write_spec(w, name, declared);
  }
};

/// Body with Added declared after what it declares already.
template <class Body, access_declaration Added>
struct declaring {
  using type = access_declared<Body, Added>;
  static constexpr type make(const Body& body) { return type{body}; }
};
template <class Body, access_declaration... Declared, access_declaration Added>
struct declaring<access_declared<Body, Declared...>, Added> {
  using type = access_declared<Body, Declared..., Added>;
  static constexpr type make(const access_declared<Body, Declared...>& body) {
    return type{static_cast<const Body&>(body)};
  }
};

/// The pointer arguments of a kernel (of parameters P...), host or captured
/// node: those a declaration may name.
template <class Body>
struct declarable_arguments;
template <class... P, class... S>
[[nodiscard]] consteval auto kernel_pointer_arguments(type_list<P...>, type_list<S...>) {
  if constexpr (sizeof...(P) != sizeof...(S))
    return std::array<bool, 1>{false};  // a refused call: its error is reported elsewhere
  else
    return std::array<bool, sizeof...(P) + 1>{
        (std::is_pointer_v<std::remove_cvref_t<P>> || named_buffer<S>)..., false};
}
template <class Function, class Launch, class... P, class... S>
struct declarable_arguments<kernel_body<Function, Launch, type_list<P...>, node_tuple<S...>>> {
  static constexpr auto points = kernel_pointer_arguments(type_list<P...>{}, type_list<S...>{});
};
template <class F, class... S>
struct declarable_arguments<host_body<F, S...>> {
  static constexpr std::array<bool, sizeof...(S) + 1> points{
      (std::is_pointer_v<arg_type<S>> || named_buffer<S>)..., false};
};
template <fixed_string What, class F, class... S>
struct declarable_arguments<captured_body<What, F, S...>> {
  static constexpr std::array<bool, sizeof...(S) + 1> points{
      (std::is_pointer_v<arg_type<S>> || named_buffer<S>)..., false};
};
template <class Body, access_declaration... Declared>
struct declarable_arguments<access_declared<Body, Declared...>> : declarable_arguments<Body> {};

/// Whether argument `Argument` of a node of body Body points at memory;
/// only instantiated where it does not is the type the error names.
template <class Body, std::uint32_t Argument>
consteval bool points_at_memory() {
  constexpr const auto& points = declarable_arguments<Body>::points;
  return Argument + 1 < points.size() && points[Argument];
}
template <fixed_string Node, class Body, std::uint32_t Argument>
consteval bool declarable_argument() {
  if constexpr (!points_at_memory<Body, Argument>())
    return sizeof(access_declared_for_no_pointer_argument<Node, Argument>) > 0;
  return true;
}

// Declared accesses kept through with_attributes(), with_priority() and
// synchronizes_grid_dependencies(), in any order.
template <class Body, access_declaration... Declared>
struct attributed_body<access_declared<Body, Declared...>> {
  using inner = attributed_body<Body>;
  using type = access_declared<typename inner::type, Declared...>;
  static constexpr type make(const access_declared<Body, Declared...>& body,
                             const cudag::launch_attributes& a) {
    return type{inner::make(body, a)};
  }
  static constexpr type prioritized(const access_declared<Body, Declared...>& body, int priority) {
    return type{inner::prioritized(body, priority)};
  }
};
template <class Body, access_declaration... Declared>
struct grid_synchronizing_body<access_declared<Body, Declared...>> {
  using inner = grid_synchronizing_body<Body>;
  using type = access_declared<typename inner::type, Declared...>;
  static constexpr type make(const access_declared<Body, Declared...>& body) {
    return type{inner::make(body)};
  }
};

}  // namespace detail

/// Node `node` (a kernel, host or captured node) declaring how it touches
/// the memory its argument `Argument` (from 0) points at: `Mode` (read: a
/// `T*` it never writes; concurrent: atomic updates that may run beside
/// other concurrent updates, never beside plain reads or writes) over
/// `ExtentBytes` bytes from the pointer (to_the_end: all of them). The race
/// rule (a race<"a", "b", "x"> error) and check() both honour it.
template <std::uint32_t Argument, access_mode Mode, std::size_t ExtentBytes = to_the_end,
          class Node>
  requires requires { detail::declarable_arguments<typename Node::body_type>::points; }
[[nodiscard]] constexpr decltype(auto) with_access(const Node& node) {
  if constexpr (!detail::points_at_memory<typename Node::body_type, Argument>() &&
                CUDAG_DSL_REFUSES_BY_COPY) {
    (void)node;
    return detail::refusal_of<access_declared_for_no_pointer_argument<Node::name, Argument>>();
  } else {
    static_assert(detail::declarable_argument<Node::name, typename Node::body_type, Argument>());
    using declaring = detail::declaring<typename Node::body_type,
                                        access_declaration{Argument, Mode, ExtentBytes}>;
    return detail::node_t<Node::name, typename declaring::type>{declaring::make(node.body)};
  }
}
/// A refused node (its error reported where it was written) passes on.
template <std::uint32_t Argument, access_mode Mode, std::size_t ExtentBytes = to_the_end,
          class Node>
  requires detail::refused_graph_type<std::remove_cvref_t<Node>>
[[nodiscard]] constexpr decltype(auto) with_access(Node&&) {
  return detail::passed_refusal<Node>();
}

}  // namespace cudag::dsl
