#pragma once
// An instantiated DSL graph. Owns the exec core (launch, upload, replay
// count, host failures), a copy of the declaration (callables, run-time
// kernels) and one arena holding every node's typed argument storage, so
// nothing the CUDA graph points at can dangle. Move-only.
//
//   auto ex = instantiate(g, x = d_x, n = count);   // every parameter bound
//   ex.launch(stream);
//   ex.rebind(x = d_x2);    // every node reading x updated in place
//   ex.set_enabled<"scale">(false);
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl/graph.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/rebind.hpp"

namespace cudag::dsl {

// Never defined: compile errors of binding and of node access by name.
template <fixed_string Parameter>
struct missing_binding_for_parameter;
template <fixed_string Parameter>
struct graph_has_no_parameter;
template <fixed_string Parameter>
struct parameter_bound_twice;
template <fixed_string Parameter>
struct binding_type_differs_from_graph_parameter;
template <fixed_string Node>
struct graph_has_no_node;
template <fixed_string Node>
struct node_kind_cannot_be_disabled;
template <fixed_string Buffer>
struct graph_allocates_no_buffer;

// rebind_path and the rule that picks between exec setters and one
// whole-graph update (prefer_whole_graph_update) are shared with the spec
// exec: see cudag/exec_core.hpp.
using cudag::rebind_path;

template <class G, class B>
consteval bool binding_fits() {
  constexpr std::uint64_t hash = name_hash(B::name.view());
  constexpr std::uint32_t slot = G::shape.param_slot(hash);
  if constexpr (slot == no_index) {
    return sizeof(graph_has_no_parameter<B::name>) == 0;
  } else if constexpr (G::shape.params[slot].type != type_id_of<typename B::value_type>) {
    return sizeof(binding_type_differs_from_graph_parameter<B::name>) == 0;
  }
  return true;
}

template <class G, std::size_t Slot, class... B>
consteval bool slot_bound() {
  constexpr std::uint64_t hash = G::shape.params[Slot].hash;
  constexpr std::size_t times = ((name_hash(B::name.view()) == hash ? 1 : 0) + ... + 0);
  constexpr auto name = G::shape.params[Slot].name;
  if constexpr (times == 0)
    return sizeof(missing_binding_for_parameter<to_fixed<name.size()>(name)>) == 0;
  else if constexpr (times > 1)
    return sizeof(parameter_bound_twice<to_fixed<name.size()>(name)>) == 0;
  return true;
}

template <class G, class... B, std::size_t... Slot>
consteval bool all_bound(std::index_sequence<Slot...>) {
  return (slot_bound<G, Slot, B...>() && ...);
}

/// Everything an instantiated DSL graph points into, in one allocation: a
/// copy of the declaration, bound parameter bytes, buffer pointers,
/// condition handles and every node's typed storage.
template <class G>
struct exec_arena {
  // One store per node (every storage's defaults): straight-line glue.
  CUDAG_DSL_STRAIGHT_LINE_GLUE explicit exec_arena(const G& g) : graph(g) {
    state.values = value_tables{params, buffers.data(), conditions.data()};
  }
  template <class B>
  void write(const B& b) noexcept {
    constexpr std::size_t offset = G::shape.param_offset(name_hash(B::name.view()));
    std::memcpy(params + offset, &b.value, sizeof(b.value));
  }
  /// Writes a binding; false when the parameter already held that value.
  template <class B>
  bool write_changed(const B& b) noexcept {
    constexpr std::size_t offset = G::shape.param_offset(name_hash(B::name.view()));
    if (std::memcmp(params + offset, &b.value, sizeof(b.value)) == 0) return false;
    std::memcpy(params + offset, &b.value, sizeof(b.value));
    return true;
  }

  G graph;
  alignas(16) std::byte params[G::shape.param_bytes > 0 ? G::shape.param_bytes : 1] = {};
  std::array<void*, G::sizes.buffers> buffers{};
  std::array<cudaGraphConditionalHandle, G::sizes.conditions> conditions{};
  // Default-initialised: every node kind writes its storage before it reads
  // it (lowering fills it), and value-initialising one item at a time cost
  // g++ 3 s at 1,500 items.
  graph_storage<G> nodes;
  lowering_state state{};
  rebind_state rebind;  ///< template_stale indexed by creation rank
};

template <class G>
class exec;

/// A DSL graph lowered into a CUDA graph, not yet instantiated: what
/// lower() returns, and what instantiate() instantiates.
template <class G>
class lowered {
 public:
  [[nodiscard]] cudaGraph_t native_graph() const noexcept { return graph_.get(); }

 private:
  template <class H, class... B>
  friend lowered<H> lower_with(const H&, const B&...);
  friend class exec<G>;
  explicit lowered(const G& graph) : arena_(std::make_unique<exec_arena<G>>(graph)) {
    arena_->state.host_failures = core_.host_failures();
    arena_->state.retired = core_.retired();
  }
  std::unique_ptr<exec_arena<G>> arena_;
  exec_core core_;  ///< not instantiated yet; owns the host-failure sink
  unique_graph graph_;
};

/// Binds every parameter and lowers the graph: a walk in the order the
/// compiler computed, one cudaGraphAdd*Node call per node.
template <class G, class... B>
[[nodiscard]] lowered<G> lower_with(const G& graph, const B&... bindings)
#if CUDAG_DSL_DEVICE_PASS
{  // see graph.hpp: host-only work is not done in the device pass
  (void)graph, ((void)bindings, ...);
  device_pass_stub();
}
#else
{
  static_assert(top_level_shape_fits<G>());
  static_assert((binding_fits<G, B>() && ...));
  static_assert(all_bound<G, B...>(std::make_index_sequence<G::sizes.params>{}));
  lowered<G> out(graph);
  (out.arena_->write(bindings), ...);
  out.graph_ = make_graph();
  lower_graph(out.arena_->graph, out.arena_->nodes, out.arena_->state, out.graph_.get());
  return out;
}
#endif
template <class... Items, class... B>
[[nodiscard]] lowered<graph_t<Items...>> lower(const graph_t<Items...>& graph, const B&... bindings) {
  return lower_with(graph, bindings...);
}

/// Names a top-level node by its handle (handles[i] is names[i]).
struct node_namer {
  const cudaGraphNode_t* handles;
  const std::string_view* names;
  std::size_t count;
  [[nodiscard]] std::string operator()(cudaGraphNode_t node) const {
    for (std::size_t v = 0; v < count; ++v)
      if (handles[v] == node) return std::string(names[v]);
    return node ? "a node inside a child graph or body" : "";
  }
};

template <class G>
class exec {
 public:
  static constexpr std::size_t node_count = G::node_count;

  /// Instantiates a lowered graph, taking over everything it points into.
  explicit exec(lowered<G>&& built, const instantiate_options& options)
      : arena_(std::move(built.arena_)), core_(std::move(built.core_)) {
    core_.reinstantiate(std::move(built.graph_), options, namer());
    arena_->state.exec = core_.native_exec();
    arena_->rebind.template_stale.assign(G::node_count, false);
  }

  exec(exec&&) noexcept = default;
  exec& operator=(exec&&) noexcept = default;

  void launch(cudaStream_t stream) { core_.launch(stream); }
  void upload(cudaStream_t stream) { core_.upload(stream); }
  /// Waits for `stream`, then rethrows a host node's failure (naming it).
  void synchronize(cudaStream_t stream) { core_.synchronize(stream); }
  [[nodiscard]] std::uint64_t replay_count() const noexcept { return core_.replay_count(); }
  [[nodiscard]] std::string driver_dot(unsigned flags = cudaGraphDebugDotFlagsVerbose) const {
    return core_.driver_dot(flags);
  }
  [[nodiscard]] exec_core& core() noexcept { return core_; }
  [[nodiscard]] cudaGraphExec_t native_exec() const noexcept { return core_.native_exec(); }
  [[nodiscard]] cudaGraph_t native_graph() const noexcept { return core_.native_graph(); }

  /// Rebinds parameters (`x = d_x2, n = 512`), type-checked at compile time,
  /// in one pass: every node reading a parameter whose value changed is
  /// recomputed once, then sent to CUDA by the shared rebind algorithm
  /// (cudag/rebind.hpp; the same native calls as the spec exec makes). Safe
  /// while earlier launches run: they keep the values they were launched with.
  template <class... B>
  rebind_path rebind(const B&... bindings) {
    static_assert((binding_fits<G, B>() && ...));
    using readers = rebind_readers<G, name_hash(B::name.view())...>;
    const std::array<bool, sizeof...(B)> changed{arena_->write_changed(bindings)...};
    std::array<std::uint32_t, readers::entries.size()> dirty{};
    std::size_t count = 0;
    for (const auto& e : readers::entries) {
      bool reads_changed = false;
      for (std::size_t b = 0; b < sizeof...(B); ++b) reads_changed |= e.reads[b] && changed[b];
      if (reads_changed) dirty[count++] = e.rank;
    }
    rebind_view view(*this, readers::hashes);
    return apply_rebind(core_, view, std::span<const std::uint32_t>(dirty.data(), count),
                        arena_->rebind);
  }

  /// automatic: prefer_whole_graph_update(); the others force one path.
  void set_rebind_policy(rebind_policy policy) noexcept { arena_->rebind.policy = policy; }

  /// Enables or disables a kernel, memset or memcpy node, by name.
  template <fixed_string Name>
  void set_enabled(bool enabled) {
    constexpr std::uint32_t v = checked_toggle_index<Name>();
    native::set_enabled(core_.native_exec(), arena_->nodes.handles[v], enabled, Name.view());
  }
  template <fixed_string Name>
  [[nodiscard]] bool enabled() const {
    constexpr std::uint32_t v = checked_toggle_index<Name>();
    return native::enabled(core_.native_exec(), arena_->nodes.handles[v], Name.view());
  }
  /// The device address of a buffer the top-level graph's mem_alloc node
  /// produced, typed and offset as the view says: `e.buffer(tmp + 16)`.
  /// Fixed for the life of this exec; for reading results back after a
  /// launch (see the spec exec's buffer_address for the lifetime).
  /// (A view's type, not buffer_t<Name, T>, is deduced: nvcc cannot deduce
  /// a class-type template argument from the view.)
  template <class View>
    requires std::is_same_v<typename View::dsl_tag, buffer_tag>
  [[nodiscard]] typename View::element_type* buffer(View view) const {
    constexpr std::uint32_t slot = G::shape.buffer_slot(name_hash(View::name.view()));
    if constexpr (slot == no_index) {
      static_assert(sizeof(graph_allocates_no_buffer<View::name>) == 0);
      return nullptr;
    } else {
      return static_cast<typename View::element_type*>(arena_->state.values.buffers[slot]) +
             view.offset;
    }
  }

  /// The CUDA node created for a top-level node.
  template <fixed_string Name>
  [[nodiscard]] cudaGraphNode_t node_handle() const {
    constexpr std::uint32_t v = G::shape.node_index(Name.view());
    if constexpr (v == no_index) {
      static_assert(sizeof(graph_has_no_node<Name>) == 0);
      return nullptr;
    } else {
      return arena_->nodes.handles[v];
    }
  }


 private:
  using arena = exec_arena<G>;

  template <fixed_string Name>
  static consteval std::uint32_t checked_toggle_index() {
    constexpr std::uint32_t v = G::shape.node_index(Name.view());
    if constexpr (v == no_index) {
      static_assert(sizeof(graph_has_no_node<Name>) == 0);
    } else {
      constexpr node_kind k = G::shape.kinds[v];
      if constexpr (k != node_kind::kernel && k != node_kind::memset && k != node_kind::memcpy)
        static_assert(sizeof(node_kind_cannot_be_disabled<Name>) == 0);
    }
    return v;
  }

  /// This graph's nodes, by creation rank, as the shared rebind algorithm
  /// sees them.
  class rebind_view final : public rebind_nodes {
   public:
    rebind_view(exec& owner, param_hashes hashes) : owner_(owner), hashes_(hashes) {}
    std::size_t top_level_count() const noexcept override { return G::node_count; }
    bool needs_whole_update(std::uint32_t rank) const noexcept override {
      const node_kind k = G::shape.kinds[G::shape.order[rank]];
      return k == node_kind::child || k == node_kind::conditional;
    }
    bool captured(std::uint32_t rank) const noexcept override {
      return G::shape.kinds[G::shape.order[rank]] == node_kind::captured;
    }
    void push(std::uint32_t rank, native::param_target to) override {
      arena& a = *owner_.arena_;
      const std::uint32_t v = G::shape.order[rank];
      const node_entry& e = a.nodes.entries[G::shape.position[v]];
      e.ops->update(e.body, e.storage, &a.state, a.nodes.handles[v], to, G::shape.names[v], hashes_);
    }
    void restore_captured(cudaGraphExec_t) override {
      arena& a = *owner_.arena_;
      for (std::uint32_t rank = 0; rank < G::node_count; ++rank) {
        const std::uint32_t v = G::shape.order[rank];
        if (G::shape.kinds[v] != node_kind::captured) continue;
        const node_entry& e = a.nodes.entries[G::shape.position[v]];
        e.ops->reapply(e.body, e.storage, &a.state, a.nodes.handles[v], G::shape.names[v]);
      }
    }
    std::string name_of(cudaGraphNode_t node) const override { return owner_.node_name_of(node); }

   private:
    exec& owner_;
    param_hashes hashes_;
  };

  /// A callable naming this graph's nodes. Not a lambda: a lambda here
  /// would be named (in its type information) by the whole graph type.
  [[nodiscard]] node_namer namer() const noexcept {
    return node_namer{arena_->nodes.handles.data(), G::shape.names.data(), G::node_count};
  }
  [[nodiscard]] std::string node_name_of(cudaGraphNode_t node) const { return namer()(node); }

  // Destruction order: the exec core (graph and executable graph) goes
  // first, then the arena the graph's nodes point into.
  std::unique_ptr<arena> arena_;
  exec_core core_;
};

/// Lowers and instantiates `graph` with every parameter bound by name.
template <class G, class... B>
[[nodiscard]] exec<G> instantiate_with(const G& graph, const instantiate_options& options,
                                       const B&... bindings)
#if CUDAG_DSL_DEVICE_PASS
{
  (void)graph, (void)options, ((void)bindings, ...);
  device_pass_stub();
}
#else
{
  return exec<G>(lower_with(graph, bindings...), options);
}
#endif

/// The exec of graph object `Graph`, for naming it where `auto` cannot be
/// used (a class member): `exec_of<g> ex = instantiate(g, x = d_x);`.
///
/// A class of its own, named by the graph object, not exec<decltype(g)> nor
/// an alias of it: nvcc's front end writes each decltype in a .cu file (and
/// an alias used as a template argument) out as the full graph type for the
/// host compiler, whose names (fixed_string template arguments) it writes as
/// identifiers it never declares (`'__T1' was not declared in this scope`).
/// `exec_of<g>` is written out as itself. Under nvcc, declare `g` (and any
/// edge table it uses) `inline constexpr` where a class holds `exec_of<g>`:
/// a namespace-scope constexpr variable has internal linkage, and g++ warns
/// (-Wsubobject-linkage) about a member whose type has internal linkage.
template <const auto& Graph>
class exec_of : public exec<std::remove_cvref_t<decltype(Graph)>> {
 public:
  using graph_type = std::remove_cvref_t<decltype(Graph)>;
  using base = exec<graph_type>;
  exec_of(base&& ex) noexcept : base(std::move(ex)) {}  // NOLINT: implicit by design
};

template <class... Items, class... B>
[[nodiscard]] exec<graph_t<Items...>> instantiate(const graph_t<Items...>& graph, const B&... bindings) {
  return instantiate_with(graph, instantiate_options{}, bindings...);
}
/// Instantiates a graph lowered earlier.
template <class G>
[[nodiscard]] exec<G> instantiate(lowered<G>&& built, const instantiate_options& options = {}) {
  return exec<G>(std::move(built), options);
}

}  // namespace cudag::dsl
