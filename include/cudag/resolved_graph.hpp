#pragma once
// A graph whose node names were resolved once: what the engine runs.
//
// graph_spec is the name-based interchange form (hand-written specs, import,
// files, the DSL's to_spec()): every dependency is a node's name, so every
// phase that reads one must look it up. A resolved_graph holds the same
// spec with the structure of its top-level graph checked (names present and
// unique, every dependency a node of the graph, none listed twice) and each
// dependency as the declaration index of its node, in one array with a range
// per node. check(), topological_order() and instantiate() take it without
// looking a name up; every message still names the nodes.
//
// Two ways make one, and only these, so that the indices can be trusted:
// - resolve(spec): the one resolver, for a spec written by name;
// - builder::resolve(): the builder's own indices, written as each edge was
//   added (no name is looked up after a node or edge is added).
//
// Stage of the design (docs/resolved-graph.md): dependencies and node names
// of the top-level graph are resolved; child graphs and conditional bodies,
// and the parameter, buffer and condition references of values, are still
// resolved by name when checked.
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
}

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
    return {deps_.data() + dep_begin_[index], deps_.data() + dep_begin_[index + 1]};
  }
  /// Every dependency, node by node: node v's are
  /// dependency_indices()[dependency_begin()[v] .. dependency_begin()[v + 1]).
  [[nodiscard]] std::span<const std::uint32_t> dependency_begin() const noexcept { return dep_begin_; }
  [[nodiscard]] std::span<const std::uint32_t> dependency_indices() const noexcept { return deps_; }

 private:
  friend resolved_graph resolve(graph_spec spec);
  friend class builder;
  friend struct detail::resolved_parts;
  resolved_graph(graph_spec spec, std::vector<std::uint32_t> dep_begin,
                 std::vector<std::uint32_t> deps) noexcept;

  graph_spec spec_;
  std::vector<std::uint32_t> dep_begin_;  ///< size() + 1 entries
  std::vector<std::uint32_t> deps_;
};

namespace detail {
/// The engine's access to a resolved graph's parts: an exec keeps the spec,
/// and checks it where it will live (the plans are keyed by its address).
struct resolved_parts {
  graph_spec spec;
  std::vector<std::uint32_t> dep_begin;
  std::vector<std::uint32_t> deps;

  static resolved_parts take(resolved_graph&& graph) noexcept {
    return {std::move(graph.spec_), std::move(graph.dep_begin_), std::move(graph.deps_)};
  }
};
}  // namespace detail

}  // namespace cudag
