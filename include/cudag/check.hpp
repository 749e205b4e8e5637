#pragma once
// Layer 2: checks of a spec with Boost.Graph, on the CPU, before any CUDA
// call; and analyses of its shape. Every rejection names the nodes at fault.
//
// Edges run from a dependency to its dependent: "a -> b" means a runs before b.
//
// Nested nodes are named by path from the top-level graph: "outer/inner" for a
// node of a child graph or of the one body of an if/while node, and
// "branch[1]/inner" for a node of body 1 of an if_else or switch node.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudag/bindings.hpp"
#include "cudag/error.hpp"
#include "cudag/resolved_graph.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// A spec that cudag refuses. what() is a readable sentence; nodes() names
/// the nodes involved (the cycle in order, the edge's two ends, ...).
/// Graph-nested nodes are named by path: "loop/body_kernel". error::node()
/// is the first of nodes(), or "" when the problem is not about a node (an
/// unused condition, a stray binding).
class check_error : public error {
 public:
  check_error(std::string message, std::vector<std::string> nodes);
  [[nodiscard]] const std::vector<std::string>& nodes() const noexcept { return nodes_; }

 private:
  std::vector<std::string> nodes_;
};

/// Throws check_error on the first problem found. Per graph (the top-level one,
/// then children and bodies in declaration order):
/// - structure: empty or duplicate node names, a dependency on an unknown node
///   or the same dependency listed twice, a cycle (printed as "a -> b -> a");
/// - declarations: a parameter or condition declared twice in one graph, or a
///   parameter declared with two different types in nested graphs (bindings
///   are by name, so no value could satisfy both);
/// - values: a param_ref/condition_ref to nothing declared in the node's graph
///   or an enclosing one; a parameter whose declared type does not bind to the
///   type its consumer expects; a literal whose size differs from its type's;
///   a grid_rule on an undeclared or non-integral parameter;
/// - node kinds: a null kernel function, a memset element size other than
///   1, 2 or 4 or a zero width, a child node without a graph, kinds CUDA
///   forbids inside conditional bodies (host, event record/wait, mem
///   alloc/free; also inside children nested in a body), a conditional with
///   the wrong number of bodies (if: 1, if_else: 2, while: 1, switch: >= 1) or
///   an undeclared condition;
/// - conditions: a declared condition that no conditional node uses;
/// - buffers (names are unique in the whole spec; a buffer is visible in the
///   graph of its mem_alloc node and graphs nested in it): a buffer_ref to a
///   buffer no visible mem_alloc produces, a buffer allocated or freed twice or
///   freed but never allocated, a user (mem_free counts as the last use) not
///   ordered after the alloc node or not ordered before the free node. A user
///   nested in a child or body is ordered by its enclosing node.
/// - races (cudag/memory_access.hpp): two nodes of one graph that touch the
///   same bytes, at least one of them writing, with no path between them in
///   either direction ("race: 'scale' writes 'x' while 'axpy' reads it, and
///   no path orders them"); a nested node's access counts, in every
///   enclosing graph, as its enclosing node's. With bindings, pointer
///   parameters bound to one address are one memory (an alias).
/// Nesting deeper than 64 graphs (a child graph that contains itself
/// reaches it) is refused without recursing further.
/// Cost: O(V + E) for the structure (names hashed once into a flat table a
/// graph, Kahn's order over a hierarchical bitset of ready nodes), plus per
/// buffer one sweep over the nodes ranked between its alloc and its users,
/// and one between its users and its free. Random DAG of 10^6 nodes (half of
/// them kernels) and 4 * 10^6 edges: about 0.8 s of one core of an H100 host,
/// memory beyond the spec about 0.2x the spec's (bench/check/bench_check,
/// docs/bad-input.md).
void check(const graph_spec& spec);

/// check(spec), then: every parameter declared anywhere in the spec bound
/// exactly once, with a type that binds_to the declared one (T* for const T*),
/// and no binding for an undeclared parameter.
void check(const graph_spec& spec, std::span<const binding> bindings);

/// check() of a resolved graph: the same rules, the same messages, without
/// looking its top-level names up again.
void check(const resolved_graph& graph);
void check(const resolved_graph& graph, std::span<const binding> bindings);

/// Node indices in a deterministic topological order: Kahn's algorithm,
/// taking among ready nodes the one declared first. Throws check_error on a
/// cycle, an unknown dependency or an empty or duplicate name.
[[nodiscard]] std::vector<std::size_t> topological_order(const graph_spec& spec);
/// The same for a resolved graph: the reversal of its dependencies and
/// Kahn's sort, no name looked up (a cycle is refused, naming it).
[[nodiscard]] std::vector<std::size_t> topological_order(const resolved_graph& graph);

/// Two nodes that touch the same memory, one of them writing, with no path
/// between them (what check() refuses first; analyze() lists them all).
struct race_report {
  std::string first;   ///< path of the node declared first in the graph where they meet
  std::string second;
  access_mode first_access = access_mode::read_write;
  access_mode second_access = access_mode::read_write;
  /// "'x'", "buffer 'tmp'", "bytes [0, 512) of buffer 'tmp'", "'x' and 'y'
  /// (bound to the same address, 0x...)": the bytes both touch.
  std::string memory;
  std::string message;  ///< check()'s text
};

struct graph_analysis {
  std::vector<std::size_t> order;  ///< topological_order()
  /// Nodes on the longest dependency chain (0 for an empty graph).
  std::size_t critical_path = 0;
  /// Most nodes at one depth level, where a node's depth is the number of
  /// nodes on the longest chain ending at it (sources have depth 1). Nodes at
  /// one level never depend on each other, so this is a lower bound of the
  /// graph's parallelism.
  std::size_t width = 0;
  /// Edges (from, to) implied by other paths: removable without changing the
  /// order. Listed by dependent in declaration order, then by dependency order.
  /// Only a path whose first edge is full implies an edge (a programmatic or
  /// launch-completion edge lets its kernel start before the upstream one
  /// completes): a full edge beside paths that all begin with such an edge is
  /// kept, and a programmatic or launch-completion edge beside a path that
  /// begins with a full edge is listed (its kernel starts after the upstream
  /// one completed anyway, so the early launch it allows never happens).
  std::vector<std::pair<std::string, std::string>> redundant_edges;
  /// Every race of the whole graph (children and bodies included), each pair
  /// of nodes and memory once, by graph and memory in order of first use.
  std::vector<race_report> races;
};

struct analyze_options {
  /// The other analyses are linear. Redundant edges: where edges join nodes
  /// close in the order (chains, layers, pipelines), about O(V + E); where
  /// many edges are long, up to about V * E / 128 word operations (bitset
  /// reachability). Off: redundant_edges stays empty.
  bool redundant_edges = true;
  /// Above this many word operations (2^32: a few seconds), the analysis
  /// throws cudag::error saying so, before the costly part, instead of
  /// running for minutes (10^6 nodes and 4 * 10^6 random edges need 3 * 10^10).
  std::uint64_t redundant_edge_work_limit = std::uint64_t{1} << 32;
  /// Every race (check()'s race rule, every pair rather than the first).
  bool races = true;
  /// With these bindings, pointer parameters bound to one address are one
  /// memory (the aliases instantiate() refuses).
  std::span<const binding> bindings = {};
};

/// Shape analyses of the top-level graph (children and bodies count as one node).
[[nodiscard]] graph_analysis analyze(const graph_spec& spec);
[[nodiscard]] graph_analysis analyze(const graph_spec& spec, analyze_options options);

/// Only the redundant (transitively implied) edges of the top-level graph,
/// under analyze_options' default work limit.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> redundant_edges(
    const graph_spec& spec);
[[nodiscard]] std::vector<std::pair<std::string, std::string>> redundant_edges(
    const graph_spec& spec, std::uint64_t work_limit);

}  // namespace cudag
