#pragma once
// A graph whose node names were resolved once: what the engine runs.
//
// graph_spec is the name-based interchange form (hand-written specs, import,
// files, the DSL's to_spec()): every dependency is a node's name, so every
// phase that reads one must look it up. A resolved_graph holds the same
// spec with the structure of every graph of its tree checked (names present
// and unique, every dependency a node of its graph, none listed twice) and
// each dependency as the declaration index of its node, in one array with a
// range per node. check(), topological_order() and instantiate() take it without
// looking a name up; every message still names the nodes.
//
// Two ways make one, and only these, so that the indices can be trusted:
// - resolve(spec): the one resolver, for a spec written by name;
// - builder::resolve(): the builder's own indices, written as each edge was
//   added (no name is looked up after a node or edge is added).
//
// Nested graphs (child graphs, conditional bodies) are resolved too: every
// graph of the tree has its rows, in pre-order. Only a nested graph handed
// to a builder by name (a graph_spec) is not, and is resolved by name where
// it is checked; a builder given a resolved graph keeps its rows.
//
// Stage of the design (docs/resolved-graph.md): dependencies and node names
// are resolved; the parameter, buffer and condition references of values are
// still resolved by name when checked.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag {

class builder;
class resolved_graph;

/// Resolves the dependencies of `spec`'s top-level graph. Throws check_error,
/// with check()'s message naming the nodes, for an empty or duplicate name, a
/// dependency on an unknown node or one listed twice, or a cycle.
[[nodiscard]] resolved_graph resolve(graph_spec spec);

namespace detail {
struct resolved_parts;

/// The dependencies of every graph of a resolved graph's tree as
/// declaration indices: the top-level graph first, then the graphs nested in
/// it in pre-order (each node's in declaration order: a child's graph, a
/// conditional's bodies in order, each followed by the graphs nested in it),
/// which is the order check() visits them in. Each graph's rows start from 0.
class dependency_rows {
 public:
  /// A graph given by name, without rows: resolved by name when checked.
  static constexpr std::uint32_t by_name = ~std::uint32_t{0};

  /// How many graphs of the tree have an entry (the top level's at least);
  /// graphs past the last entry are resolved by name.
  [[nodiscard]] std::size_t graph_count() const noexcept { return graphs_.size(); }
  [[nodiscard]] bool resolved(std::size_t graph) const noexcept {
    return graph < graphs_.size() && graphs_[graph].begin_at != by_name;
  }
  /// Graph `graph`'s node v's dependencies are indices()[begin()[v] .. begin()[v + 1]).
  [[nodiscard]] std::span<const std::uint32_t> begin(std::size_t graph) const noexcept {
    const entry& e = graphs_[graph];
    return {begin_.data() + e.begin_at, std::size_t{e.nodes} + 1};
  }
  [[nodiscard]] std::span<const std::uint32_t> indices(std::size_t graph) const noexcept {
    const entry& e = graphs_[graph];
    return {deps_.data() + e.deps_at, begin_[e.begin_at + e.nodes]};
  }

  /// Appends the next graph's rows (`begin`: nodes + 1 entries from 0).
  void add(std::span<const std::uint32_t> begin, std::span<const std::uint32_t> deps);
  /// The first graph's rows, taken over rather than copied (empty rows only).
  void add_first(std::vector<std::uint32_t>&& begin, std::vector<std::uint32_t>&& deps);
  /// Appends the next graph, and the graphs nested in it, as by-name.
  void add_by_name(std::size_t graphs);
  /// Appends every graph of `nested` (a nested graph's own tree).
  void add(const dependency_rows& nested);

 private:
  struct entry {
    std::uint32_t begin_at = by_name;
    std::uint32_t deps_at = 0;
    std::uint32_t nodes = 0;
  };
  std::vector<entry> graphs_;
  std::vector<std::uint32_t> begin_;
  std::vector<std::uint32_t> deps_;
};

/// How many graphs `graph`'s tree holds: itself and every graph nested in
/// it (child graphs, conditional bodies), as check() counts its frames.
[[nodiscard]] std::size_t graphs_in_tree(const graph_spec& graph, std::size_t depth = 0);
}  // namespace detail

class resolved_graph {
 public:
  /// An empty graph named "graph".
  resolved_graph();

  /// The spec, by name: for the interchange functions (to_dot, diff, the
  /// spec writer) and for reading nodes.
  [[nodiscard]] const graph_spec& spec() const noexcept { return spec_; }
  [[nodiscard]] std::size_t size() const noexcept { return spec_.nodes.size(); }
  [[nodiscard]] const node& operator[](std::size_t index) const noexcept {
    return spec_.nodes[index];
  }
  /// Node `index`'s dependencies as declaration indices, in declared order.
  [[nodiscard]] std::span<const std::uint32_t> dependencies(std::size_t index) const noexcept {
    const std::span<const std::uint32_t> begin = rows_.begin(0);
    return rows_.indices(0).subspan(begin[index], begin[index + 1] - begin[index]);
  }
  /// Every dependency of the top-level graph, node by node: node v's are
  /// dependency_indices()[dependency_begin()[v] .. dependency_begin()[v + 1]).
  [[nodiscard]] std::span<const std::uint32_t> dependency_begin() const noexcept { return rows_.begin(0); }
  [[nodiscard]] std::span<const std::uint32_t> dependency_indices() const noexcept {
    return rows_.indices(0);
  }
  /// The dependencies of every graph of the tree, nested ones included.
  [[nodiscard]] const detail::dependency_rows& rows() const noexcept { return rows_; }

 private:
  friend resolved_graph resolve(graph_spec spec);
  friend class builder;
  friend struct detail::resolved_parts;
  resolved_graph(graph_spec spec, detail::dependency_rows rows) noexcept;

  graph_spec spec_;
  detail::dependency_rows rows_;
};

namespace detail {
/// The engine's access to a resolved graph's parts: an exec keeps the spec,
/// and checks it where it will live (the plans are keyed by its address).
struct resolved_parts {
  graph_spec spec;
  dependency_rows rows;

  static resolved_parts take(resolved_graph&& graph) noexcept {
    return {std::move(graph.spec_), std::move(graph.rows_)};
  }
};
}  // namespace detail

}  // namespace cudag
