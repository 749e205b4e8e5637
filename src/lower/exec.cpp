// The spec exec: instantiation, rebinding by name (per-node setters or one
// whole-graph update, whichever is cheaper), update from a changed spec, and
// enabling/disabling nodes.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "../check/check_passes.hpp"
#include "../check/checked_plan.hpp"
#include "cudag/check.hpp"
#include "cudag/rebind.hpp"

#include "exec_state.hpp"

namespace cudag {

namespace detail {

void push_node_params(node_state& n, cudaGraphExec_t on_exec, unique_stream& capture_stream,
                      retired_objects& retired,
                      const std::shared_ptr<host_failure_sink>& failures) {
  const std::string& path = n.path;
  const native::param_target to{on_exec};
  switch (n.kind) {
    case node_kind::kernel: native::set_kernel(to, n.handle, n.kernel, path); return;
    case node_kind::memcpy:
      native::set_memcpy(to, n.handle,
                         memcpy_params_of(n, std::get<memcpy_node>(n.spec_node->params)), path);
      return;
    case node_kind::memset:
      native::set_memset(to, n.handle,
                         memset_params_of(n, std::get<memset_node>(n.spec_node->params)), path);
      return;
    case node_kind::host: {
      // A fresh snapshot: a launch still pending keeps the old one.
      auto fresh = make_host_call(n, std::get<host_node>(n.spec_node->params), failures);
      native::set_host(to, n.handle, fresh->params(), path);
      retired.add(std::move(n.host));
      n.host = std::move(fresh);
      return;
    }
    case node_kind::event_record: native::set_event_record(to, n.handle, event_at(n), path); return;
    case node_kind::event_wait: native::set_event_wait(to, n.handle, event_at(n), path); return;
    case node_kind::captured: {
      if (!on_exec || n.nested)
        throw error("captured node '" + path +
                        "' inside a child graph or conditional body cannot be re-recorded in "
                        "place; use update_or_reinstantiate()",
                    cudaErrorNotSupported, {}, path);
      if (!capture_stream) capture_stream = make_stream();
      unique_graph recorded =
          record_captured(n, std::get<captured_node>(n.spec_node->params), capture_stream.get());
      native::set_child(to, n.handle, recorded.get(), path);
      n.captured = std::move(recorded);
      return;
    }
    default:
      // Child, conditional, empty and memory nodes hold no values of their
      // own (the nodes nested in them are sent one by one): nothing to send
      // when a whole template goes onto an exec.
      return;
  }
}

std::string path_of(const std::vector<node_state>& nodes, cudaGraphNode_t h) {
  for (const node_state& n : nodes)
    if (n.handle == h) return n.path;
  return {};
}

/// cudaGraphExecUpdate with the refused node named.
void exec_update(cudaGraphExec_t exec, cudaGraph_t graph, const std::vector<node_state>& nodes) {
  native::update_exec(exec, graph, [&](cudaGraphNode_t h) { return path_of(nodes, h); });
}

}  // namespace detail

using detail::node_state;
using detail::param_state;

exec::exec(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
exec::exec(exec&&) noexcept = default;
exec& exec::operator=(exec&&) noexcept = default;
exec::~exec() = default;

exec::impl& exec::live() const {
  // A moved-from exec holds nothing: say so instead of dereferencing null.
  if (!impl_) throw error("exec: used after it was moved from (it holds no executable graph)");
  return *impl_;
}

namespace {
/// Runs `call`; a CUDA failure that names no node gets the graph's name
/// (a host node's failure already names its node, and passes unchanged).
template <class F>
void naming_graph(const exec::impl& st, F&& call) {
  try {
    call();
  } catch (const error& e) {
    if (e.code() == cudaSuccess || !e.node().empty()) throw;
    throw error(e.what() + std::string(" (graph '") + st.spec.name + "')", e.code(), e.call());
  }
}
}  // namespace

void exec::launch(cudaStream_t stream) {
  impl& st = live();
  naming_graph(st, [&] { st.core.launch(stream); });
}
void exec::upload(cudaStream_t stream) {
  impl& st = live();
  naming_graph(st, [&] { st.core.upload(stream); });
}
void exec::synchronize(cudaStream_t stream) {
  impl& st = live();
  naming_graph(st, [&] { st.core.synchronize(stream); });
}
std::uint64_t exec::replay_count() const noexcept { return impl_ ? impl_->core.replay_count() : 0; }
std::string exec::driver_dot(unsigned flags) const { return live().core.driver_dot(flags); }
const graph_spec& exec::spec() const { return live().spec; }
cudaGraphExec_t exec::native_exec() const noexcept { return impl_ ? impl_->core.native_exec() : nullptr; }
device_graph exec::device_handle() const {
  const impl& st = live();
  if (!st.core.device_launchable())
    throw error("graph '" + st.spec.name +
                    "' was not instantiated for device launch (instantiate_options::device_launch): "
                    "device code cannot launch it",
                cudaErrorInvalidValue);
  return device_graph{st.core.native_exec()};
}
cudaGraph_t exec::native_graph() const noexcept { return impl_ ? impl_->core.native_graph() : nullptr; }
exec_core& exec::core() { return live().core; }

namespace {

std::unique_ptr<exec::impl> lower_fresh(graph_spec spec, std::span<const binding> bindings,
                                        const instantiate_options& options,
                                        std::shared_ptr<host_failure_sink> failures,
                                        unique_graph& graph_out,
                                        std::vector<std::shared_ptr<const void>>& owned,
                                        const detail::dependency_rows* resolved = nullptr) {
  auto st = std::make_unique<exec::impl>();
  st->spec = std::move(spec);
  check_instantiate_options(options);
  if (options.device_launch) check_device_launchable(st->spec);
  // Checked where it will live: the plans are keyed by each graph's address.
  const check_detail::checked_plans plans = check_detail::check_and_plan(st->spec, bindings, resolved);
  st->options = options;
  detail::bind_params(st->spec, bindings, st->params, st->param_index);
  graph_out = make_graph();
  detail::lower_into(st->spec, plans, graph_out.get(),
                     {st->params, st->param_index, st->nodes, st->values, owned, failures, st->capture_stream});
  for (std::uint32_t i = 0; i < st->nodes.size(); ++i)
    if (!st->nodes[i].nested) st->top_level_index.emplace(st->nodes[i].path, i);
  return st;
}

}  // namespace

namespace {

std::unique_ptr<exec::impl> instantiate_checked(graph_spec spec, std::span<const binding> bindings,
                                                const instantiate_options& options,
                                                const detail::dependency_rows* resolved) {
  exec_core core;
  unique_graph graph;
  std::vector<std::shared_ptr<const void>> owned;
  auto st = lower_fresh(std::move(spec), bindings, options, core.host_failures(), graph, owned, resolved);
  for (auto& o : owned) core.keep_alive(std::move(o));
  try {
    core.reinstantiate(std::move(graph), options,
                       [&](cudaGraphNode_t h) { return detail::path_of(st->nodes, h); });
  } catch (const error& e) {
    throw error(e.what() + std::string(" (graph '") + st->spec.name + "')", e.code(), e.call(),
                e.node());
  }
  st->core = std::move(core);
  return st;
}

}  // namespace

exec instantiate(graph_spec spec, std::span<const binding> bindings,
                 const instantiate_options& options) {
  return exec(instantiate_checked(std::move(spec), bindings, options, nullptr));
}

exec instantiate(resolved_graph graph, std::span<const binding> bindings,
                 const instantiate_options& options) {
  detail::resolved_parts parts = detail::resolved_parts::take(std::move(graph));
  return exec(instantiate_checked(std::move(parts.spec), bindings, options, &parts.rows));
}

namespace {

lowered_graph lower_checked(const graph_spec& spec, std::span<const binding> bindings,
                            const detail::dependency_rows* resolved) {
  const check_detail::checked_plans plans = check_detail::check_and_plan(spec, bindings, resolved);
  std::vector<param_state> params;
  detail::name_map<std::uint32_t> index;
  detail::bind_params(spec, bindings, params, index);
  lowered_graph out;
  out.graph = make_graph();
  std::vector<node_state> nodes;
  auto values = std::make_shared<detail::value_storage>();
  auto failures = std::make_shared<host_failure_sink>();
  auto capture_stream = std::make_shared<unique_stream>();
  out.owned.push_back(failures);
  out.owned.push_back(values);
  const std::size_t first_pointed_at = out.owned.size();
  detail::lower_into(spec, plans, out.graph.get(),
                     {params, index, nodes, *values, out.owned, failures, *capture_stream});
  // What the graph points at (host calls, modules, captured libraries)
  // it keeps alive by itself, so that the caller may drop `owned`.
  native::retain_in_graph(out.graph.get(),
                          {out.owned.begin() + static_cast<std::ptrdiff_t>(first_pointed_at), out.owned.end()},
                          spec.name);
  out.owned.push_back(capture_stream);
  out.nodes.reserve(spec.nodes.size());
  for (node_state& n : nodes)  // the states die here: their paths move
    if (!n.nested) out.nodes.emplace_back(std::move(n.path), n.handle);
  return out;
}

}  // namespace

lowered_graph lower(const graph_spec& spec, std::span<const binding> bindings) {
  return lower_checked(spec, bindings, nullptr);
}

lowered_graph lower(const resolved_graph& graph, std::span<const binding> bindings) {
  return lower_checked(graph.spec(), bindings, &graph.rows());
}

namespace {

/// Pairs each node of `from` with the node at the same place in `to` (a
/// copy of it); child graphs are shared by copies, their nodes pair with
/// themselves.
void pair_nodes(const graph_spec& from, const graph_spec& to,
                std::unordered_map<const node*, const node*>& pairs) {
  for (std::size_t i = 0; i < from.nodes.size(); ++i) {
    pairs.emplace(&from.nodes[i], &to.nodes[i]);
    if (auto* c = std::get_if<child_node>(&from.nodes[i].params))
      pair_nodes(*c->graph, *std::get<child_node>(to.nodes[i].params).graph, pairs);
    if (auto* c = std::get_if<conditional_node>(&from.nodes[i].params)) {
      const auto& bodies = std::get<conditional_node>(to.nodes[i].params).bodies;
      for (std::size_t b = 0; b < c->bodies.size(); ++b) pair_nodes(c->bodies[b], bodies[b], pairs);
    }
  }
}

/// CUDA allows one executable graph of a template holding memory nodes;
/// a captured node inside a child graph cannot be given a new recording.
bool must_lower_again(const std::vector<node_state>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [](const node_state& n) {
    // CUDA instantiates a graph holding memory or conditional nodes once
    // at a time (cudaErrorNotSupported on an H200 otherwise).
    return n.kind == node_kind::mem_alloc || n.kind == node_kind::mem_free ||
           n.kind == node_kind::conditional || (n.kind == node_kind::captured && n.nested);
  });
}

}  // namespace

namespace {
// The rebind's staging steps (defined with exec::stage below).
void begin_staging(exec::impl& st);
template <class StageEach>
void stage_whole(exec::impl& st, StageEach&& stage_each);
}  // namespace

exec exec::instance(std::span<const binding> bindings) {
  const impl& from = live();
  if (must_lower_again(from.nodes)) {
    std::vector<binding> values;
    for (const param_state& p : from.params) values.push_back(binding{p.name, p.type, p.bytes});
    for (const binding& b : bindings) {
      auto it = std::find_if(values.begin(), values.end(),
                             [&](const binding& v) { return v.name == b.name; });
      if (it == values.end())
        throw error("instance: graph '" + from.spec.name + "' has no parameter '" + b.name + "'");
      *it = b;
    }
    return instantiate(from.spec, values, from.options);
  }

  auto st = std::make_unique<impl>();
  st->spec = from.spec;
  st->options = from.options;
  st->params = from.params;
  st->param_index = from.param_index;
  st->values = from.values.copy();
  st->top_level_index = from.top_level_index;
  st->rebind.policy = from.rebind.policy;
  std::unordered_map<const node*, const node*> pairs;
  pair_nodes(from.spec, st->spec, pairs);
  st->nodes.reserve(from.nodes.size());
  for (const node_state& n : from.nodes) {
    node_state& m = st->nodes.emplace_back();
    m.path = n.path;
    m.kind = n.kind;
    m.spec_node = pairs.at(n.spec_node);
    m.handle = n.handle;  // the template's node: exec setters take it for any of its execs
    m.nested = n.nested;
    m.allocation = n.allocation;
    if (n.slots) {
      const std::uint32_t first = from.values.index_of(n.slots);
      m.slots = st->values.slots(first);
      m.slot_sizes = st->values.sizes(first);
      m.slot_count = n.slot_count;
    }
    m.kernel = n.kernel;
    if (m.kind == node_kind::kernel) m.kernel.kernelParams = m.slot_count ? m.slots : nullptr;
  }
  exec out(std::move(st));
  impl& o = *out.impl_;
  stage_whole(o, [&] {
    for (const binding& b : bindings)
      out.stage(b.name, b.type, b.bytes.data(), b.bytes.size(), "instance");
  });
  for (node_state& n : o.nodes) n.dirty = false;
  begin_staging(o);

  // Every node's values onto the shared template, then one instantiation.
  // Host nodes get callables of their own (reporting to this exec); a
  // captured node is recorded again and given to the new exec.
  o.core = live().core.sharing_template();
  const native::same_device_batch batch(o.core.kernel_functions());
  for (node_state& n : o.nodes)
    if (n.kind != node_kind::captured)
      detail::push_node_params(n, nullptr, o.capture_stream, *o.core.retired(),
                               o.core.host_failures());
  o.core.instantiate_template(o.options,
                              [&](cudaGraphNode_t h) { return detail::path_of(o.nodes, h); });
  for (node_state& n : o.nodes) {
    if (n.kind == node_kind::host && n.host) o.core.keep_alive(n.host);
    if (n.kind == node_kind::captured)
      detail::push_node_params(n, o.core.native_exec(), o.capture_stream, *o.core.retired(),
                               o.core.host_failures());
  }
  o.rebind.template_stale.assign(o.nodes.size(), false);
  return out;
}

graph_in_capture add_to_capture(cudaStream_t stream, const graph_spec& spec,
                                std::span<const binding> bindings) {
  const check_detail::checked_plans plans = check_detail::check_and_plan(spec, bindings);
  std::vector<param_state> params;
  detail::name_map<std::uint32_t> index;
  detail::bind_params(spec, bindings, params, index);
  const native::capture_point at = native::capture_in_progress(stream, spec.name);
  graph_in_capture out;
  out.host_failures = std::make_shared<host_failure_sink>();
  std::vector<node_state> nodes;
  auto values = std::make_shared<detail::value_storage>();
  auto capture_stream = std::make_shared<unique_stream>();
  try {
    detail::lower_into(spec, plans, at.graph,
                       {params, index, nodes, *values, out.owned, out.host_failures, *capture_stream},
                       at.dependencies);
  } catch (...) {
    // The capture's graph is the caller's: take out what was added to it
    // (a child or conditional node takes its nested nodes with it).
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      if (!it->nested && it->handle) native::destroy_node(it->handle);
    throw;
  }
  native::retain_in_graph(at.graph, out.owned, spec.name);  // what the graph points at
  out.owned.push_back(values);
  out.owned.push_back(capture_stream);
  // The stream's next work follows the spec's leaves (its top-level nodes
  // no other top-level node depends on).
  std::unordered_set<std::string_view> depended_on;
  for (const node& n : spec.nodes)
    for (const std::string& d : n.deps) depended_on.insert(d);
  std::vector<cudaGraphNode_t> leaves;
  for (const node_state& n : nodes) {
    if (n.nested) continue;
    out.nodes.emplace_back(n.path, n.handle);
    if (!depended_on.count(n.spec_node->name)) leaves.push_back(n.handle);
  }
  if (!leaves.empty()) native::set_capture_dependencies(stream, leaves, spec.name);
  return out;
}

namespace {
/// The same launch from the same parameters: equal base launches and equal
/// rules (one parameter table serves every level, so equal names are one
/// parameter).
bool same_launch_rules(const kernel_node& a, const kernel_node& b) {
  return native::same_dims(a.grid, b.grid) && native::same_dims(a.block, b.block) &&
         a.shared_bytes == b.shared_bytes && a.grid_from == b.grid_from &&
         a.shape_rules == b.shape_rules;
}

void index_for_rebind(exec::impl& st) {
  st.launch_rule_params.clear();
  st.any_nested = false;
  st.any_top_level_captured = false;
  // A family's kernels usually follow one rule in a row: comparing with the
  // last group's kernel finds most of them.
  const kernel_node* group_kernel = nullptr;
  std::uint32_t groups = 0;
  for (node_state& n : st.nodes) {
    st.any_nested |= n.nested;
    st.any_top_level_captured |= n.kind == node_kind::captured && !n.nested;
    n.launch_group = 0;  // (an update may have taken a kernel's rules away)
    const auto* k = std::get_if<kernel_node>(&n.spec_node->params);
    if (!k || (!k->grid_from && k->shape_rules.empty())) continue;
    n.first_launch_rule_param = static_cast<std::uint32_t>(st.launch_rule_params.size());
    const auto index_of = [&](const std::string& name) {
      return static_cast<std::uint32_t>(detail::find_param(st.params, st.param_index, name) -
                                        st.params.data());
    };
    if (k->grid_from) st.launch_rule_params.push_back(index_of(k->grid_from->param));
    for (const shape_rule& r : k->shape_rules) st.launch_rule_params.push_back(index_of(r.param));
    if (!group_kernel || !same_launch_rules(*group_kernel, *k)) {
      group_kernel = k;
      ++groups;
    }
    n.launch_group = groups;
  }
  st.rebind_index_built = true;
}
}  // namespace

namespace {

/// Writes parameter `p`'s bytes into every argument slot that reads it;
/// with `mark`, marks its readers (launch-rule readers too) dirty.
void write_readers(exec::impl& st, const param_state& p, bool mark = true) {
  const std::size_t size = p.bytes.size();
  for (const detail::param_use& use : p.uses) {
    node_state& n = st.nodes[use.node];
    if (use.slot == detail::grid_slot) {
      // computed with every staged value in place (settle_launches)
    } else if (use.offset_bytes != 0) {
      const std::byte* base = nullptr;
      std::memcpy(&base, p.bytes.data(), sizeof(base));
      const std::byte* at = base + use.offset_bytes;
      std::memcpy(n.slots[use.slot], &at, sizeof(at));
    } else if (size == sizeof(std::uint32_t)) {  // the common sizes inline, not a libc call
      std::memcpy(n.slots[use.slot], p.bytes.data(), sizeof(std::uint32_t));
    } else if (size == sizeof(std::uint64_t)) {
      std::memcpy(n.slots[use.slot], p.bytes.data(), sizeof(std::uint64_t));
    } else {
      std::memcpy(n.slots[use.slot], p.bytes.data(), size);
    }
    if (mark && !n.dirty) {
      n.dirty = true;
      st.dirty_scratch.push_back(use.node);
    }
  }
}

/// The launch of every dirty kernel whose launch follows parameters, from
/// the parameters as they are now: all of a rebind's or reshape's values at
/// once, so that only the shape asked for is judged. All are computed before
/// any is applied: a shape CUDA cannot launch changes no node. One launch a
/// run of kernels of one launch group.
void settle_launches(exec::impl& st) {
  if (!st.staged_launches) return;
  if (!st.rebind_index_built) index_for_rebind(st);
  st.launch_scratch.clear();
  std::uint32_t last_group = 0;
  for (const std::uint32_t v : st.dirty_scratch) {
    const node_state& n = st.nodes[v];
    if (n.launch_group == 0 || n.launch_group == last_group) continue;
    last_group = n.launch_group;
    const std::uint32_t* rule_params = st.launch_rule_params.data() + n.first_launch_rule_param;
    detail::apply_launch_rules(
        st.launch_scratch.emplace_back(), *std::get_if<kernel_node>(&n.spec_node->params), n.path,
        [&](std::size_t k, const std::string&) {
          return detail::integral_param_of(st.params[rule_params[k]]);
        });
  }
  std::size_t next_launch = 0;
  last_group = 0;
  for (const std::uint32_t v : st.dirty_scratch) {
    node_state& n = st.nodes[v];
    if (n.launch_group == 0) continue;
    if (n.launch_group != last_group) {
      last_group = n.launch_group;
      ++next_launch;
    }
    const detail::launch_shape& launch = st.launch_scratch[next_launch - 1];
    n.kernel.gridDim = launch.gridDim;
    n.kernel.blockDim = launch.blockDim;
    n.kernel.sharedMemBytes = launch.sharedMemBytes;
  }
}

void begin_staging(exec::impl& st) {
  st.dirty_scratch.clear();
  st.staged.clear();
  st.undo_bytes.clear();
  st.staged_launches = false;
}

/// Puts back every value the rebind in progress changed: the parameters'
/// bytes, the slots that read them, the launches that follow them (its
/// dirty list, which a refused flush is still reading, stays as it is). The
/// launches were computed from these very values before, so none refuses.
void restore_staged_values(exec::impl& st) {
  for (auto it = st.staged.rbegin(); it != st.staged.rend(); ++it) {
    param_state& p = st.params[it->param];
    std::memcpy(p.bytes.data(), st.undo_bytes.data() + it->offset, p.bytes.size());
    write_readers(st, p, /*mark=*/false);
  }
  settle_launches(st);
}

/// A rebind refused before anything was sent: nothing changed stays changed.
void undo_staged(exec::impl& st) noexcept {
  try {
    restore_staged_values(st);
  } catch (...) {  // the launches were valid with these values: not reached
  }
  for (const std::uint32_t v : st.dirty_scratch) st.nodes[v].dirty = false;
  begin_staging(st);
}

/// Whether the staged values bind a pointer parameter to the address another
/// pointer parameter holds (a null pointer aliases nothing).
bool staged_alias(const exec::impl& st) {
  for (const exec::impl::staged_param& s : st.staged) {
    const param_state& p = st.params[s.param];
    if (!p.type.is_pointer || std::all_of(p.bytes.begin(), p.bytes.end(), [](std::byte b) { return b == std::byte{0}; }))
      continue;
    for (std::size_t q = 0; q < st.params.size(); ++q)
      if (q != s.param && st.params[q].type.is_pointer && st.params[q].bytes == p.bytes) return true;
  }
  return false;
}

/// Two pointer parameters bound to one address are one memory: where the
/// staged values make such an alias, the graph's races are judged again
/// with every value as staged (rarely: only an alias costs the pass).
void refuse_racing_alias(const exec::impl& st) {
  if (!staged_alias(st)) return;
  std::vector<binding> values;
  values.reserve(st.params.size());
  for (const param_state& p : st.params) values.push_back(binding{p.name, p.type, p.bytes});
  check_detail::check_races(check_detail::spec_tree(st.spec), values);
}

/// Stages a call's values (stage_each() calls exec::stage once a value) and
/// computes the launches that follow them; a refusal of any puts all back.
template <class StageEach>
void stage_whole(exec::impl& st, StageEach&& stage_each) {
  begin_staging(st);
  try {
    stage_each();
    refuse_racing_alias(st);
    settle_launches(st);
  } catch (...) {
    undo_staged(st);
    throw;
  }
}

}  // namespace

void exec::stage(std::string_view name, const type_tag& type, const void* bytes, std::size_t size,
                 std::string_view caller) {
  impl& st = live();
  param_state* found = detail::find_param(st.params, st.param_index, name);
  if (!found)
    throw error(std::string(caller) + ": graph '" + st.spec.name + "' has no parameter '" + std::string(name) + "'");
  param_state& p = *found;
  if (!(type == p.type) && !binds_to(type, p.type))
    throw error(std::string(caller) + ": parameter '" + p.name + "' is declared " + p.type.name() + ", given " +
                type.name());
  if (size != p.bytes.size())
    throw error(std::string(caller) + ": parameter '" + p.name + "' takes " + std::to_string(p.bytes.size()) +
                " bytes, given " + std::to_string(size));
  if (std::memcmp(p.bytes.data(), bytes, size) == 0) return;  // unchanged: nothing to send
  bool sets_launch = false;
  for (const detail::param_use& use : p.uses) {
    const node_state& n = st.nodes[use.node];
    if (use.slot == detail::freed_slot)
      throw error(std::string(caller) + ": external buffer '" + p.name + "' is freed by node '" + n.path +
                      "', whose address CUDA cannot change; instantiate the graph again",
                  cudaErrorNotSupported, {}, n.path);
    // Refused here, before anything changes, rather than half way through
    // sending the change.
    if (n.kind == node_kind::captured && n.nested)
      throw error(std::string(caller) + ": parameter '" + p.name + "' is read by captured node '" + n.path +
                      "' inside a child graph or conditional body, which cannot be re-recorded in "
                      "place; use update_or_reinstantiate()",
                  cudaErrorNotSupported, {}, n.path);
    sets_launch |= use.slot == detail::grid_slot;
  }
  // The bytes before, to put back if the rebind is refused (each parameter
  // once: a second binding of it keeps the first's record).
  const auto index = static_cast<std::uint32_t>(&p - st.params.data());
  const bool recorded = std::any_of(st.staged.begin(), st.staged.end(),
                                    [&](const impl::staged_param& s) { return s.param == index; });
  if (!recorded) {
    st.staged.push_back({index, static_cast<std::uint32_t>(st.undo_bytes.size())});
    st.undo_bytes.insert(st.undo_bytes.end(), p.bytes.begin(), p.bytes.end());
  }
  st.staged_launches |= sets_launch;
  std::memcpy(p.bytes.data(), bytes, size);
  write_readers(st, p);
}

rebind_path exec::rebind_bytes(std::string_view name, const type_tag& type, const void* bytes,
                               std::size_t size) {
  stage_whole(live(), [&] { stage(name, type, bytes, size); });
  return flush_dirty();
}

rebind_path exec::rebind(std::span<const binding> bindings) {
  stage_whole(live(), [&] {
    for (const binding& b : bindings) stage(b.name, b.type, b.bytes.data(), b.bytes.size());
  });
  return flush_dirty();
}

namespace detail {
/// The spec exec's nodes as the shared rebind algorithm sees them.
class spec_rebind_nodes final : public rebind_nodes {
 public:
  explicit spec_rebind_nodes(exec::impl& st) : st_(st) {}
  std::size_t top_level_count() const noexcept override { return st_.top_level_index.size(); }
  bool needs_whole_update(std::uint32_t v) const noexcept override { return st_.nodes[v].nested; }
  bool captured(std::uint32_t v) const noexcept override {
    return st_.nodes[v].kind == node_kind::captured && !st_.nodes[v].nested;
  }
  void push(std::uint32_t v, native::param_target to) override {
    push_node_params(st_.nodes[v], to.exec, st_.capture_stream, *st_.core.retired(),
                     st_.core.host_failures());
  }
  void restore_captured(cudaGraphExec_t exec) override {
    for (node_state& n : st_.nodes)
      if (n.kind == node_kind::captured && !n.nested)
        native::set_child(native::param_target::on_exec(exec), n.handle, n.captured.get(), n.path);
  }
  std::string name_of(cudaGraphNode_t h) const override { return path_of(st_.nodes, h); }
  bool restore_values() override {
    if (!st_.staged.empty()) {
      restore_staged_values(st_);
      return true;
    }
    if (!st_.update_in_flight) return false;
    st_.update_in_flight->restore(st_.nodes);
    return true;
  }
  bool any_needs_whole_update() const noexcept override { return st_.any_nested; }
  bool any_captured() const noexcept override { return st_.any_top_level_captured; }

 private:
  exec::impl& st_;
};
}  // namespace detail

rebind_path exec::flush_dirty() {
  impl& st = live();
  // Creation order, whatever order the bindings came in: the same native
  // calls as the DSL exec makes for the same change.
  // One parameter's readers come in creation order already: no sort then.
  if (!std::is_sorted(st.dirty_scratch.begin(), st.dirty_scratch.end()))
    std::sort(st.dirty_scratch.begin(), st.dirty_scratch.end());
  for (std::uint32_t i : st.dirty_scratch) st.nodes[i].dirty = false;
  if (st.rebind.template_stale.size() != st.nodes.size())
    st.rebind.template_stale.assign(st.nodes.size(), false);
  if (!st.rebind_index_built) index_for_rebind(st);
  detail::spec_rebind_nodes nodes(st);
  try {
    const rebind_path path = apply_rebind(st.core, nodes, st.dirty_scratch, st.rebind);
    begin_staging(st);
    return path;
  } catch (...) {
    begin_staging(st);
    throw;
  }
}

void exec::set_rebind_policy(rebind_policy policy) { live().rebind.policy = policy; }

rebind_path exec::reshape(std::span<const binding> shape) {
  impl& st = live();
  stage_whole(st, [&] {
    for (const binding& b : shape) stage(b.name, b.type, b.bytes.data(), b.bytes.size(), "reshape");
  });
  std::size_t top_level = st.dirty_scratch.size();
  if (st.any_nested) {  // stage() built the flag whenever a node changed
    top_level = 0;
    for (const std::uint32_t v : st.dirty_scratch) top_level += !st.nodes[v].nested;
  }
  return flush_dirty_after_launch_changes(top_level);
}

rebind_path exec::flush_dirty_after_launch_changes(std::size_t launch_changes) {
  impl& st = live();
  // Launch dimensions travel faster by template setters and one
  // whole-graph update than by exec setters once a few nodes change.
  const rebind_policy chosen = st.rebind.policy;
  if (chosen == rebind_policy::automatic && launch_changes > 0)
    st.rebind.policy = prefer_whole_graph_update_for_reshape(launch_changes, st.top_level_index.size())
                           ? rebind_policy::whole_graph_update
                           : rebind_policy::node_setters;
  try {
    const rebind_path path = flush_dirty();
    st.rebind.policy = chosen;
    return path;
  } catch (...) {
    st.rebind.policy = chosen;
    throw;
  }
}

void exec::adopt(std::unique_ptr<impl> fresh, std::vector<std::shared_ptr<const void>> owned) {
  // The new state replaces the old; what the old one pointed at (host-node
  // states, modules, captured work) stays alive until the next synchronize(),
  // since launches in flight may still use it.
  impl& old = live();
  retired_objects& retired = *old.core.retired();
  for (auto& o : old.core.replace_kept(std::move(owned))) retired.add(std::move(o));
  for (node_state& n : old.nodes)
    if (n.host) retired.add(std::move(n.host));
  fresh->rebind.policy = old.rebind.policy;
  fresh->core = std::move(old.core);
  impl_ = std::move(fresh);
}

bool exec::update_or_reinstantiate(const graph_spec& changed, std::span<const binding> bindings) {
  try {
    update(changed, bindings);
    return false;
  } catch (const check_error&) {
    throw;  // a bad spec is not fixed by re-instantiating
  } catch (const error&) {
  }
  impl& st = live();
  unique_graph graph;
  std::vector<std::shared_ptr<const void>> owned;
  auto fresh = lower_fresh(changed, bindings, st.options, st.core.host_failures(), graph, owned);
  st.core.reinstantiate(std::move(graph), st.options,
                        [&](cudaGraphNode_t h) { return detail::path_of(fresh->nodes, h); });
  adopt(std::move(fresh), std::move(owned));
  return true;
}

namespace {
const node_state& top_level(const exec::impl& st, std::string_view name) {
  auto it = st.top_level_index.find(name);
  if (it == st.top_level_index.end())
    throw error("graph '" + st.spec.name + "' has no top-level node '" + std::string(name) + "'",
                cudaErrorInvalidValue, {}, std::string(name));
  return st.nodes[it->second];
}
}  // namespace

void exec::set_enabled(std::string_view name, bool on) {
  const impl& st = live();
  const node_state& n = top_level(st, name);
  if (n.kind != node_kind::kernel && n.kind != node_kind::memset && n.kind != node_kind::memcpy)
    throw error("node '" + n.path + "' is a " + std::string(kind_name(n.kind)) +
                    " node: only kernel, memset and memcpy nodes can be disabled",
                cudaErrorNotSupported, "cudaGraphNodeSetEnabled", n.path);
  native::set_enabled(st.core.native_exec(), n.handle, on, n.path);
}

bool exec::enabled(std::string_view name) const {
  const impl& st = live();
  const node_state& n = top_level(st, name);
  return native::enabled(st.core.native_exec(), n.handle, n.path);
}

namespace {
// The mem_alloc node of `state` that produces buffer `name` (its path: a
// node's path is its graph's prefix plus its name, a buffer's the same
// prefix plus the buffer's name); throws, naming the graph, where none does.
const detail::node_state& allocation_of(const exec::impl& state, std::string_view name) {
  for (const node_state& n : state.nodes) {
    if (n.kind != node_kind::mem_alloc) continue;
    const std::string& buffer = std::get<mem_alloc_node>(n.spec_node->params).buffer;
    const std::string_view prefix =
        std::string_view(n.path).substr(0, n.path.size() - n.spec_node->name.size());
    if (name.size() == prefix.size() + buffer.size() && name.starts_with(prefix) &&
        name.substr(prefix.size()) == buffer)
      return n;
  }
  throw error("graph '" + state.spec.name + "' has no graph-owned buffer '" + std::string(name) +
                  "' (no mem_alloc node produces it)",
              cudaErrorInvalidValue);
}
}  // namespace

void* exec::buffer_address(std::string_view name) const { return allocation_of(live(), name).allocation; }

void* exec::buffer_view(std::string_view name, std::size_t offset, std::size_t element_bytes) const {
  const detail::node_state& n = allocation_of(live(), name);
  const std::size_t bytes = std::get<mem_alloc_node>(n.spec_node->params).bytes;
  if (offset > bytes / element_bytes) detail::refuse_view_past_end(name, offset, element_bytes, bytes);
  return static_cast<std::byte*>(n.allocation) + offset * element_bytes;
}

cudaGraphNode_t exec::node_handle(std::string_view name) const {
  return top_level(live(), name).handle;
}

std::vector<std::string> exec::readers_of(std::string_view name) const {
  if (live().param_index.find(name) == live().param_index.end())
    throw error("graph '" + live().spec.name + "' has no parameter '" + std::string(name) + "'");
  return parameter_readers(live().spec, name);
}

}  // namespace cudag
