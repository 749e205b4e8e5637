#pragma once
// A graph declaration: nodes and edges in any order, checked by the compiler.
//
//   constexpr auto g = graph(
//       kernel<"a", step>(1, 64, x), kernel<"b", step>(1, 64, x),
//       edge<"a", "b">);
//
// A duplicate name, an edge to an unknown node, a cycle, a parameter read with
// two types or a buffer used outside its alloc..free window stops the build
// with an error type that names the fault (cycle_through<"a -> b -> a">); the
// graph's own type is kept out of those names.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "cudag/dsl/flat_tuple.hpp"
#include "cudag/dsl/graph_nodes.hpp"
#include "cudag/dsl/node.hpp"
#include "cudag/dsl/shape.hpp"

namespace cudag::dsl {

// Never defined: each is the compile error for one kind of shape problem.
template <fixed_string Node>
struct duplicate_node_name;
template <fixed_string Edge>
struct unknown_node_in_edge;
template <fixed_string Path>
struct cycle_through;
template <fixed_string Parameter>
struct parameter_declared_with_two_types;
template <fixed_string Buffer>
struct buffer_allocated_twice;
template <fixed_string What>
struct buffer_used_outside_its_lifetime;

template <class... Items>
struct graph_t {
  static constexpr std::array<item_info, sizeof...(Items)> items_info{Items::info...};
  static constexpr shape_sizes sizes = measure_shape<measure_items(items_info)>(items_info);
  static constexpr auto shape = analyze_shape<sizes>(items_info);
  static constexpr std::size_t node_count = sizes.nodes;

  flat_tuple<Items...> items;
};

/// Turns a shape's first problem into a compile error naming it. Depends
/// only on the problem and its message, never on the graph's type.
template <shape_problem Problem, fixed_string Message>
consteval bool report_shape_problem() {
  if constexpr (Problem == shape_problem::duplicate_node)
    return sizeof(duplicate_node_name<Message>) == 0;
  else if constexpr (Problem == shape_problem::unknown_node_in_edge)
    return sizeof(unknown_node_in_edge<Message>) == 0;
  else if constexpr (Problem == shape_problem::parameter_type_conflict)
    return sizeof(parameter_declared_with_two_types<Message>) == 0;
  else if constexpr (Problem == shape_problem::cycle)
    return sizeof(cycle_through<Message>) == 0;
  else if constexpr (Problem == shape_problem::buffer_allocated_twice)
    return sizeof(buffer_allocated_twice<Message>) == 0;
  else if constexpr (Problem == shape_problem::buffer_outside_lifetime)
    return sizeof(buffer_used_outside_its_lifetime<Message>) == 0;
  return true;
}

/// Declares a graph from nodes and edge groups, in any order.
template <class... Items>
[[nodiscard]] constexpr auto graph(const Items&... items) {
  using G = graph_t<Items...>;
  static_assert(report_shape_problem<G::shape.problem,
                                     to_fixed<G::shape.message.size>(G::shape.message.view())>());
  return G{make_flat_tuple(items...)};
}

// --------------------------------------------------------------- storage --
/// Per-node lowering storage of a graph (argument values, node parameters,
/// host-call state) and the CUDA node handles, in one object.
template <class... Items>
struct graph_storage<graph_t<Items...>> {
  flat_tuple<typename storage_of_item<Items>::type...> items;
  std::array<cudaGraphNode_t, graph_t<Items...>::node_count> handles{};
};

// -------------------------------------------------------------- lowering --
template <class Body, class Root>
inline void lower_node(const Body& body, typename Body::storage& storage, lower_state<Root>& st,
                       cudaGraph_t target, cudaGraphNode_t* handles, std::uint32_t self,
                       const std::uint32_t* deps, std::size_t dep_count, std::string_view name,
                       cudaGraphNode_t* dep_handles) {
  for (std::size_t i = 0; i < dep_count; ++i) dep_handles[i] = handles[deps[i]];
  handles[self] = body.lower(storage, st, target, native::deps_span(dep_handles, dep_count), name);
}

template <class G, class Root, std::size_t... K>
void lower_in_order(const G& graph, graph_storage<G>& storage, lower_state<Root>& st,
                    cudaGraph_t target, std::index_sequence<K...>) {
  constexpr const auto& s = G::shape;
  std::array<cudaGraphNode_t, (s.max_deps > 0 ? s.max_deps : 1)> dep_handles{};
  (lower_node(get<s.position[s.order[K]]>(graph.items).body,
              get<s.position[s.order[K]]>(storage.items), st, target, storage.handles.data(),
              s.order[K], s.deps.data() + s.dep_begin[s.order[K]],
              s.dep_begin[s.order[K] + 1] - s.dep_begin[s.order[K]], s.names[s.order[K]],
              dep_handles.data()),
   ...);
}

/// Adds the graph's nodes to `target`, in topological order, each with its
/// dependency list: a straight walk decided by the compiler.
template <class G, class Root>
void lower_graph(const G& graph, graph_storage<G>& storage, lower_state<Root>& st,
                 cudaGraph_t target) {
  constexpr const auto& s = G::shape;
  // Conditions tested by this graph's conditional nodes live on this graph.
  for (std::size_t v = 0; v < G::node_count; ++v) {
    if (s.owned_condition[v] == 0) continue;
    const std::uint32_t slot = Root::shape.condition_slot(s.owned_condition[v]);
    const ref_info& c = Root::shape.conditions[slot];
    const_cast<cudaGraphConditionalHandle*>(st.values.conditions)[slot] =
        native::create_condition(target, c.default_value, c.assign_default, s.names[v]);
  }
  lower_in_order(graph, storage, st, target, std::make_index_sequence<G::node_count>{});
}

// ------------------------------------------------------------- rebinding --
/// Nodes of G (top level) that read the parameter with this hash, directly or
/// inside their bodies.
template <class G, std::uint64_t Hash>
consteval std::size_t reader_count() {
  std::size_t n = 0;
  for (std::size_t v = 0; v < G::node_count; ++v) {
    bool reads = false;
    for (const ref_info& r : G::items_info[G::shape.position[v]].refs)
      reads |= r.kind == ref_kind::param && r.hash == Hash;
    n += reads;
  }
  return n;
}
template <class G, std::uint64_t Hash>
consteval auto readers_of() {
  std::array<std::uint32_t, reader_count<G, Hash>()> out{};
  std::size_t k = 0;
  for (std::uint32_t v = 0; v < G::node_count; ++v) {
    bool reads = false;
    for (const ref_info& r : G::items_info[G::shape.position[v]].refs)
      reads |= r.kind == ref_kind::param && r.hash == Hash;
    if (reads) out[k++] = v;
  }
  return out;
}

template <std::uint64_t Hash, class Body, class Root>
inline void update_node(const Body& body, typename Body::storage& storage, lower_state<Root>& st,
                        cudaGraphNode_t node, update_target target, std::string_view name) {
  body.template update<Hash>(storage, st, node, target, name);
}

template <std::uint64_t Hash, class G, class Root, std::size_t... K>
void update_listed(const G& graph, graph_storage<G>& storage, lower_state<Root>& st,
                   update_target target, std::index_sequence<K...>) {
  static constexpr auto readers = readers_of<G, Hash>();
  constexpr const auto& s = G::shape;
  (update_node<Hash>(get<s.position[readers[K]]>(graph.items).body,
                     get<s.position[readers[K]]>(storage.items), st,
                     storage.handles[readers[K]], target, s.names[readers[K]]),
   ...);
}

/// Recomputes every node that reads parameter `Hash` and sends it to `target`.
template <std::uint64_t Hash, class G, class Root>
void update_readers(const G& graph, graph_storage<G>& storage, lower_state<Root>& st,
                    update_target target) {
  update_listed<Hash>(graph, storage, st, target,
                      std::make_index_sequence<reader_count<G, Hash>()>{});
}

// ----------------------------------------------------------------- spec --
template <class G, std::size_t... V>
void nodes_to_spec(const G& graph, graph_spec& out, std::index_sequence<V...>) {
  constexpr const auto& s = G::shape;
  (out.nodes.push_back(node{std::string(s.names[V]), get<s.position[V]>(graph.items).body.spec(), {}}),
   ...);
}

/// The plain-data spec of a DSL graph (nodes in declaration order).
template <class G>
[[nodiscard]] graph_spec graph_to_spec(const G& graph, std::string name) {
  constexpr const auto& s = G::shape;
  graph_spec out;
  out.name = std::move(name);
  out.nodes.reserve(G::node_count);
  nodes_to_spec(graph, out, std::make_index_sequence<G::node_count>{});
  for (std::size_t v = 0; v < G::node_count; ++v)
    for (std::uint32_t k = s.dep_begin[v]; k < s.dep_begin[v + 1]; ++k)
      out.nodes[v].deps.emplace_back(s.names[s.deps[k]]);
  for (const ref_info& p : s.params) out.params.push_back({std::string(p.name), p.runtime_type()});
  for (std::size_t v = 0; v < G::node_count; ++v) {
    if (s.owned_condition[v] == 0) continue;
    const ref_info& c = s.conditions[s.condition_slot(s.owned_condition[v])];
    bool seen = false;
    for (const condition_decl& d : out.conditions) seen |= d.name == c.name;
    if (!seen) out.conditions.push_back({std::string(c.name), c.default_value, c.assign_default});
  }
  return out;
}

/// The graph as a cudag::graph_spec, so that check(), DOT and the analyses
/// of the run-time layers apply to it.
template <class... Items>
[[nodiscard]] graph_spec to_spec(const graph_t<Items...>& graph, std::string name = "graph") {
  return graph_to_spec(graph, std::move(name));
}

}  // namespace cudag::dsl
