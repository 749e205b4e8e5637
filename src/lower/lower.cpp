// Lowering of a checked spec: the walk over nodes in deterministic
// topological order, calling the native_nodes wrappers. Declaration order
// among peers keeps cudaGraphExecUpdate's pairing stable between lowerings.
#include <algorithm>
#include <exception>
#include <optional>
#include <cstring>

#include "cudag/check.hpp"
#include "exec_state.hpp"

namespace cudag::detail {
namespace {

/// Buffers and conditions visible in one graph and its enclosing graphs.
struct scope {
  const scope* parent = nullptr;
  name_map<void*> buffers;
  name_map<cudaGraphConditionalHandle> conditions;

  [[nodiscard]] const void* const* find_buffer(std::string_view name) const {
    for (const scope* s = this; s; s = s->parent)
      if (auto it = s->buffers.find(name); it != s->buffers.end()) return &it->second;
    return nullptr;
  }
  [[nodiscard]] const cudaGraphConditionalHandle* find_condition(std::string_view name) const {
    for (const scope* s = this; s; s = s->parent)
      if (auto it = s->conditions.find(name); it != s->conditions.end()) return &it->second;
    return nullptr;
  }
};

[[noreturn]] void missing(std::string_view what, std::string_view name, std::string_view node) {
  throw error("lowering node '" + std::string(node) + "': " + std::string(what) + " '" +
                  std::string(name) + "' is not available here",
              cudaErrorInvalidValue, {}, std::string(node));
}

class lowerer {
 public:
  lowerer(const check_detail::checked_plans& plans, const lowering_target& into,
          std::span<const cudaGraphNode_t> root_dependencies,
          std::optional<cudaStream_t> eager = std::nullopt)
      : plans_(plans), params_(into.params), param_index_(into.param_index), nodes_(into.nodes),
        storage_(into.storage), owned_(into.owned), failures_(into.failures),
        capture_stream_(into.capture_stream),
        root_dependencies_(root_dependencies), eager_(eager.has_value()),
        stream_(eager.value_or(nullptr)) {}

  /// Stream-ordered allocations an eager run made and no free node freed.
  std::vector<void*> unfreed;

  void lower_graph(const graph_spec& g, cudaGraph_t target, const scope* parent,
                   const std::string& prefix, bool nested) {
    scope here;
    here.parent = parent;
    // Without a graph there are no conditions: a node reading one refuses.
    for (const condition_decl& c : eager_ ? std::span<const condition_decl>() : g.conditions)
      here.conditions.emplace(
          c.name, native::create_condition(target, c.default_value, c.assign_default,
                                           prefix + c.name));

    const auto found = plans_.graphs.find(&g);
    if (found == plans_.graphs.end())
      throw error("internal error: graph '" + g.name + "' was not checked before lowering");
    const check_detail::dependency_plan& plan = found->second;
    std::vector<cudaGraphNode_t> created(g.nodes.size(), nullptr);
    std::vector<cudaGraphNode_t> deps;

    const bool top_level = parent == nullptr;
    const auto gather_dependencies = [&](std::uint32_t i) {
      deps.clear();
      for (std::uint32_t k = plan.dep_begin[i]; k < plan.dep_begin[i + 1]; ++k)
        deps.push_back(created[plan.deps[k]]);
      if (top_level && deps.empty()) deps.assign(root_dependencies_.begin(), root_dependencies_.end());
    };
    // Kernel nodes are prepared (values resolved, launches computed) a run
    // at a time, then added one after the other: the driver's calls, each
    // longer than cudag's work for a node, would otherwise push that work's
    // data out of the caches between every two nodes. The native calls and
    // their order are the same either way.
    constexpr std::size_t run_length = 32;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> prepared;  // (node, its state)
    prepared.reserve(run_length);
    const auto add_prepared = [&] {
      for (const auto& [i, index] : prepared) {
        gather_dependencies(i);
        created[i] = add_kernel_node(index, target, deps, g.nodes[i].dependency_kinds);
      }
      prepared.clear();
    };
    for (std::uint32_t i : plan.order) {
      const node& n = g.nodes[i];
      const auto index = static_cast<std::uint32_t>(nodes_.size());
      node_state& st = nodes_.emplace_back();
      if (prefix.empty()) st.path = n.name;
      else st.path = prefix + n.name;
      st.kind = n.kind();
      st.spec_node = &n;
      st.nested = nested;
      if (const auto* k = std::get_if<kernel_node>(&n.params); k && !eager_) {
        prepare_kernel(*k, index, here);
        prepared.emplace_back(i, index);
        if (prepared.size() == run_length) add_prepared();
        continue;
      }
      add_prepared();
      gather_dependencies(i);
      created[i] = lower_node(n, index, target, deps, here);
      nodes_[index].handle = created[i];
    }
    add_prepared();
  }

 private:
  /// Writes the bytes of `v` into slot `slot` (of node `node`, argument k).
  void resolve(const value& v, const scope& s, std::uint32_t node, std::uint32_t slot,
               std::uint32_t argument) {
    auto put = [&](const void* data, std::size_t size) {
      void* to = storage_.place(slot, size);
      // Most values are pointers or 4-byte scalars: copies of a known size
      // are a move each, where a copy of any size is a call.
      if (size == 8) std::memcpy(to, data, 8);
      else if (size == 4) std::memcpy(to, data, 4);
      else std::memcpy(to, data, size);
    };
    const std::string& path = nodes_[node].path;
    std::visit(
        [&](const auto& source) {
          using S = std::remove_cvref_t<decltype(source)>;
          if constexpr (std::is_same_v<S, literal>) {
            put(source.bytes.data(), source.bytes.size());
          } else if constexpr (std::is_same_v<S, param_ref>) {
            param_state& p = param_named(source.name, path);
            p.uses.push_back({node, argument});
            put(p.bytes.data(), p.bytes.size());
          } else if constexpr (std::is_same_v<S, buffer_ref>) {
            const void* base = nullptr;
            if (const void* const* allocated = s.find_buffer(source.name)) {
              base = *allocated;
            } else {  // an external buffer: a pointer parameter, rebindable
              param_state& p = external_buffer(source.name, path);
              p.uses.push_back({node, argument, source.offset_bytes});
              std::memcpy(&base, p.bytes.data(), sizeof(base));
            }
            const void* pointer = static_cast<const std::byte*>(base) + source.offset_bytes;
            put(&pointer, sizeof(pointer));
          } else {
            if (eager_)
              throw error("node '" + path + "' reads condition '" + source.name +
                              "', which exists only in a graph: it cannot run without one",
                          cudaErrorNotSupported, {}, path);
            const cudaGraphConditionalHandle* h = s.find_condition(source.name);
            if (!h) missing("condition", source.name, path);
            put(h, sizeof(*h));
          }
        },
        v.source);
  }

  void resolve_all(std::uint32_t index, std::span<const value> values, const scope& s) {
    const auto count = static_cast<std::uint32_t>(values.size());
    const std::uint32_t first = storage_.take_slots(count);
    for (std::uint32_t k = 0; k < count; ++k) resolve(values[k], s, index, first + k, k);
    node_state& st = nodes_[index];
    st.slots = storage_.slots(first);
    st.slot_sizes = storage_.sizes(first);
    st.slot_count = count;
  }

  /// A kernel node's state, all but its native node: its values resolved
  /// into its slots, its launch computed.
  void prepare_kernel(const kernel_node& p, std::uint32_t index, const scope& s) {
    resolve_all(index, p.args, s);
    node_state& st = nodes_[index];
    const std::string& path = st.path;
    st.kernel.func = const_cast<void*>(p.function);
    st.kernel.gridDim = p.grid;
    st.kernel.blockDim = p.block;
    st.kernel.sharedMemBytes = p.shared_bytes;
    st.kernel.kernelParams = st.slot_count ? st.slots : nullptr;
    st.kernel.extra = nullptr;
    if (p.grid_from || !p.shape_rules.empty()) {
      // One use per parameter the launch follows: a rebind of it
      // recomputes every dimension.
      auto note_use = [&](const std::string& name) {
        param_state& param = param_named(name, path);
        if (param.uses.empty() || param.uses.back().node != index ||
            param.uses.back().slot != grid_slot)
          param.uses.push_back({index, grid_slot});
      };
      if (p.grid_from) note_use(p.grid_from->param);
      for (const shape_rule& r : p.shape_rules) note_use(r.param);
      apply_launch_rules(st.kernel, p, path, [&](std::size_t, const std::string& name) {
        return integral_param_of(param_named(name, path));
      });
    } else if (p.cooperative) {
      native::check_cooperative_grid(p.function, p.grid, p.block, p.shared_bytes, path);
    }
    if (p.keep_alive) owned_.push_back(p.keep_alive);
  }

  /// Adds prepared kernel node `index` to `target` after `deps`, of kinds
  /// `kinds` (none: every dependency full).
  cudaGraphNode_t add_kernel_node(std::uint32_t index, cudaGraph_t target,
                                  std::span<const cudaGraphNode_t> deps,
                                  std::span<const edge_kind> kinds) {
    node_state& st = nodes_[index];
    cudaGraphNode_t h = nullptr;
    if (kinds.empty()) {
      h = native::add_kernel(target, deps, st.kernel, st.path);
    } else {
      edges_.clear();
      for (const edge_kind kind : kinds) edges_.push_back(native::edge_data_of(kind));
      h = native::add_kernel(target, deps, edges_, st.kernel, st.path);
    }
    st.handle = h;
    const kernel_node& k = std::get<kernel_node>(st.spec_node->params);
    if (k.priority != 0 || has_launch_attributes(k))
      native::send_launch_attributes(h, k.priority, attributes_of(k), st.path);
    return h;
  }

  cudaGraphNode_t lower_node(const node& n, std::uint32_t index, cudaGraph_t target,
                             std::span<const cudaGraphNode_t> deps, scope& s) {
    return std::visit(
        [&](const auto& p) -> cudaGraphNode_t {
          using P = std::remove_cvref_t<decltype(p)>;
          const std::string& path = nodes_[index].path;
          if constexpr (std::is_same_v<P, kernel_node>) {
            // Into a graph, kernel nodes are prepared and added in runs
            // (lower_graph); here only an eager run launches one.
            // An eager run launches with cudaLaunchKernel, which sends no
            // launch attribute: a cluster or cooperative kernel would run
            // otherwise than its graph, so it is refused.
            if (has_launch_attributes(p))
              throw error("kernel node '" + path + "' has launch attributes (" + describe_launch_attributes(p) +
                              ") that an eager run does not send; instantiate its graph instead",
                          cudaErrorNotSupported, {}, path);
            prepare_kernel(p, index, s);
            return native::run_kernel(stream_, nodes_[index].kernel, path), nullptr;
          } else if constexpr (std::is_same_v<P, memcpy_node>) {
            const value operands[] = {p.dst, p.src};
            resolve_all(index, operands, s);
            if (eager_) return native::run_memcpy(stream_, memcpy_params_of(nodes_[index], p), path), nullptr;
            return native::add_memcpy(target, deps, memcpy_params_of(nodes_[index], p), path);
          } else if constexpr (std::is_same_v<P, memset_node>) {
            const value operands[] = {p.dst, p.fill};
            resolve_all(index, operands, s);
            if (eager_) return native::run_memset(stream_, memset_params_of(nodes_[index], p), path), nullptr;
            return native::add_memset(target, deps, memset_params_of(nodes_[index], p), path);
          } else if constexpr (std::is_same_v<P, host_node>) {
            resolve_all(index, p.args, s);
            node_state& st = nodes_[index];
            st.host = make_host_call(st, p, failures_);
            owned_.push_back(st.host);
            const cudaHostNodeParams hp = st.host->params();
            if (eager_) return native::run_host(stream_, hp, path), nullptr;
            return native::add_host(target, deps, hp, path);
          } else if constexpr (std::is_same_v<P, captured_node>) {
            resolve_all(index, p.args, s);
            if (eager_) {  // the library calls themselves, on the stream
              const node_state& st = nodes_[index];
              const std::vector<const void*> pointers(st.slots, st.slots + st.slot_count);
              (*p.record)(stream_, pointers);
              return nullptr;
            }
            // Cloned into the graph; the recording is kept, to be given back
            // to the exec after a whole-graph update (see exec.cpp).
            node_state& st = nodes_[index];
            st.captured = record_captured(st, p, capture_stream());
            owned_.push_back(p.record);  // its library's handles and workspace
            return native::add_child(target, deps, st.captured.get(),
                                     native::child_ownership::clone, path);
          } else if constexpr (std::is_same_v<P, child_node>) {
            if (eager_) {
              lower_graph(*p.graph, nullptr, &s, nested_prefix(path, n), true);
              return nullptr;
            }
            unique_graph child = make_graph();
            lower_graph(*p.graph, child.get(), &s, nested_prefix(path, n), true);
            owned_.push_back(p.graph);
            const cudaGraphNode_t h =
                native::add_child(target, deps, child.get(), native::child_ownership::move, path);
            (void)child.release();
            return h;
          } else if constexpr (std::is_same_v<P, empty_node>) {
            if (eager_) return nullptr;  // stream order already joins what came before
            return native::add_empty(target, deps, path);
          } else if constexpr (std::is_same_v<P, event_record_node>) {
            const value operands[] = {p.event};
            resolve_all(index, operands, s);
            if (eager_) return native::run_event_record(stream_, event_at(nodes_[index]), path), nullptr;
            return native::add_event_record(target, deps, event_at(nodes_[index]), path);
          } else if constexpr (std::is_same_v<P, event_wait_node>) {
            const value operands[] = {p.event};
            resolve_all(index, operands, s);
            if (eager_) return native::run_event_wait(stream_, event_at(nodes_[index]), path), nullptr;
            return native::add_event_wait(target, deps, event_at(nodes_[index]), path);
          } else if constexpr (std::is_same_v<P, mem_alloc_node>) {
            if (eager_) {
              void* pointer = native::run_mem_alloc(stream_, p.bytes, path);
              s.buffers[p.buffer] = pointer;
              nodes_[index].allocation = pointer;
              unfreed.push_back(pointer);
              return nullptr;
            }
            native::allocation a = native::add_mem_alloc(target, deps, p.bytes, p.device, path);
            s.buffers[p.buffer] = a.pointer;
            nodes_[index].allocation = a.pointer;
            return a.node;
          } else if constexpr (std::is_same_v<P, mem_free_node>) {
            void* pointer = nullptr;
            if (const void* const* allocated = s.find_buffer(p.buffer)) {
              pointer = const_cast<void*>(*allocated);
            } else {
              param_state& external = external_buffer(p.buffer, path);
              external.uses.push_back({index, freed_slot});
              std::memcpy(&pointer, external.bytes.data(), sizeof(pointer));
            }
            if (eager_) {
              native::run_mem_free(stream_, pointer, path);
              std::erase(unfreed, pointer);
              return nullptr;
            }
            return native::add_mem_free(target, deps, pointer, path);
          } else {
            static_assert(std::is_same_v<P, conditional_node>);
            if (eager_)
              throw error("conditional node '" + path +
                              "' cannot run without a graph: its condition is set on the device "
                              "while the graph runs",
                          cudaErrorNotSupported, {}, path);
            const cudaGraphConditionalHandle* h = s.find_condition(p.condition);
            if (!h) missing("condition", p.condition, path);
            std::vector<cudaGraph_t> bodies(p.bodies.size(), nullptr);
            const std::string node_path = path;  // nodes_ grows below
            cudaGraphNode_t c = native::add_conditional(
                target, deps, *h, p.kind, static_cast<unsigned>(p.bodies.size()), bodies, node_path);
            for (std::size_t b = 0; b < p.bodies.size(); ++b)
              lower_graph(p.bodies[b], bodies[b], &s, nested_prefix(node_path, n, b), true);
            return c;
          }
        },
        n.params);
  }

  param_state& param_named(const std::string& name, const std::string& node_path) {
    if (param_state* p = find_param(params_, param_index_, name)) return *p;
    missing("parameter", name, node_path);
  }

  /// The parameter holding an external buffer's address.
  param_state& external_buffer(const std::string& name, const std::string& node_path) {
    for (param_state& p : params_)
      if (p.external_buffer && p.name == name) return p;
    missing("buffer", name, node_path);
  }

  cudaStream_t capture_stream() {
    if (!capture_stream_) capture_stream_ = make_stream();
    return capture_stream_.get();
  }

  const check_detail::checked_plans& plans_;
  std::vector<param_state>& params_;
  const name_map<std::uint32_t>& param_index_;
  std::vector<node_state>& nodes_;
  value_storage& storage_;
  std::vector<std::shared_ptr<const void>>& owned_;
  const std::shared_ptr<host_failure_sink>& failures_;
  unique_stream& capture_stream_;
  std::span<const cudaGraphNode_t> root_dependencies_;  ///< of the top-level graph's roots
  std::vector<cudaGraphEdgeData> edges_;  ///< scratch: a kernel node's edge data
  bool eager_ = false;  ///< each node runs as stream work on stream_, no graph
  cudaStream_t stream_ = nullptr;  ///< (the null stream is a stream)
};

}  // namespace

void value_storage::reserve(std::uint32_t slots, std::size_t bytes) {
  bytes_.assign(bytes, std::byte{0});
  slots_.assign(slots, nullptr);
  sizes_.assign(slots, 0);
}

void value_storage::refuse_overflow() {
  throw error("internal error: value storage is smaller than the spec's values");
}

value_storage value_storage::copy() const {
  value_storage out;
  out.bytes_ = bytes_;
  out.sizes_ = sizes_;
  out.slots_.resize(slots_.size());
  for (std::size_t k = 0; k < slots_.size(); ++k)
    out.slots_[k] = slots_[k] ? out.bytes_.data() + (static_cast<std::byte*>(slots_[k]) - bytes_.data())
                              : nullptr;
  out.bytes_used_ = bytes_used_;
  out.slots_used_ = slots_used_;
  return out;
}

void* pointer_at(const node_state& st, std::size_t slot) {
  void* p = nullptr;
  std::memcpy(&p, st.slots[slot], sizeof(p));
  return p;
}

cudaEvent_t event_at(const node_state& st) {
  cudaEvent_t e = nullptr;
  std::memcpy(&e, st.slots[0], sizeof(e));
  return e;
}

cudaMemsetParams memset_params_of(const node_state& st, const memset_node& p) {
  unsigned fill = 0;  // the low element_size bytes of the fill value
  std::memcpy(&fill, st.slots[1], std::min<std::size_t>(sizeof(fill), st.slot_sizes[1]));
  return native::memset_params(pointer_at(st, 0), fill, p.element_size, p.width, p.height,
                               p.pitch_bytes);
}

cudaMemcpy3DParms memcpy_params_of(const node_state& st, const memcpy_node& p) {
  return native::memcpy_1d_params(pointer_at(st, 0), pointer_at(st, 1), p.bytes, p.kind);
}

void refuse_launch_rule(const std::string& path, const shape_rule& r, std::int64_t value,
                        std::uint64_t limit) {
  throw error("kernel node '" + path + "': shape rule " + std::string(launch_dim_name(r.dim)) +
                  " = ceil(" + r.param + " * " + std::to_string(r.multiplier) + " / " +
                  std::to_string(r.divisor) + ") gives more than " + std::to_string(limit) +
                  " with " + r.param + " = " + std::to_string(value) + ", CUDA's limit",
              cudaErrorInvalidConfiguration, {}, path);
}

void refuse_launch_block(const std::string& path, const dim3& b) {
  throw error("kernel node '" + path + "': its shape rules give a block of " + std::to_string(b.x) +
                  "x" + std::to_string(b.y) + "x" + std::to_string(b.z) +
                  " threads; CUDA allows at most 1024",
              cudaErrorInvalidConfiguration, {}, path);
}

std::shared_ptr<native::host_call> make_host_call(const node_state& st, const host_node& p,
                                                  const std::shared_ptr<host_failure_sink>& failures) {
  // The callable gets its own snapshot of the arguments, so that a rebind
  // never changes what an earlier, still pending launch sees.
  struct invocation {
    std::shared_ptr<const host_function> function;
    std::vector<std::vector<std::byte>> values;
    std::vector<const void*> pointers;
  };
  auto inv = std::make_shared<invocation>();
  inv->function = p.function;
  for (std::uint32_t k = 0; k < st.slot_count; ++k) {
    const auto* first = static_cast<const std::byte*>(st.slots[k]);
    inv->values.emplace_back(first, first + st.slot_sizes[k]);
  }
  for (const auto& v : inv->values) inv->pointers.push_back(v.data());
  auto call = std::make_shared<native::host_call>();
  call->node = st.path;
  call->failures = failures;
  call->body = [inv] { (*inv->function)(inv->pointers); };
  return call;
}

unique_graph record_captured(const node_state& st, const captured_node& p, cudaStream_t stream) {
  const std::vector<const void*> pointers(st.slots, st.slots + st.slot_count);
  try {
    return native::record_by_capture(stream, st.path,
                                     [&](cudaStream_t s) { (*p.record)(s, pointers); });
  } catch (const error& e) {
    if (!e.node().empty()) throw;
    throw error("captured node '" + st.path + "': " + e.what(), e.code(), e.call(), st.path);
  } catch (const std::exception& e) {
    // The user's own exception stays reachable (std::rethrow_if_nested)
    // inside one that names the node.
    std::throw_with_nested(error("captured node '" + st.path + "': " + e.what(), cudaSuccess,
                                 {}, st.path));
  }
}

void lower_into(const graph_spec& spec, const check_detail::checked_plans& plans, cudaGraph_t graph,
                const lowering_target& into, std::span<const cudaGraphNode_t> root_dependencies) {
  into.storage.reserve(plans.value_slots, plans.value_bytes);
  into.nodes.reserve(plans.total_nodes);
  lowerer l(plans, into, root_dependencies);
  const native::same_device_batch batch;
  l.lower_graph(spec, graph, nullptr, "", false);
}

std::vector<void*> run_into_stream(const graph_spec& spec, const check_detail::checked_plans& plans,
                                   cudaStream_t stream, const lowering_target& into) {
  into.storage.reserve(plans.value_slots, plans.value_bytes);
  into.nodes.reserve(plans.total_nodes);
  lowerer l(plans, into, {}, std::optional<cudaStream_t>(stream));
  try {
    l.lower_graph(spec, nullptr, nullptr, "", false);
  } catch (...) {
    // What ran so far stays enqueued; its memory goes back after it.
    for (void* p : l.unfreed) (void)native::api().free_async(p, stream);
    throw;
  }
  return std::move(l.unfreed);
}

void bind_params(const graph_spec& spec, std::span<const binding> bindings,
                 std::vector<param_state>& params, name_map<std::uint32_t>& index) {
  auto declare = [&](const graph_spec& g, auto& self) -> void {
    for (const param_decl& d : g.params)
      if (index.find(d.name) == index.end()) {
        index.emplace(d.name, static_cast<std::uint32_t>(params.size()));
        params.push_back(
            param_state{d.name, d.type, std::vector<std::byte>(d.type.size), false, {}, d.external_buffer});
      }
    for (const node& n : g.nodes) {
      if (auto* c = std::get_if<child_node>(&n.params)) self(*c->graph, self);
      if (auto* c = std::get_if<conditional_node>(&n.params))
        for (const graph_spec& b : c->bodies) self(b, self);
    }
  };
  declare(spec, declare);
  for (const binding& b : bindings) {
    auto it = index.find(b.name);
    if (it == index.end()) throw error("binding for unknown parameter '" + b.name + "'");
    param_state& p = params[it->second];
    if (b.bytes.size() != p.bytes.size())
      throw error("parameter '" + b.name + "' is declared " + p.type.name() + ", bound to " +
                  b.type.name());
    p.bytes = b.bytes;
    p.bound = true;
  }
  for (const param_state& p : params)
    if (!p.bound) throw error("parameter '" + p.name + "' (" + p.type.name() + ") is not bound");
}

}  // namespace cudag::detail
