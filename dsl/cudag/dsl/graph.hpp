#pragma once
// A graph declaration: nodes and edges in any order, checked by the compiler.
//
//   constexpr auto g = graph(
//       kernel<"a", step>(1, 64, x), kernel<"b", step>(1, 64, x),
//       edge<"a", "b">);
//
// A duplicate name, an edge to an unknown node, a cycle, a parameter read with
// two types, a buffer used outside its alloc..free window or two unordered
// nodes touching one memory, one writing (race<"a", "b", "x">), stops the
// build with an error type that names the fault (cycle_through<"a -> b -> a">);
// the graph's own type is kept out of those names.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include "cudag/dsl/buffer_views.hpp"
#include "cudag/dsl/chunked_tuple.hpp"
#include "cudag/dsl/declarations.hpp"
#include "cudag/dsl/graph_nodes.hpp"
#include "cudag/dsl/node.hpp"
#include "cudag/dsl/shape.hpp"

// Setup code that is one straight line of stores or calls per item, run once
// per graph (bind_entries, nodes_to_spec, the exec arena's constructor).
// GCC's -O2 walks aliases across such a line in more than linear time
// (measured at 512 nodes: a chain 16 s -> 11 s with the first two at -O1; a
// DAG with its edges from a table 10.4 s -> 9.2 s with the arena's too);
// -O1 emits the same stores and calls.
#ifndef CUDAG_DSL_STRAIGHT_LINE_GLUE
#if defined(__GNUC__) && !defined(__clang__)
#define CUDAG_DSL_STRAIGHT_LINE_GLUE [[gnu::optimize("O1")]]
#else
#define CUDAG_DSL_STRAIGHT_LINE_GLUE
#endif
#endif

// nvcc's device pass compiles no host code, yet instantiates every template a
// host function uses. The entry points of host-only work (lowering and
// instantiation, the spec) have a body there that does nothing but stop
// (device_pass_stub), so that it skips that work: a 512-node graph's device
// pass 3.0 s -> 1.7 s. (Declared without a definition, they made nvcc warn
// #114-D "referenced but not defined" for graphs of internal linkage.) The
// host pass, where the code is compiled and every check runs, sees them whole.
#if defined(__CUDA_ARCH__)
#define CUDAG_DSL_DEVICE_PASS 1
#else
#define CUDAG_DSL_DEVICE_PASS 0
#endif

namespace cudag::dsl {
namespace detail {

// Edge items' bodies and storage are empty: sixteen in a row are one chunk
// of the graph's tuples, not sixteen leaves (see held_as_run).
template <>
inline constexpr bool held_as_run<edge_body> = true;
template <>
inline constexpr bool held_as_run<no_storage> = true;

#if CUDAG_DSL_DEVICE_PASS
/// The body of host-only entry points in nvcc's device pass, which compiles
/// no host code: never called.
[[noreturn]] inline void device_pass_stub() noexcept { std::abort(); }
#endif

}  // namespace detail

// The shape problems of a declaration. What graph() returns in place of the
// graph when its declaration has one: a constant object of a type named by
// the problem and its text (cycle_through<"a -> b -> a">), as an rvalue,
// whose copy constructor is not constexpr. `constexpr auto g = graph(...)`
// copies it in a constant expression, so the error is on the declaration's
// own line, "call to non-constexpr function cycle_through<...>::cycle_through(
// const cycle_through<...>&)", with no template context: a context spells
// the enclosing function's template arguments, and graph()'s are every item
// of the declaration (a cycle in 512 nodes gave 170 KB of g++ output and
// 313 KB of nvcc's; now 1.7 KB and 2.9 KB). (A deleted copy constructor
// would refuse any declaration, but g++ reports it twice for a constexpr
// one.) The variable is then used without a second error: to_spec, lower,
// instantiate and child accept a refused graph lvalue silently; graph()'s
// result used directly (an rvalue: `to_spec(graph(...))`) is refused there,
// naming the same type. A graph kept in a variable that is not constexpr
// (`const auto g = graph(...)` in a function) compiles but does not link:
// the copy constructor is never defined, and the linker names it.
// (refused_graph: cudag/dsl/graph_nodes.hpp.)

template <fixed_string Node>
struct duplicate_node_name : detail::refused_graph {
  constexpr duplicate_node_name() noexcept = default;
  duplicate_node_name(const duplicate_node_name&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string Edge>
struct unknown_node_in_edge : detail::refused_graph {
  constexpr unknown_node_in_edge() noexcept = default;
  unknown_node_in_edge(const unknown_node_in_edge&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string Path>
struct cycle_through : detail::refused_graph {
  constexpr cycle_through() noexcept = default;
  cycle_through(const cycle_through&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string Parameter>
struct parameter_declared_with_two_types : detail::refused_graph {
  constexpr parameter_declared_with_two_types() noexcept = default;
  parameter_declared_with_two_types(const parameter_declared_with_two_types&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string Buffer>
struct buffer_allocated_twice : detail::refused_graph {
  constexpr buffer_allocated_twice() noexcept = default;
  buffer_allocated_twice(const buffer_allocated_twice&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string What>
struct buffer_used_outside_its_lifetime : detail::refused_graph {
  constexpr buffer_used_outside_its_lifetime() noexcept = default;
  buffer_used_outside_its_lifetime(const buffer_used_outside_its_lifetime&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string ConditionAndNodes>
struct condition_tested_by_two_conditional_nodes : detail::refused_graph {
  constexpr condition_tested_by_two_conditional_nodes() noexcept = default;
  condition_tested_by_two_conditional_nodes(const condition_tested_by_two_conditional_nodes&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string Position>
struct node_with_empty_name : detail::refused_graph {
  constexpr node_with_empty_name() noexcept = default;
  node_with_empty_name(const node_with_empty_name&) noexcept;  // not constexpr, never defined: the error
};
template <fixed_string BufferAndNodes>
struct buffer_freed_twice : detail::refused_graph {
  constexpr buffer_freed_twice() noexcept = default;
  buffer_freed_twice(const buffer_freed_twice&) noexcept;  // not constexpr, never defined: the error
};
/// An edge declared twice with two kinds: "a -> b (programmatic and full)".
template <fixed_string EdgeAndKinds>
struct edge_declared_with_two_kinds : detail::refused_graph {
  constexpr edge_declared_with_two_kinds() noexcept = default;
  edge_declared_with_two_kinds(const edge_declared_with_two_kinds&) noexcept;  // not constexpr, never defined: the error
};
/// A programmatic or launch-completion edge from or into a node that is not
/// a kernel node (CUDA's rule): "programmatic edge clear -> consume (clear
/// is a memset node)".
template <fixed_string Edge>
struct edge_kind_needs_kernel_nodes : detail::refused_graph {
  constexpr edge_kind_needs_kernel_nodes() noexcept = default;
  edge_kind_needs_kernel_nodes(const edge_kind_needs_kernel_nodes&) noexcept;  // not constexpr, never defined: the error
};
/// A programmatic or launch-completion edge into a kernel node not marked
/// with synchronizes_grid_dependencies(): it could read what its predecessor
/// writes before it is written. "consume (programmatic edge produce -> consume)".
template <fixed_string NodeAndEdge>
struct kernel_does_not_synchronize_grid_dependencies : detail::refused_graph {
  constexpr kernel_does_not_synchronize_grid_dependencies() noexcept = default;
  kernel_does_not_synchronize_grid_dependencies(const kernel_does_not_synchronize_grid_dependencies&) noexcept;  // not constexpr, never defined: the error
};

/// Two nodes with no path between them that touch memory `Memory` (a
/// parameter or buffer), one of them writing it, or one updating it
/// concurrently and the other reading it (cudag/memory_access.hpp): the
/// nodes in declaration order, a node inside a body or child graph named by
/// its enclosing node. Fixed with an edge, or by declaring the access
/// (with_access).
template <fixed_string First, fixed_string Second, fixed_string Memory>
struct race : detail::refused_graph {
  constexpr race() noexcept = default;
  race(const race&) noexcept;  // not constexpr, never defined: the error
};

// Mistakes found where a graph is used (instantiated, lowered, written as a
// spec, rebound, a node or buffer named by the exec): the call's return type
// is then the mistake's error type (or_error), which cannot be destroyed, and
// the function is never run. The user's own statement fails where it uses
// the result, `auto e = instantiate(g, x = d)` or
// `e.set_enabled<"typo">(false);` ("use of deleted function
// 'graph_has_no_node<"typo">::~graph_has_no_node()'"; nvcc: "... is
// inaccessible"), with no template context: a context spells the enclosing
// function's template arguments, and those of instantiate(), lower(),
// to_spec() and the exec's members are the whole graph (a missing binding in
// a 512-node graph gave 985 KB of g++ output and of nvcc's; a rebind of an
// unknown parameter 1.5 MB of nvcc's). Each verdict is computed by a
// consteval function over the shape that never fails itself.
// (CUDAG_DSL_ERROR_DESTRUCTOR: cudag/dsl/declarations.hpp.)
template <fixed_string NodeAndBuffer>
struct buffer_freed_but_never_allocated {
  CUDAG_DSL_ERROR_DESTRUCTOR(buffer_freed_but_never_allocated);
};
template <fixed_string ConditionAndReader>
struct condition_tested_by_no_conditional_node {
  CUDAG_DSL_ERROR_DESTRUCTOR(condition_tested_by_no_conditional_node);
};
template <fixed_string NodeAndBuffer>
struct buffer_used_but_never_allocated {
  CUDAG_DSL_ERROR_DESTRUCTOR(buffer_used_but_never_allocated);
};

namespace detail {

/// What a checked call returns: Result, or the type of its mistake (Error,
/// void when there is none).
template <class Error, class Result>
using or_error = std::conditional_t<std::is_void_v<Error>, Result, Error>;

/// The body of a checked call whose return type is an error type: never
/// run, since no statement that uses such a call compiles.
[[noreturn]] inline void returns_error() noexcept { std::abort(); }

}  // namespace detail

template <class... Items>
struct graph_t {
  static constexpr std::array<detail::item_info, sizeof...(Items)> items_info{Items::info...};
  static constexpr detail::shape_sizes sizes =
      detail::measure_shape<detail::measure_items(items_info)>(items_info);
  static constexpr auto shape = detail::analyze_shape<sizes>(items_info);
  static constexpr std::size_t node_count = sizes.nodes;
  /// Whether a kernel's launch, here or nested, follows parameters.
  static constexpr bool launch_follows_parameters =
      detail::any_of_values({false, Items::body_type::launch_follows_parameters...});
  /// Whether an operand here or nested may view a buffer (buffer_views.hpp).
  static constexpr bool views_any_buffer =
      detail::any_of_values({false, detail::views_buffers<typename Items::body_type>()...});

  /// The items' bodies (an edge's is empty), not the items: the tuple's
  /// types, and every function over it, are named by body types only, which
  /// nodes of one kind share, never by a node's name or an edge's names.
  detail::chunked_tuple<typename Items::body_type...> items;
};


namespace detail {

/// The error type of a shape's first problem. Depends only on the problem
/// and its message, never on the graph's type. (A function, not partial
/// specialisations: nvcc's front end does not deduce a fixed_string.)
template <shape_problem Problem, fixed_string Message>
consteval auto shape_error_type() {
  if constexpr (Problem == shape_problem::duplicate_node)
    return std::type_identity<duplicate_node_name<Message>>{};
  else if constexpr (Problem == shape_problem::unknown_node_in_edge)
    return std::type_identity<unknown_node_in_edge<Message>>{};
  else if constexpr (Problem == shape_problem::parameter_type_conflict)
    return std::type_identity<parameter_declared_with_two_types<Message>>{};
  else if constexpr (Problem == shape_problem::cycle)
    return std::type_identity<cycle_through<Message>>{};
  else if constexpr (Problem == shape_problem::buffer_allocated_twice)
    return std::type_identity<buffer_allocated_twice<Message>>{};
  else if constexpr (Problem == shape_problem::buffer_outside_lifetime)
    return std::type_identity<buffer_used_outside_its_lifetime<Message>>{};
  else if constexpr (Problem == shape_problem::condition_tested_twice)
    return std::type_identity<condition_tested_by_two_conditional_nodes<Message>>{};
  else if constexpr (Problem == shape_problem::empty_node_name)
    return std::type_identity<node_with_empty_name<Message>>{};
  else if constexpr (Problem == shape_problem::edge_of_two_kinds)
    return std::type_identity<edge_declared_with_two_kinds<Message>>{};
  else if constexpr (Problem == shape_problem::typed_edge_not_between_kernels)
    return std::type_identity<edge_kind_needs_kernel_nodes<Message>>{};
  else if constexpr (Problem == shape_problem::typed_edge_into_unsynchronized_kernel)
    return std::type_identity<kernel_does_not_synchronize_grid_dependencies<Message>>{};
  else
    return std::type_identity<buffer_freed_twice<Message>>{};
}

/// The problems only a top-level graph can judge: a free of a buffer no node
/// allocates, a read of a buffer no node allocates (it would read a null
/// pointer), a condition no conditional node tests (CUDA refuses to
/// instantiate with an unused conditional handle). Checked where a graph is
/// lowered or written as a spec, so the same rules hold as check()'s. The
/// error type of the first, or void. (The device pass trusts the host pass.)
template <class G>
consteval auto top_level_error() {
  constexpr const auto& s = G::shape;
  if constexpr (CUDAG_DSL_DEVICE_PASS)
    return std::type_identity<void>{};
  else if constexpr (s.orphan_free.size != 0)
    return std::type_identity<buffer_freed_but_never_allocated<to_fixed<s.orphan_free.size>(
        s.orphan_free.view())>>{};
  else if constexpr (s.unallocated_use.size != 0)
    return std::type_identity<buffer_used_but_never_allocated<to_fixed<s.unallocated_use.size>(
        s.unallocated_use.view())>>{};
  else if constexpr (s.untested_condition.size != 0)
    return std::type_identity<condition_tested_by_no_conditional_node<to_fixed<s.untested_condition.size>(
        s.untested_condition.view())>>{};
  else
    return std::type_identity<void>{};
}
template <class G>
using top_level_error_t = typename decltype(top_level_error<G>())::type;

}  // namespace detail

/// Declares a graph from nodes and edge groups, in any order.
/// With a shape problem, returns the problem's error object instead (see
/// shape_error_type): the error is reported where the result is copied.
template <class... Items>
  requires(!detail::has_refused_item<Items...>)
[[nodiscard]] constexpr decltype(auto) graph(const Items&... items) {
  using G = graph_t<Items...>;
  // The host pass checks; the device pass trusts it.
  constexpr const auto& s = G::shape;
  if constexpr (s.problem == detail::shape_problem::race && !CUDAG_DSL_DEVICE_PASS) {
    using error = typename std::type_identity<race<detail::to_fixed<s.race_first.size()>(s.race_first),
                                                   detail::to_fixed<s.race_second.size()>(s.race_second),
                                                   detail::to_fixed<s.race_memory.size()>(s.race_memory)>>::type;
    return detail::refusal_of<error>();
  } else if constexpr (G::shape.problem != detail::shape_problem::none && !CUDAG_DSL_DEVICE_PASS) {
    using error = typename decltype(detail::shape_error_type<
                                    G::shape.problem, detail::to_fixed<G::shape.message.size>(
                                                          G::shape.message.view())>())::type;
    return detail::refusal_of<error>();
  } else {
    if constexpr (detail::checks_buffer_views<Items...> && !CUDAG_DSL_DEVICE_PASS)
      detail::check_buffer_views(items...);
    return G{detail::make_chunked_tuple(items.body...)};
  }
}

namespace detail {
/// The refused item of Items chosen by graph(): the first, an rvalue (a
/// refused node written in the call: its error is reported where graph()'s
/// result is copied) or a variable (already reported: refused_by_an_item
/// copies quietly). Found without recursion over the items.
template <std::size_t I, class T>
struct indexed_type {
  using type = T;
};
template <class Sequence, class... T>
struct indexed_types;
template <std::size_t... I, class... T>
struct indexed_types<std::index_sequence<I...>, T...> : indexed_type<I, T>... {};
template <std::size_t I, class T>
indexed_type<I, T> select_indexed(const indexed_type<I, T>&);
template <std::size_t I, class... T>
using nth_type =
    typename decltype(select_indexed<I>(indexed_types<std::index_sequence_for<T...>, T...>{}))::type;
}  // namespace detail

/// A graph with a refused item (a node whose own declaration is wrong):
/// the item's refusal, so that one mistake gives one error.
template <class... Items>
  requires detail::has_refused_item<Items...>
[[nodiscard]] constexpr decltype(auto) graph(Items&&...) {
  return detail::passed_refusal<detail::nth_type<detail::first_refused_item<Items...>(), Items...>>();
}

namespace detail {

// --------------------------------------------------------------- storage --
/// Per-node lowering storage of a graph (argument values, node parameters,
/// host-call state), the CUDA node handles, and each item's run-time entry
/// (edges have an empty one).
template <class... Items>
struct graph_storage<graph_t<Items...>> {
  chunked_tuple<typename storage_of_body<typename Items::body_type>::type...> items;
  std::array<cudaGraphNode_t, graph_t<Items...>::node_count> handles{};
  std::array<node_entry, sizeof...(Items)> entries{};
};

/// Where each of G's references (G::shape.all_refs, items in declaration
/// order) lives in Root's tables: a parameter's byte offset, a buffer's or
/// condition's slot.
template <class G, class Root>
consteval auto resolve_slots() {
  std::array<ref_slot, (G::sizes.refs > 0 ? G::sizes.refs : 1)> out{};
  for (std::size_t k = 0; k < G::sizes.refs; ++k) {
    const ref_info& r = G::shape.all_refs[k];
    out[k] = r.kind == ref_kind::param    ? ref_slot(Root::shape.param_offset(r.hash))
             : r.kind == ref_kind::buffer ? Root::shape.buffer_slot(r.hash)
                                          : Root::shape.condition_slot(r.hash);
  }
  return out;
}
template <class G, class Root>
inline constexpr auto resolved_slots = resolve_slots<G, Root>();

/// Where item I's references start in G::shape.all_refs.
template <class G>
consteval auto item_ref_offsets() {
  std::array<std::uint32_t, G::items_info.size() + 1> out{};
  for (std::size_t i = 0; i < G::items_info.size(); ++i)
    out[i + 1] = out[i] + std::uint32_t(G::items_info[i].refs.size());
  return out;
}
template <class G>
inline constexpr auto item_ref_begin = item_ref_offsets<G>();

template <class S>
void attach_slots(slotted_storage<S>& storage, const ref_slot* slots) noexcept {
  storage.slots = slots;
}
inline void attach_slots(no_storage&, const ref_slot*) noexcept {}

/// Each item's operations (edges: none), one table per top-level graph.
template <class Root, class G>
inline constexpr auto item_ops = []<class... Items>(const graph_t<Items...>*) {
  return std::array<const node_ops*, sizeof...(Items)>{
      ops_table<typename Items::body_type, Root>...};
}(static_cast<const G*>(nullptr));

/// Fills one chunk's entries (body and storage addresses, reference slots)
/// in one pack expansion. Named by the chunk's types only, not the graph's;
/// not inlined, so that no function is one straight line over every item.
template <std::size_t... I, class... T, class... S>
[[gnu::noinline]] CUDAG_DSL_STRAIGHT_LINE_GLUE void bind_chunk(
    const tuple_chunk<std::index_sequence<I...>, T...>& items,
    tuple_chunk<std::index_sequence<I...>, S...>& storage, node_entry* out, const ref_slot* slots,
    const std::uint32_t* ref_begin) noexcept {
  ((out[I].body = &static_cast<const tuple_leaf<I, T>&>(items).value,
    out[I].storage = &static_cast<tuple_leaf<I, S>&>(storage).value,
    attach_slots(static_cast<tuple_leaf<I, S>&>(storage).value, slots + ref_begin[I])),
   ...);
}

/// Whether a chunk holds a node (not only edges, which have nothing to bind
/// or write): chunks of edges only make no function.
template <class Chunk>
inline constexpr bool chunk_has_nodes = true;
template <class T>
inline constexpr bool chunk_has_nodes<tuple_run<T>> = false;
template <std::size_t... I, class... T>
inline constexpr bool chunk_has_nodes<tuple_chunk<std::index_sequence<I...>, T...>> =
    !(std::is_same_v<T, edge_body> && ...);

template <class TC, class SC>
CUDAG_DSL_STRAIGHT_LINE_GLUE void bind_chunk_of_nodes(const TC& items, SC& storage, node_entry* out,
                                                      const ref_slot* slots,
                                                      const std::uint32_t* ref_begin) noexcept {
  if constexpr (chunk_has_nodes<TC>) bind_chunk(items, storage, out, slots, ref_begin);
}

template <class G, class Root, std::size_t... C, class... TC, class... SC>
CUDAG_DSL_STRAIGHT_LINE_GLUE void bind_entries(const chunk_set<std::index_sequence<C...>, TC...>& items,
                                               chunk_set<std::index_sequence<C...>, SC...>& storage,
                                               node_entry* out) noexcept {
  constexpr const auto& ops = item_ops<Root, G>;
  for (std::size_t i = 0; i < ops.size(); ++i) out[i].ops = ops[i];
  (bind_chunk_of_nodes(chunk_at<C>(items), chunk_at<C>(storage), out, resolved_slots<G, Root>.data(),
                       item_ref_begin<G>.data()),
   ...);
}

// -------------------------------------------------------------- lowering --
/// Adds the graph's nodes to `target` in topological order, each with its
/// dependency list: a loop over arrays the compiler computed.
template <class G, class Root>
void lower_graph(const G& graph, graph_storage<G>& storage, lowering_state& st, cudaGraph_t target) {
  constexpr const auto& s = G::shape;
  // Conditions tested by this graph's conditional nodes live on this graph
  // (each condition is tested by one conditional node: the shape checks it).
  // Not even compiled without conditions: its table would be empty.
  if constexpr (Root::shape.conditions.size() != 0)
    for (std::size_t v = 0; v < G::node_count; ++v) {
      if (s.owned_condition[v] == 0) continue;
      const std::uint32_t slot = Root::shape.condition_slot(s.owned_condition[v]);
      const ref_info& c = Root::shape.conditions[slot];
      const_cast<cudaGraphConditionalHandle*>(st.values.conditions)[slot] =
          native::create_condition(target, c.default_value, c.assign_default, s.names[v]);
    }
  bind_entries<G, Root>(graph.items, storage.items, storage.entries.data());
  std::array<cudaGraphNode_t, (s.max_deps > 0 ? s.max_deps : 1)> deps{};
  // Typed edges: a kernel node with one gets CUDA's edge data on each of its
  // dependencies, as the engine sends it (st.edges, read by the kernel's
  // lower). Not even compiled where every edge is full.
  if constexpr (s.dep_kinds.size() != 0) {
    std::array<cudaGraphEdgeData, (s.max_deps > 0 ? s.max_deps : 1)> edges{};
    for (std::size_t k = 0; k < G::node_count; ++k) {
      const std::uint32_t v = s.order[k];
      const std::uint32_t first = s.dep_begin[v], count = s.dep_begin[v + 1] - first;
      bool typed = false;
      for (std::uint32_t j = 0; j < count; ++j) {
        deps[j] = storage.handles[s.deps[first + j]];
        edges[j] = native::edge_data_of(s.dep_kinds[first + j]);
        typed = typed || s.dep_kinds[first + j] != edge_kind::full;
      }
      const node_entry& e = storage.entries[s.position[v]];
      st.edges = typed ? std::span<const cudaGraphEdgeData>(edges.data(), count)
                       : std::span<const cudaGraphEdgeData>();
      storage.handles[v] = e.ops->lower(e.body, e.storage, &st, target,
                                        native::deps_span(deps.data(), count), s.names[v]);
    }
    st.edges = {};
  } else {
    for (std::size_t k = 0; k < G::node_count; ++k) {
      const std::uint32_t v = s.order[k];
      const std::uint32_t first = s.dep_begin[v], count = s.dep_begin[v + 1] - first;
      for (std::uint32_t j = 0; j < count; ++j) deps[j] = storage.handles[s.deps[first + j]];
      const node_entry& e = storage.entries[s.position[v]];
      storage.handles[v] = e.ops->lower(e.body, e.storage, &st, target,
                                        native::deps_span(deps.data(), count), s.names[v]);
    }
  }
}

// ------------------------------------------------------------- rebinding --
template <class G>
[[nodiscard]] constexpr bool node_reads(std::uint32_t v, std::uint64_t param_hash) noexcept {
  for (const ref_info& r : G::items_info[G::shape.position[v]].refs)
    if (r.kind == ref_kind::param && r.hash == param_hash) return true;
  return false;
}
template <class G>
[[nodiscard]] constexpr bool node_reads_any(std::uint32_t v, param_hashes hashes) noexcept {
  for (const std::uint64_t h : hashes)
    if (node_reads<G>(v, h)) return true;
  return false;
}

/// The nodes a rebind of parameters Hash... may change, by creation rank,
/// and for each which of the parameters it reads: a rebind recomputes the
/// nodes reading a parameter whose value changed, in one pass.
template <class G, std::uint64_t... Hash>
struct rebind_readers {
  static constexpr std::array<std::uint64_t, sizeof...(Hash)> hashes{Hash...};
  static consteval std::size_t count() {
    std::size_t n = 0;
    for (std::uint32_t v = 0; v < G::node_count; ++v) n += (node_reads<G>(v, Hash) || ...);
    return n;
  }
  struct entry {
    std::uint32_t rank;                          ///< creation rank of the node
    std::array<bool, sizeof...(Hash)> reads;     ///< reads[b]: reads the b-th parameter
  };
  static constexpr auto entries = [] {
    std::array<entry, count()> out{};
    std::size_t k = 0;
    for (std::uint32_t rank = 0; rank < G::node_count; ++rank) {
      const std::uint32_t v = G::shape.order[rank];
      if (!(node_reads<G>(v, Hash) || ...)) continue;
      out[k].rank = rank;
      std::size_t b = 0;
      ((out[k].reads[b++] = node_reads<G>(v, Hash)), ...);
      ++k;
    }
    return out;
  }();
};

/// Nested graphs: every node reading one of the parameters, in creation
/// order, recomputed in the template (exec setters cannot reach them).
template <class G, class Root>
void update_readers(const G&, graph_storage<G>& storage, lowering_state& st, param_hashes hashes) {
  for (std::uint32_t rank = 0; rank < G::node_count; ++rank) {
    const std::uint32_t v = G::shape.order[rank];
    if (!node_reads_any<G>(v, hashes)) continue;
    const node_entry& e = storage.entries[G::shape.position[v]];
    e.ops->update(e.body, e.storage, &st, storage.handles[v], native::param_target::on_template(),
                  G::shape.names[v], hashes);
  }
}

/// Nested graphs: the launch of every node reading one of the parameters,
/// checked before a rebind changes anything (see node_ops::check_launch).
template <class G, class Root>
void check_reader_launches(graph_storage<G>& storage, lowering_state& st, param_hashes hashes) {
  for (std::uint32_t rank = 0; rank < G::node_count; ++rank) {
    const std::uint32_t v = G::shape.order[rank];
    const node_entry& e = storage.entries[G::shape.position[v]];
    if (!e.ops || !e.ops->check_launch || !node_reads_any<G>(v, hashes)) continue;
    e.ops->check_launch(e.body, e.storage, &st, G::shape.names[v], hashes);
  }
}

// ----------------------------------------------------------------- spec --
// Written through cudag::spec_writer, whose functions are compiled in the
// library: asking for a spec instantiates none of the spec's containers here.
template <class Body>
[[gnu::noinline]] void write_node(spec_writer& w, std::string_view name, const Body& body) {
  body.write_spec(w, name);
}
inline void write_node(spec_writer&, std::string_view, const edge_body&) noexcept {}

template <std::size_t... I, class... T>
[[gnu::noinline]] CUDAG_DSL_STRAIGHT_LINE_GLUE void write_chunk(
    const tuple_chunk<std::index_sequence<I...>, T...>& items, spec_writer& w,
    const std::string_view* names) {
  (write_node(w, names[I], static_cast<const tuple_leaf<I, T>&>(items).value), ...);
}
template <class TC>
void write_chunk_of_nodes(const TC& items, spec_writer& w, const std::string_view* names) {
  if constexpr (chunk_has_nodes<TC>) write_chunk(items, w, names);
}
template <std::size_t... C, class... TC>
CUDAG_DSL_STRAIGHT_LINE_GLUE void write_items(const chunk_set<std::index_sequence<C...>, TC...>& items,
                                              spec_writer& w, const std::string_view* names) {
  (write_chunk_of_nodes(chunk_at<C>(items), w, names), ...);
}

/// Nodes in declaration order, then their dependencies, the parameters and
/// the conditions this graph's conditional nodes test.
template <class G>
void write_graph(const G& graph, spec_writer w) {
  constexpr const auto& s = G::shape;
  w.reserve(G::node_count);
  // Each item's name by position (an edge item's is empty), from the shape:
  // reading items_info at run time would emit every item's description.
  std::array<std::string_view, G::items_info.size()> item_names{};
  for (std::size_t v = 0; v < G::node_count; ++v) item_names[s.position[v]] = s.names[v];
  write_items(graph.items, w, item_names.data());
  for (std::size_t v = 0; v < G::node_count; ++v) {
    // Kinds where a node has a typed dependency (as the builder keeps them).
    bool typed = false;
    if constexpr (s.dep_kinds.size() != 0)
      for (std::uint32_t k = s.dep_begin[v]; k < s.dep_begin[v + 1]; ++k)
        typed = typed || s.dep_kinds[k] != edge_kind::full;
    for (std::uint32_t k = s.dep_begin[v]; k < s.dep_begin[v + 1]; ++k) {
      if constexpr (s.dep_kinds.size() != 0)
        if (typed) {
          w.depend(v, s.names[s.deps[k]], s.dep_kinds[k]);
          continue;
        }
      w.depend(v, s.names[s.deps[k]]);
    }
  }
  for (const ref_info& p : s.params) w.param(p.name, p.runtime_type());
  if constexpr (G::shape.conditions.size() != 0)  // else the table is empty
    for (std::size_t v = 0; v < G::node_count; ++v) {
      if (s.owned_condition[v] == 0) continue;
      const ref_info& c = s.conditions[s.condition_slot(s.owned_condition[v])];
      w.condition(c.name, c.default_value, c.assign_default);
    }
}

}  // namespace detail

/// The graph as a cudag::graph_spec, so that check(), DOT and the analyses
/// of the run-time layers apply to it.
/// With a top-level problem, returns its error type instead (see or_error).
template <class... Items>
[[nodiscard]] detail::or_error<detail::top_level_error_t<graph_t<Items...>>, graph_spec> to_spec(
    const graph_t<Items...>& graph, std::string_view name = "graph")
#if CUDAG_DSL_DEVICE_PASS
{
  (void)graph, (void)name;
  detail::device_pass_stub();
}
#else
{
  if constexpr (!std::is_void_v<detail::top_level_error_t<graph_t<Items...>>>) {
    (void)graph, (void)name;
    detail::returns_error();
  } else {
    graph_spec out;
    spec_writer w(out);
    w.set_name(name);
    detail::write_graph(graph, w);
    return out;
  }
}
#endif

/// A graph variable whose declaration was refused (refused_graph): its
/// error is already reported there, so a use adds none. graph()'s result
/// used directly is refused here, naming the problem's type.
template <detail::refused_graph_type E>
graph_spec to_spec(const E&, std::string_view = "graph") {
  return {};
}
template <detail::refused_graph_type E>
graph_spec to_spec(const E&&, std::string_view = "graph") = delete;

}  // namespace cudag::dsl
