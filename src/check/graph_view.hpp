#pragma once
// One graph of a spec (the top-level graph, a child graph or a conditional
// body) as a Boost.Graph DAG: node names resolved once through a hash map,
// dependencies as edges dependency -> dependent, and the deterministic
// topological order. Constructing a view is the structural check of that graph.
//
// The graph is two compressed_sparse_row_graphs rather than an
// adjacency_list: a spec does not change while it is checked, so the edges
// are built once into flat arrays, which is a few allocations instead of one
// per vertex and walks memory in order; that matters at a million nodes and
// four million edges. One holds each node's dependencies (v -> u when v
// depends on u) in declared order, resolved straight into its arrays, so
// that an edge's index is its dependency slot; the other, each node's
// dependents (u -> v), is its reverse (csr.hpp builds both arrays, Boost.Graph
// holds them).
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/spec.hpp"
#include "csr.hpp"
#include "dependency_plan.hpp"
#include "name_index.hpp"

namespace cudag::check_detail {

/// v -> u for each dependency u of v, in declared order: edge index == slot.
using dependency_graph =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                       boost::no_property, std::uint32_t, std::uint32_t>;
/// u -> v for each node v that depends on u, in increasing order of v.
using dependent_graph = dependency_graph;

class graph_view {
 public:
  /// Resolves names and dependencies and orders the nodes. Throws check_error
  /// on an empty or duplicate name, an unknown or repeated dependency, or a
  /// cycle. `path_prefix` ("" or "loop/") names nested nodes; `description`
  /// ("the top-level graph", "the body of 'loop'") names the graph itself.
  /// The spec must outlive the view (names are viewed, not copied).
  /// `enclosing`, the view of the graph around this one (if any), only
  /// sharpens the message for a dependency on a node of an outer graph.
  graph_view(const graph_spec& spec, std::string path_prefix, std::string description,
             const graph_view* enclosing = nullptr);
  /// The view of a graph whose dependencies were resolved (resolved_graph):
  /// no name is looked up; only the order is computed (and a cycle refused).
  graph_view(const graph_spec& spec, const resolved_dependencies& resolved, std::string path_prefix,
             std::string description, const graph_view* enclosing = nullptr);

  [[nodiscard]] const graph_spec& spec() const noexcept { return *spec_; }
  /// Out-edges of v: its dependencies, in declared order (edge index == slot).
  [[nodiscard]] const dependency_graph& dependencies() const noexcept { return dependencies_; }
  /// Out-edges of u: the nodes that depend on it, in declaration order.
  /// Built on first use where Kahn's sort did not need it (a graph declared
  /// in dependency order): the checks of most graphs never ask. Like the
  /// sweeps, not for two threads at once: a view belongs to one check.
  [[nodiscard]] const dependent_graph& dependents() const;
  [[nodiscard]] std::size_t size() const noexcept { return spec_->nodes.size(); }
  [[nodiscard]] std::size_t edge_count() const noexcept { return edge_count_; }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  [[nodiscard]] const std::string& path_prefix() const noexcept { return path_prefix_; }

  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const;
  /// The node's name by path from the top-level graph.
  [[nodiscard]] std::string path(std::size_t index) const;

  /// Kahn's order, lowest declaration index first among ready nodes.
  [[nodiscard]] const std::vector<std::size_t>& order() const noexcept { return order_; }
  /// Position of each node in order().
  [[nodiscard]] const std::vector<std::uint32_t>& rank() const noexcept { return rank_; }
  /// First dependency slot of each node (size() + 1 entries): node v's k-th
  /// dependency is slot first_slot()[v] + k.
  [[nodiscard]] const std::vector<std::uint32_t>& first_slot() const noexcept {
    return first_slot_;
  }

  /// The nodes of kind child, conditional, mem_alloc or mem_free, in
  /// declaration order (found while the names are indexed): what the spec
  /// tree and the passes that concern only those kinds visit.
  [[nodiscard]] const std::vector<std::uint32_t>& special_nodes() const noexcept {
    return special_nodes_;
  }

  /// True when a path of one or more edges leads from `from` to `to`.
  [[nodiscard]] bool reaches(std::size_t from, std::size_t to) const;

  /// The same, searching back from `to` and stopping once `from` is found:
  /// what a query between two nodes close in the order costs little.
  /// `from_rank` and `to_rank` are their ranks where the caller holds them
  /// (rank() otherwise: two reads of memory a query need not make).
  [[nodiscard]] bool reaches_back(std::size_t from, std::size_t to) const {
    return reaches_back(from, to, rank_[from], rank_[to]);
  }
  [[nodiscard]] bool reaches_back(std::size_t from, std::size_t to, std::uint32_t from_rank,
                                  std::uint32_t to_rank) const;

  /// Hints the memory a query ending at `v` reads first (its dependency
  /// row's bounds, then the row): a caller that knows its next queries asks
  /// for their rows ahead, as the nodes of a large graph are past the caches.
  void prefetch_row_bounds(std::size_t v) const noexcept {
    __builtin_prefetch(dependencies_.m_forward.m_rowstart.data() + v);
  }
  void prefetch_row(std::size_t v) const noexcept {
    __builtin_prefetch(dependencies_.m_forward.m_column.data() + dependencies_.m_forward.m_rowstart[v]);
  }

  /// Marks every node reachable from `source` (source included) whose rank is
  /// at most `max_rank`; is_marked() answers until the next sweep.
  void sweep_forward(std::size_t source, std::uint32_t max_rank) const;
  /// Marks every node that reaches `target` (target included) whose rank is
  /// at least `min_rank`.
  void sweep_backward(std::size_t target, std::uint32_t min_rank) const;
  [[nodiscard]] bool is_marked(std::size_t index) const noexcept {
    return marks_[index] == mark_stamp_;
  }

 private:
  /// Indexes the names; in the same pass over the nodes, counts their
  /// dependencies (first_slot_, edge_count_) and lists special_nodes_.
  void index_names();
  /// Lists special_nodes_ (a resolved graph's names need no index).
  void find_special_nodes();
  /// The names' index, built on first use where the graph was resolved.
  const name_index& names() const;
  /// Builds dependencies_; returns the dependents' rows, or no rows where
  /// every dependency was declared before its dependent (no sort needed).
  csr_rows build_edges();
  void order_nodes(const csr_rows& dependents);
  [[noreturn]] void throw_cycle() const;
  void next_sweep() const;

  [[noreturn]] void throw_unknown_dependency(std::uint32_t dependent,
                                             const std::string& dependency) const;

  const graph_spec* spec_;
  const graph_view* enclosing_;
  std::string path_prefix_;
  std::string description_;
  mutable name_index index_by_name_;
  mutable bool names_indexed_ = false;
  dependency_graph dependencies_;
  mutable dependent_graph dependents_;
  mutable bool has_dependents_ = false;
  std::size_t edge_count_ = 0;
  bool declared_in_order_ = true;  // every dependency declared before its dependent
  std::vector<std::uint32_t> first_slot_;
  std::vector<std::uint32_t> special_nodes_;
  std::vector<std::size_t> order_;
  std::vector<std::uint32_t> rank_;
  // Scratch for reachability sweeps: a node is marked when its stamp equals
  // the current one, so a sweep needs no clearing pass.
  mutable std::vector<std::uint32_t> marks_;
  mutable std::uint32_t mark_stamp_ = 0;
  mutable std::vector<std::uint32_t> stack_;
};

/// "the top-level graph" or "graph 'name'".
[[nodiscard]] std::string describe_top_level(const graph_spec& spec);

}  // namespace cudag::check_detail
