#pragma once
// One graph's nodes in creation order with their dependencies as indices:
// all that lowering needs to walk a spec, without the Boost.Graph view the
// checks build.
#include <cstdint>
#include <span>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag::check_detail {

struct dependency_plan {
  std::vector<std::uint32_t> order;      ///< topological, lowest declaration index first
  std::vector<std::uint32_t> dep_begin;  ///< node v's dependencies: deps[dep_begin[v]..dep_begin[v+1])
  std::vector<std::uint32_t> deps;       ///< declaration indices, in each node's declared order
};

/// A top-level graph's dependencies as a resolved_graph holds them (names
/// known unique and non-empty, every dependency a node, none repeated).
struct resolved_dependencies {
  std::span<const std::uint32_t> begin;  ///< nodes + 1 entries
  std::span<const std::uint32_t> deps;
};

/// Throws check_error, naming the nodes, for a duplicate or unknown name or
/// a cycle.
[[nodiscard]] dependency_plan plan_dependencies(const graph_spec& spec);

}  // namespace cudag::check_detail
