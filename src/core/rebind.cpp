#include "cudag/rebind.hpp"

#include <algorithm>

namespace cudag {

rebind_path apply_rebind(exec_core& core, rebind_nodes& nodes, std::span<const std::uint32_t> dirty,
                         rebind_state& state) {
  if (dirty.empty()) return rebind_path::none;
  bool must_update_whole = false;
  std::size_t top_level = dirty.size();
  if (nodes.any_needs_whole_update()) {
    top_level = 0;
    for (const std::uint32_t v : dirty) {
      if (nodes.needs_whole_update(v)) must_update_whole = true;
      else ++top_level;
    }
  }
  const bool any_captured = nodes.any_captured();
  const auto captured = [&](std::uint32_t v) { return any_captured && nodes.captured(v); };
  const bool whole =
      must_update_whole ||
      (state.policy == rebind_policy::automatic
           ? prefer_whole_graph_update(top_level, nodes.top_level_count())
           : state.policy == rebind_policy::whole_graph_update);
  const cudaGraphExec_t exec = core.native_exec();
  if (!whole) {
    for (const std::uint32_t v : dirty) {
      nodes.push(v, native::param_target::on_exec(exec));
      if (!captured(v)) state.template_stale[v] = true;
    }
    return rebind_path::node_setters;
  }
  // The template goes whole onto the exec: first bring up to date the nodes
  // that earlier rebinds changed on the exec alone (those changed now are
  // sent below anyway). A template shared with another exec may hold that
  // exec's values anywhere: every node is sent (captured nodes excepted:
  // their recording goes to the exec).
  const bool all_stale = core.template_shared();
  for (std::uint32_t v = 0; v < state.template_stale.size(); ++v) {
    if (!state.template_stale[v] && !(all_stale && !captured(v))) continue;
    state.template_stale[v] = false;
    if (!std::binary_search(dirty.begin(), dirty.end(), v))
      nodes.push(v, native::param_target::on_template());
  }
  bool template_changed = false;
  for (const std::uint32_t v : dirty) {
    const bool recorded = captured(v);
    nodes.push(v, recorded ? native::param_target::on_exec(exec) : native::param_target::on_template());
    template_changed |= !recorded;
  }
  if (template_changed) {
    native::update_exec(exec, core.native_graph(),
                        [&](cudaGraphNode_t n) { return nodes.name_of(n); });
    if (any_captured) nodes.restore_captured(exec);
  }
  return rebind_path::whole_graph_update;
}

}  // namespace cudag
