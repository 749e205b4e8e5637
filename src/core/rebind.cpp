#include "cudag/rebind.hpp"

#include <algorithm>

namespace cudag {

namespace {

/// CUDA refused part of a rebind. The exec may hold some new values (node
/// setters sent before the refusal, or a whole update that went through
/// before its captured nodes were restored); the template may hold new
/// values of every changed node; a host node's callable that the exec still
/// runs may have been retired. Put the old values back everywhere the new
/// ones may have gone, and keep what was retired alive with the exec. Best
/// effort: a second failure leaves the first error standing.
void undo_refused_rebind(exec_core& core, rebind_nodes& nodes, std::span<const std::uint32_t> dirty,
                         rebind_state& state, std::size_t retired_before, bool exec_updated) noexcept {
  try {
    for (auto& object : core.retired()->take_from(retired_before)) core.keep_alive(std::move(object));
    if (!nodes.restore_values()) return;
    const cudaGraphExec_t exec = core.native_exec();
    for (const std::uint32_t v : dirty)
      if (!nodes.captured(v)) state.template_stale[v] = true;
    if (exec_updated) {  // the new values reached the exec whole: they leave it the same way
      for (const std::uint32_t v : dirty)
        if (!nodes.captured(v)) {
          nodes.push(v, native::param_target::on_template());
          state.template_stale[v] = false;
        }
      native::update_exec(exec, core.native_graph(),
                          [&](cudaGraphNode_t n) { return nodes.name_of(n); });
      nodes.restore_captured(exec);
      return;
    }
    for (const std::uint32_t v : dirty)
      if (!nodes.needs_whole_update(v)) nodes.push(v, native::param_target::on_exec(exec));
  } catch (...) {
  }
}


rebind_path send_rebind(exec_core& core, rebind_nodes& nodes, std::span<const std::uint32_t> dirty,
                        rebind_state& state, bool& exec_updated) {
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
    if (!std::binary_search(dirty.begin(), dirty.end(), v))
      nodes.push(v, native::param_target::on_template());
    state.template_stale[v] = false;  // (only once sent: a refusal leaves the rest stale)
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
    exec_updated = true;
    if (any_captured) nodes.restore_captured(exec);
  }
  return rebind_path::whole_graph_update;
}
}  // namespace

rebind_path apply_rebind(exec_core& core, rebind_nodes& nodes, std::span<const std::uint32_t> dirty,
                         rebind_state& state) {
  if (dirty.empty()) return rebind_path::none;
  const native::same_device_batch batch(core.kernel_functions());
  const std::size_t retired_before = core.retired()->size();
  bool exec_updated = false;
  try {
    const rebind_path path = send_rebind(core, nodes, dirty, state, exec_updated);
    core.upload_after_change();  // a device launch runs what was uploaded
    return path;
  } catch (...) {
    undo_refused_rebind(core, nodes, dirty, state, retired_before, exec_updated);
    throw;
  }
}

}  // namespace cudag
