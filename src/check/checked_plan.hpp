#pragma once
// check() with what lowering needs as its by-product: each graph's
// dependency plan (creation order and dependencies as indices), taken from
// the views the checks built, so that lowering resolves no name again.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>

#include "cudag/bindings.hpp"
#include "cudag/resolved_graph.hpp"
#include "cudag/spec.hpp"
#include "dependency_plan.hpp"

namespace cudag::check_detail {

/// The plan of every graph of a checked spec (nested ones included), by
/// the graph's address: valid while the spec is neither changed nor moved.
/// With the sizes lowering reserves, counted by the checks as they read
/// every node and value, so that lowering walks the spec once.
struct checked_plans {
  std::unordered_map<const graph_spec*, dependency_plan> graphs;
  std::size_t total_nodes = 0;   ///< nodes of every graph, nested ones included
  std::uint32_t value_slots = 0;  ///< values every node reads (see for_each_value)
  std::size_t value_bytes = 0;    ///< value_storage's bytes for them (see value_room)

  [[nodiscard]] const dependency_plan& at(const graph_spec* graph) const { return graphs.at(graph); }
};

/// Bytes value_storage gives one value: its type's size or its literal's,
/// at least a pointer, in 16-byte steps.
[[nodiscard]] constexpr std::size_t value_room(std::size_t type_size, std::size_t literal_size) noexcept {
  std::size_t n = type_size > literal_size ? type_size : literal_size;
  if (n < sizeof(void*)) n = sizeof(void*);
  return (n + 15) & ~std::size_t(15);
}

/// check(spec, bindings), returning the plans; with `resolved`, the
/// dependencies of each graph of the tree as a resolved_graph gave them
/// (graphs without rows resolved by name).
[[nodiscard]] checked_plans check_and_plan(const graph_spec& spec, std::span<const binding> bindings,
                                           const cudag::detail::dependency_rows* resolved = nullptr);

}  // namespace cudag::check_detail
