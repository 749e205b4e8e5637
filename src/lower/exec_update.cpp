// exec::update: moves an executable graph to a changed spec of the same
// topology, pairing nodes by name (their path), not by creation order, so
// that two specs built in different orders update in place. A node whose
// resolved values did not change costs no driver call; the changed ones go
// through the shared rebind algorithm (exec setters or one whole-graph
// update). Everything is computed before anything changes: a refusal leaves
// the exec as it was.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "../check/checked_plan.hpp"
#include "cudag/check.hpp"
#include "cudag/diff.hpp"
#include "cudag/rebind.hpp"

#include "exec_state.hpp"

namespace cudag {

using detail::node_state;
using detail::param_state;

namespace {

/// Refuses the update, naming the node; the message ends with what changed
/// between the exec's spec and `next` (the first lines of their diff).
[[noreturn]] void refuse(const exec::impl& st, const graph_spec& next, const std::string& node,
                         const std::string& why) {
  std::string message = "update: graph '" + st.spec.name + "' cannot be updated in place: " + why +
                        "; CUDA updates only a graph of the same topology (instantiate again, or "
                        "call update_or_reinstantiate)";
  std::string changes = diff(st.spec, next).text(8);
  if (!changes.empty()) {
    changes.pop_back();  // the last line's '\n'
    message += "\nwhat changed:\n" + changes;
  }
  throw error(message, cudaErrorGraphExecUpdateFailure, {}, node);
}

/// Every node of `g` by path, nested ones included.
void index_by_path(const graph_spec& g, const std::string& prefix,
                   std::unordered_map<std::string, const node*>& out) {
  for (const node& n : g.nodes) {
    std::string path = prefix + n.name;
    if (const auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      index_by_path(*c->graph, nested_prefix(path, n), out);
    if (const auto* c = std::get_if<conditional_node>(&n.params))
      for (std::size_t b = 0; b < c->bodies.size(); ++b)
        index_by_path(c->bodies[b], nested_prefix(path, n, b), out);
    out.emplace(std::move(path), &n);
  }
}

/// Every condition declared in `g` and its nested graphs, by its graph's
/// prefix and name: "go", "stage/again".
void index_conditions(const graph_spec& g, const std::string& prefix,
                      std::map<std::string, const condition_decl*>& out) {
  for (const condition_decl& c : g.conditions) out.emplace(prefix + c.name, &c);
  for (const node& n : g.nodes) {
    if (const auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      index_conditions(*c->graph, nested_prefix(prefix + n.name, n), out);
    if (const auto* c = std::get_if<conditional_node>(&n.params))
      for (std::size_t b = 0; b < c->bodies.size(); ++b)
        index_conditions(c->bodies[b], nested_prefix(prefix + n.name, n, b), out);
  }
}

/// A condition's default and reset are fixed when its handle is made, at
/// lowering: an update cannot change them, so it refuses rather than keep
/// the old ones.
void require_same_conditions(const exec::impl& st, const graph_spec& next) {
  std::map<std::string, const condition_decl*> was, now;
  index_conditions(st.spec, "", was);
  index_conditions(next, "", now);
  for (const auto& [name, c] : now) {
    const auto it = was.find(name);
    if (it == was.end())
      refuse(st, next, {}, "condition '" + name + "' is new in the changed spec");
    if (it->second->default_value != c->default_value ||
        it->second->assign_default != c->assign_default)
      refuse(st, next, {},
             "condition '" + name + "' changes its default (" +
                 std::to_string(it->second->default_value) + (it->second->assign_default ? ", reset" : "") +
                 " -> " + std::to_string(c->default_value) + (c->assign_default ? ", reset" : "") +
                 "), which is fixed when its handle is made");
  }
  if (now.size() != was.size()) refuse(st, next, {}, "the changed spec declares fewer conditions");
}

/// A node's dependencies with their kinds, in name order.
std::vector<std::pair<std::string_view, edge_kind>> sorted_deps(const node& n) {
  std::vector<std::pair<std::string_view, edge_kind>> deps;
  deps.reserve(n.deps.size());
  for (std::size_t k = 0; k < n.deps.size(); ++k) deps.emplace_back(n.deps[k], n.dependency_kind(k));
  std::sort(deps.begin(), deps.end());
  return deps;
}

/// What a whole-graph update cannot change about a paired node: its kind,
/// its dependencies, and what allocation, free and conditional nodes are.
void require_same_structure(const exec::impl& st, const graph_spec& next, const node_state& n,
                            const node& now) {
  const node& was = *n.spec_node;
  if (was.kind() != now.kind())
    refuse(st, next, n.path, "node '" + n.path + "' changes kind (" + std::string(kind_name(was.kind())) +
                           " -> " + std::string(kind_name(now.kind())) + ")");
  if (sorted_deps(was) != sorted_deps(now))
    refuse(st, next, n.path, "node '" + n.path + "' changes its dependencies or their kinds");
  if (const auto* a = std::get_if<mem_alloc_node>(&was.params)) {
    const auto& b = std::get<mem_alloc_node>(now.params);
    if (a->buffer != b.buffer || a->bytes != b.bytes || a->device != b.device)
      refuse(st, next, n.path, "allocation node '" + n.path + "' changes its buffer, size or device");
  }
  if (const auto* a = std::get_if<mem_free_node>(&was.params))
    if (a->buffer != std::get<mem_free_node>(now.params).buffer)
      refuse(st, next, n.path, "free node '" + n.path + "' frees another buffer");
  // A priority is a launch attribute of the template's node, which an
  // update does not carry to the exec: refused rather than dropped.
  if (const auto* a = std::get_if<kernel_node>(&was.params))
    if (const int to = std::get<kernel_node>(now.params).priority; a->priority != to)
      refuse(st, next, n.path, "kernel node '" + n.path + "' changes its priority (" +
                                   std::to_string(a->priority) + " -> " + std::to_string(to) + ")");
  // So are a cluster, a cooperative launch, a memory-sync domain and a
  // shared-memory carveout (CUDA has no setter of them on an executable graph).
  if (const auto* a = std::get_if<kernel_node>(&was.params))
    if (!same_launch_attributes(*a, std::get<kernel_node>(now.params)))
      refuse(st, next, n.path,
             "kernel node '" + n.path + "' changes its launch attributes (" +
                 describe_launch_attributes(*a) + " -> " +
                 describe_launch_attributes(std::get<kernel_node>(now.params)) +
                 "), which an executable graph cannot change in place");
  if (const auto* a = std::get_if<conditional_node>(&was.params)) {
    const auto& b = std::get<conditional_node>(now.params);
    if (a->kind != b.kind || a->condition != b.condition || a->bodies.size() != b.bodies.size())
      refuse(st, next, n.path, "conditional node '" + n.path + "' changes its kind, condition or bodies");
  }
}

std::vector<const value*> values_of(const node& n) {
  std::vector<const value*> out;
  for_each_value(n, [&](const value& v) { out.push_back(&v); });
  return out;
}

/// A node's resolved values after the update, computed before any change.
struct pending_node {
  std::uint32_t index = 0;
  const node* now = nullptr;
  std::vector<std::vector<std::byte>> slots;  ///< the new bytes of each slot
  cudaKernelNodeParams kernel{};
  bool changed = false;
};

bool same_bytes(const void* a, std::span<const std::byte> b) {
  return std::memcmp(a, b.data(), b.size()) == 0;
}

}  // namespace

namespace detail {

void update_undo::save(const node_state& n, std::uint32_t index) {
  changed_node& c = changed.emplace_back();
  c.index = index;
  for (std::uint32_t k = 0; k < n.slot_count; ++k) {
    const auto* first = static_cast<const std::byte*>(n.slots[k]);
    c.slots.insert(c.slots.end(), first, first + n.slot_sizes[k]);
  }
  c.kernel = n.kernel;
}

void update_undo::restore(std::vector<node_state>& nodes) const noexcept {
  for (std::uint32_t i = 0; i < nodes.size(); ++i) nodes[i].spec_node = spec_nodes[i];
  for (const changed_node& c : changed) {
    node_state& n = nodes[c.index];
    std::size_t at = 0;
    for (std::uint32_t k = 0; k < n.slot_count; ++k) {
      std::memcpy(n.slots[k], c.slots.data() + at, n.slot_sizes[k]);
      at += n.slot_sizes[k];
    }
    n.kernel = c.kernel;
  }
}

}  // namespace detail

void exec::update(const graph_spec& changed, std::span<const binding> bindings) {
  impl& st = live();
  // The spec is checked where it will live: node_state::spec_node points
  // into it once moved into the exec (moving keeps the nodes in place).
  graph_spec next = changed;
  (void)check_detail::check_and_plan(next, bindings);

  // Pair every lowered node with the node of the same path.
  std::unordered_map<std::string, const node*> by_path;
  index_by_path(next, "", by_path);
  for (const node_state& n : st.nodes) {
    const auto it = by_path.find(n.path);
    if (it == by_path.end())
      refuse(st, next, n.path, "node '" + n.path + "' is not in the changed spec");
    require_same_structure(st, next, n, *it->second);
  }
  if (by_path.size() != st.nodes.size())
    for (const auto& entry : by_path) {
      const std::string& path = entry.first;  // (clang 14 captures no structured binding)
      if (std::none_of(st.nodes.begin(), st.nodes.end(),
                       [&](const node_state& s) { return s.path == path; }))
        refuse(st, next, path, "node '" + path + "' is new in the changed spec");
    }
  require_same_conditions(st, next);

  // The parameters: the same declarations, new values.
  std::vector<param_state> params;
  detail::name_map<std::uint32_t> param_index;
  detail::bind_params(next, bindings, params, param_index);
  for (const param_state& p : params) {
    const param_state* old = detail::find_param(st.params, st.param_index, p.name);
    if (!old || !(old->type == p.type) || old->external_buffer != p.external_buffer)
      refuse(st, next, {}, "parameter '" + p.name + "' is new or changes its type");
  }
  if (params.size() != st.params.size())
    refuse(st, next, {}, "the changed spec declares fewer parameters");
  const auto param_bytes = [&](const std::string& name) -> std::span<const std::byte> {
    return detail::find_param(params, param_index, name)->bytes;
  };

  // Resolve each node's values against the new spec and parameters.
  std::vector<pending_node> pending(st.nodes.size());
  for (std::uint32_t i = 0; i < st.nodes.size(); ++i) {
    const node_state& n = st.nodes[i];
    pending_node& p = pending[i];
    p.index = i;
    p.now = by_path.at(n.path);
    const node& was = *n.spec_node;
    const std::vector<const value*> old_values = values_of(was);
    const std::vector<const value*> new_values = values_of(*p.now);
    if (old_values.size() != new_values.size() || new_values.size() != n.slot_count)
      refuse(st, next, n.path, "node '" + n.path + "' reads " + std::to_string(new_values.size()) +
                             " values instead of " + std::to_string(old_values.size()));
    p.slots.resize(n.slot_count);
    for (std::uint32_t k = 0; k < n.slot_count; ++k) {
      const value& v = *new_values[k];
      std::vector<std::byte>& out = p.slots[k];
      if (const auto* l = std::get_if<literal>(&v.source)) {
        out.assign(l->bytes.data(), l->bytes.data() + l->bytes.size());
      } else if (const auto* r = std::get_if<param_ref>(&v.source)) {
        const auto bytes = param_bytes(r->name);
        out.assign(bytes.begin(), bytes.end());
      } else {
        // Buffers and conditions are the graph's own: the same source, the
        // same address or handle (an external buffer follows its parameter).
        if (!(v.source == old_values[k]->source))
          refuse(st, next, n.path, "node '" + n.path + "' value " + std::to_string(k) +
                                 " reads another buffer or condition");
        const auto* b = std::get_if<buffer_ref>(&v.source);
        const param_state* external =
            b ? detail::find_param(params, param_index, b->name) : nullptr;
        if (external && external->external_buffer) {
          const std::byte* base = nullptr;
          std::memcpy(&base, external->bytes.data(), sizeof(base));
          const std::byte* at = base + b->offset_bytes;
          out.resize(sizeof(at));
          std::memcpy(out.data(), &at, sizeof(at));
        } else {
          const auto* first = static_cast<const std::byte*>(n.slots[k]);
          out.assign(first, first + n.slot_sizes[k]);
        }
      }
      if (out.size() != n.slot_sizes[k])
        refuse(st, next, n.path, "node '" + n.path + "' value " + std::to_string(k) + " changes size (" +
                               std::to_string(n.slot_sizes[k]) + " -> " +
                               std::to_string(out.size()) + " bytes)");
      p.changed |= !same_bytes(n.slots[k], out);
    }
    if (const auto* f = std::get_if<mem_free_node>(&was.params)) {
      const param_state* external = detail::find_param(params, param_index, f->buffer);
      const param_state* old = detail::find_param(st.params, st.param_index, f->buffer);
      if (external && external->external_buffer && external->bytes != old->bytes)
        refuse(st, next, n.path, "free node '" + n.path + "' frees external buffer '" + f->buffer +
                               "' at another address, which CUDA cannot change");
    }
    std::visit(
        [&](const auto& a) {
          using P = std::remove_cvref_t<decltype(a)>;
          const P& b = std::get<P>(p.now->params);
          if constexpr (std::is_same_v<P, kernel_node>) {
            p.kernel = n.kernel;
            p.kernel.func = const_cast<void*>(b.function);
            detail::apply_launch_rules(p.kernel, b, n.path, [&](std::size_t, const std::string& name) {
              return detail::integral_param_of(*detail::find_param(params, param_index, name));
            });
            p.changed |= p.kernel.func != n.kernel.func || !native::same_launch(p.kernel, n.kernel);
          } else if constexpr (std::is_same_v<P, memcpy_node>) {
            p.changed |= a.bytes != b.bytes || a.kind != b.kind;
          } else if constexpr (std::is_same_v<P, memset_node>) {
            p.changed |= a.element_size != b.element_size || a.width != b.width ||
                         a.height != b.height || a.pitch_bytes != b.pitch_bytes;
          } else if constexpr (std::is_same_v<P, host_node>) {
            p.changed |= a.function != b.function;
          } else if constexpr (std::is_same_v<P, captured_node>) {
            p.changed |= a.record != b.record;
            if (p.changed && n.nested)
              refuse(st, next, n.path, "captured node '" + n.path +
                                     "' inside a child graph or conditional body cannot be "
                                     "recorded again in place");
          }
        },
        was.params);
  }

  // Nothing below refuses before CUDA is asked: apply, keeping what the
  // exec held, to put back if CUDA refuses.
  detail::update_undo before;
  before.spec_nodes.reserve(st.nodes.size());
  for (const node_state& n : st.nodes) before.spec_nodes.push_back(n.spec_node);
  st.dirty_scratch.clear();
  std::size_t launch_changes = 0;  // top-level kernels launched otherwise now
  for (pending_node& p : pending) {
    node_state& n = st.nodes[p.index];
    n.spec_node = p.now;
    if (!p.changed) continue;
    before.save(n, p.index);
    for (std::uint32_t k = 0; k < n.slot_count; ++k)
      std::memcpy(n.slots[k], p.slots[k].data(), p.slots[k].size());
    if (n.kind == node_kind::kernel) {
      launch_changes += !n.nested && !native::same_launch(p.kernel, n.kernel);
      n.kernel.func = p.kernel.func;
      n.kernel.gridDim = p.kernel.gridDim;
      n.kernel.blockDim = p.kernel.blockDim;
      n.kernel.sharedMemBytes = p.kernel.sharedMemBytes;
    }
    st.dirty_scratch.push_back(p.index);
  }
  // Each parameter keeps its uses (same topology, same readers by slot),
  // unless a node now reads another parameter: rebuild the table.
  for (param_state& p : params) p.uses.clear();
  for (std::uint32_t i = 0; i < st.nodes.size(); ++i) {
    const node_state& n = st.nodes[i];
    const std::vector<const value*> vals = values_of(*n.spec_node);
    for (std::uint32_t k = 0; k < vals.size(); ++k) {
      if (const auto* r = std::get_if<param_ref>(&vals[k]->source))
        detail::find_param(params, param_index, r->name)->uses.push_back({i, k});
      else if (const auto* b = std::get_if<buffer_ref>(&vals[k]->source))
        if (param_state* e = detail::find_param(params, param_index, b->name); e && e->external_buffer)
          e->uses.push_back({i, k, b->offset_bytes});
    }
    if (const auto* f = std::get_if<mem_free_node>(&n.spec_node->params))
      if (param_state* e = detail::find_param(params, param_index, f->buffer); e && e->external_buffer)
        e->uses.push_back({i, detail::freed_slot});
    if (const auto* k = std::get_if<kernel_node>(&n.spec_node->params)) {
      auto note = [&](const std::string& name) {
        param_state& p = *detail::find_param(params, param_index, name);
        if (p.uses.empty() || p.uses.back().node != i || p.uses.back().slot != detail::grid_slot)
          p.uses.push_back({i, detail::grid_slot});
      };
      if (k->grid_from) note(k->grid_from->param);
      for (const shape_rule& r : k->shape_rules) note(r.param);
    }
  }
  std::swap(st.params, params);  // `params` keeps the old ones now
  std::swap(st.param_index, param_index);
  graph_spec old_spec = std::move(st.spec);  // (a move keeps the old nodes in place)
  st.spec = std::move(next);
  st.rebind_index_built = false;
  st.update_in_flight = &before;
  try {
    (void)flush_dirty_after_launch_changes(launch_changes);
    st.update_in_flight = nullptr;
  } catch (...) {
    // CUDA refused: the rebind put the nodes' old values back and sent them
    // again where the exec may have taken new ones; the exec's record of
    // the spec and parameters goes back too, so the same update may be
    // tried again.
    st.update_in_flight = nullptr;
    st.spec = std::move(old_spec);
    st.params = std::move(params);
    st.param_index = std::move(param_index);
    st.rebind_index_built = false;
    throw;
  }
}

}  // namespace cudag
