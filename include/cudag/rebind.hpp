#pragma once
// The one rebind algorithm, shared by the spec exec and the DSL exec: given
// the nodes whose values changed, either send each to the executable graph
// (one exec setter a node) or bring the template graph up to date and apply
// it whole (one cudaGraphExecUpdate), whichever the policy and the count
// say; nodes changed earlier on the exec alone are refreshed in the template
// first, and captured nodes get their latest recording back afterwards.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cudag/exec_core.hpp"
#include "cudag/native_nodes.hpp"

namespace cudag {

/// What apply_rebind needs from an exec of either front end. A node is an
/// index of the exec's own; indices follow node creation order.
class rebind_nodes {
 public:
  /// Nodes that count for the choice of path (the top-level graph's).
  [[nodiscard]] virtual std::size_t top_level_count() const noexcept = 0;
  /// The node lies in a child graph or conditional body, or holds one whose
  /// nodes changed: exec setters cannot reach it, the whole graph is updated.
  [[nodiscard]] virtual bool needs_whole_update(std::uint32_t node) const noexcept = 0;
  /// A captured node: its new recording goes to the exec in both paths (a
  /// template child node cannot take a graph).
  [[nodiscard]] virtual bool captured(std::uint32_t node) const noexcept = 0;
  /// Recomputes the node's native parameters from the current values and
  /// sends them to `to` (through the per-kind table).
  virtual void push(std::uint32_t node, native::param_target to) = 0;
  /// After a whole-graph update: gives every captured node its latest recording.
  virtual void restore_captured(cudaGraphExec_t exec) = 0;
  /// Names a node of the template graph, for a refused update.
  [[nodiscard]] virtual std::string name_of(cudaGraphNode_t node) const = 0;
  /// CUDA refused part of the rebind: puts every value it changed back as it
  /// was before (push() then sends the old values). Whether anything went
  /// back; false where the exec keeps no record of the values before.
  virtual bool restore_values() = 0;
  /// Whether any node needs a whole-graph update, or is captured: false
  /// spares apply_rebind the question for every changed node (a family of
  /// plain kernels, changed at every reshape).
  [[nodiscard]] virtual bool any_needs_whole_update() const noexcept { return true; }
  [[nodiscard]] virtual bool any_captured() const noexcept { return true; }

 protected:
  ~rebind_nodes() = default;
};

/// Whether a reshape (launch dimensions changed on `changed` of `top_level`
/// nodes) should go through one whole-graph update: template setters plus
/// cudaGraphExecUpdate beat one exec setter a node for launch changes from
/// a few nodes on (measured in bench/family/bench_family).
inline constexpr std::size_t reshape_update_minimum = 2;
[[nodiscard]] constexpr bool prefer_whole_graph_update_for_reshape(std::size_t changed,
                                                                   std::size_t top_level) noexcept {
  return changed >= reshape_update_minimum && changed * 8 >= top_level;
}

namespace detail {
/// Whether `items` holds `item`; constexpr, for the DSL's node kinds.
template <class Items, class Item>
[[nodiscard]] constexpr bool holds(const Items& items, const Item& item) noexcept {
  for (const auto& x : items)
    if (x == item) return true;
  return false;
}
}  // namespace detail

/// What an exec keeps between rebinds.
struct rebind_state {
  rebind_policy policy = rebind_policy::automatic;
  /// Per node: changed on the exec by a setter, not yet in the template.
  std::vector<bool> template_stale;
};

/// Applies a rebind that changed `dirty` (distinct nodes, creation order).
/// Throws cudag::error naming the node when CUDA refuses; the values then go
/// back (rebind_nodes::restore_values) and are sent again where the exec may
/// have taken the new ones, so that a refused rebind leaves the exec running
/// what it ran before, and the same rebind may be tried again.
rebind_path apply_rebind(exec_core& core, rebind_nodes& nodes, std::span<const std::uint32_t> dirty,
                         rebind_state& state);

}  // namespace cudag
