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

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cudag/dsl/graph.hpp"
#include "cudag/device_graph.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/lean_std.hpp"
#include "cudag/rebind.hpp"

namespace cudag::dsl {

// Compile errors of binding and of node access by name: the checked calls
// (instantiate, lower, rebind, set_enabled, enabled, node_handle, buffer)
// return one of these types instead of their result, and its destructor is
// deleted (private under nvcc), so the statement that uses the call fails
// (see or_error in graph.hpp): "use of deleted function
// 'missing_binding_for_parameter<"n">::~missing_binding_for_parameter()'".
template <fixed_string Parameter>
struct missing_binding_for_parameter {
  CUDAG_DSL_ERROR_DESTRUCTOR(missing_binding_for_parameter);
};
template <fixed_string Parameter>
struct graph_has_no_parameter {
  CUDAG_DSL_ERROR_DESTRUCTOR(graph_has_no_parameter);
};
template <fixed_string Parameter>
struct parameter_bound_twice {
  CUDAG_DSL_ERROR_DESTRUCTOR(parameter_bound_twice);
};
template <fixed_string Parameter>
struct binding_type_differs_from_graph_parameter {
  CUDAG_DSL_ERROR_DESTRUCTOR(binding_type_differs_from_graph_parameter);
};
template <fixed_string Node>
struct graph_has_no_node {
  CUDAG_DSL_ERROR_DESTRUCTOR(graph_has_no_node);
};
template <fixed_string Node>
struct node_kind_cannot_be_disabled {
  CUDAG_DSL_ERROR_DESTRUCTOR(node_kind_cannot_be_disabled);
};
template <fixed_string Buffer>
struct graph_allocates_no_buffer {
  CUDAG_DSL_ERROR_DESTRUCTOR(graph_allocates_no_buffer);
};

// rebind_path and the rule that picks between exec setters and one
// whole-graph update (prefer_whole_graph_update) are shared with the spec
// exec: see cudag/exec_core.hpp.
using cudag::rebind_path;

namespace detail {

/// The error type of binding B to G (a value that does not convert to the
/// parameter's type, a parameter G does not read, or one G reads with
/// another type), or void.
template <class G, class B>
consteval auto binding_error_of() {
  constexpr std::uint32_t slot = G::shape.param_slot(name_hash(B::name.view()));
  if constexpr (requires { typename B::given_type; })  // a mismatched_value
    return std::type_identity<parameter_bound_with_wrong_type<B::name, typename B::value_type,
                                                              typename B::given_type>>{};
  else if constexpr (slot == no_index)
    return std::type_identity<graph_has_no_parameter<B::name>>{};
  else if constexpr (G::shape.params[slot].type != type_id_of<typename B::value_type>)
    return std::type_identity<binding_type_differs_from_graph_parameter<B::name>>{};
  else
    return std::type_identity<void>{};
}
template <class G>
consteval auto first_binding_error() {
  return std::type_identity<void>{};
}
template <class G, class B0, class... B>
consteval auto first_binding_error() {
  using error = typename decltype(binding_error_of<G, B0>())::type;
  if constexpr (!std::is_void_v<error>)
    return std::type_identity<error>{};
  else
    return first_binding_error<G, B...>();
}

/// The first of G's parameters that bindings B... bind other than once:
/// its slot and how many times they bind it ({no_index, 1} when none).
template <class G, class... B>
consteval std::pair<std::uint32_t, std::size_t> first_unbound_slot() {
  const std::array<std::uint64_t, sizeof...(B)> given{name_hash(B::name.view())...};
  // `!=`: nvcc warns (#186-D) about `slot < 0` for a graph without parameters.
  for (std::uint32_t slot = 0; slot != G::sizes.params; ++slot) {
    std::size_t times = 0;
    for (const std::uint64_t h : given) times += h == G::shape.params[slot].hash ? 1 : 0;
    if (times != 1) return {slot, times};
  }
  return {no_index, 1};
}

/// The error type of binding B... to G for rebind(): each binding names a
/// parameter G reads, with its type; or void. (Checked in nvcc's device pass
/// too, which compiles rebind() whole: its host pass does not report a
/// discarded call's result, `e.rebind(z = 1);`, which only the host compiler
/// then refuses.)
template <class G, class... B>
using rebinding_error_t = typename decltype(first_binding_error<G, B...>())::type;

/// The error type of instantiating or lowering G with bindings B..., or
/// void: a top-level shape problem, then a binding that does not fit, then a
/// parameter bound other than once.
template <class G, class... B>
consteval auto instantiation_error() {
  using top = top_level_error_t<G>;
  using binding = rebinding_error_t<G, B...>;
  if constexpr (CUDAG_DSL_DEVICE_PASS) {
    return std::type_identity<void>{};  // the device pass trusts the host pass
  } else if constexpr (!std::is_void_v<top>) {
    return std::type_identity<top>{};
  } else if constexpr (!std::is_void_v<binding>) {
    return std::type_identity<binding>{};
  } else {
    constexpr auto unbound = first_unbound_slot<G, B...>();
    if constexpr (unbound.first == no_index) {
      return std::type_identity<void>{};
    } else {
      constexpr auto name = G::shape.params[unbound.first].name;
      if constexpr (unbound.second == 0)
        return std::type_identity<missing_binding_for_parameter<to_fixed<name.size()>(name)>>{};
      else
        return std::type_identity<parameter_bound_twice<to_fixed<name.size()>(name)>>{};
    }
  }
}
template <class G, class... B>
using instantiation_error_t = typename decltype(instantiation_error<G, B...>())::type;

/// The error type of naming node Name of G (a node G lacks; for set_enabled
/// and enabled, also one of a kind that cannot be disabled), or void.
template <class G, fixed_string Name, bool Toggle>
consteval auto node_name_error() {
  constexpr std::uint32_t v = G::shape.node_index(Name.view());
  if constexpr (v == no_index) {
    return std::type_identity<graph_has_no_node<Name>>{};
  } else if constexpr (Toggle) {
    constexpr node_kind k = G::shape.kinds[v];
    if constexpr (k != node_kind::kernel && k != node_kind::memset && k != node_kind::memcpy)
      return std::type_identity<node_kind_cannot_be_disabled<Name>>{};
    else
      return std::type_identity<void>{};
  } else {
    return std::type_identity<void>{};
  }
}
template <class G, fixed_string Name, bool Toggle>
using node_name_error_t = typename decltype(node_name_error<G, Name, Toggle>())::type;

/// The error type of reading buffer View of G (one no top-level mem_alloc
/// node of G allocates), or void.
template <class G, class View>
consteval auto buffer_error() {
  if constexpr (G::shape.buffer_slot(name_hash(View::name.view())) == no_index)
    return std::type_identity<graph_allocates_no_buffer<View::name>>{};
  else
    return std::type_identity<void>{};
}

/// Everything an instantiated DSL graph points into, in one allocation: a
/// copy of the declaration, bound parameter bytes, buffer pointers,
/// condition handles and every node's typed storage.
template <class G>
struct exec_arena {
  // One store per node (every storage's defaults): straight-line glue.
  CUDAG_DSL_STRAIGHT_LINE_GLUE explicit exec_arena(const G& g) : graph(g) {
    state.values = value_tables{params, buffers.data(), conditions.data()};
    state.buffer_bytes = buffer_bytes.data();
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
  std::array<std::size_t, G::sizes.buffers> buffer_bytes{};
  std::array<cudaGraphConditionalHandle, G::sizes.conditions> conditions{};
  // Default-initialised: every node kind writes its storage before it reads
  // it (lowering fills it), and value-initialising one item at a time cost
  // g++ 3 s at 1,500 items.
  graph_storage<G> nodes;
  lowering_state state{};
  rebind_state rebind;  ///< template_stale indexed by creation rank
};

/// Owns an exec arena through a plain pointer and its deleter function.
/// std::unique_ptr<exec_arena<G>> made about 45 functions and classes named
/// by the graph type (its tuple, pointer, deleter, make_unique, moves), and
/// every such name spells each item of the declaration: g++ mangles each one
/// (at 512 nodes, about 100 KB a name).
class arena_owner {
 public:
  arena_owner() noexcept = default;
  arena_owner(void* arena, void (*destroy)(void*) noexcept) noexcept
      : arena_(arena), destroy_(destroy) {}
  arena_owner(arena_owner&& other) noexcept
      : arena_(std::exchange(other.arena_, nullptr)), destroy_(other.destroy_) {}
  arena_owner& operator=(arena_owner&& other) noexcept {
    if (this != &other) {
      reset();
      arena_ = std::exchange(other.arena_, nullptr);
      destroy_ = other.destroy_;
    }
    return *this;
  }
  ~arena_owner() { reset(); }

  [[nodiscard]] void* get() const noexcept { return arena_; }

 private:
  void reset() noexcept {
    if (arena_) destroy_(arena_);
    arena_ = nullptr;
  }
  void* arena_ = nullptr;
  void (*destroy_)(void*) noexcept = nullptr;
};

template <class G>
void destroy_arena(void* arena) noexcept {
  delete static_cast<exec_arena<G>*>(arena);
}
/// A new arena holding a copy of `graph`, owned.
template <class G>
[[nodiscard]] arena_owner make_arena(const G& graph) {
  return arena_owner(new exec_arena<G>(graph), &destroy_arena<G>);
}

}  // namespace detail

template <class G>
class exec;
template <class G>
class lowered;

namespace detail {
template <class G, class... B>
lowered<G> lower_with(const G& graph, const B&... bindings);
}  // namespace detail

/// A DSL graph lowered into a CUDA graph, not yet instantiated: what
/// lower() returns, and what instantiate() instantiates.
template <class G>
class lowered {
 public:
  [[nodiscard]] cudaGraph_t native_graph() const noexcept { return graph_.get(); }

 private:
  template <class H, class... B>
  friend lowered<H> detail::lower_with(const H&, const B&...);
  friend class exec<G>;
  explicit lowered(const G& graph) : arena_(detail::make_arena(graph)) {
    arena().state.host_failures = core_.host_failures();
    arena().state.retired = core_.retired();
  }
  [[nodiscard]] detail::exec_arena<G>& arena() const noexcept {
    return *static_cast<detail::exec_arena<G>*>(arena_.get());
  }
  detail::arena_owner arena_;
  exec_core core_;  ///< not instantiated yet; owns the host-failure sink
  unique_graph graph_;
};

namespace detail {

/// Binds every parameter and lowers the graph: a walk in the order the
/// compiler computed, one native add call per node (the per-kind table).
template <class G, class... B>
[[nodiscard]] lowered<G> lower_with(const G& graph, const B&... bindings)
#if CUDAG_DSL_DEVICE_PASS
{  // see graph.hpp: host-only work is not done in the device pass
  (void)graph, ((void)bindings, ...);
  detail::device_pass_stub();
}
#else
{
  // lower() and instantiate_with() return the error type before this runs.
  static_assert(std::is_void_v<instantiation_error_t<G, B...>>);
  lowered<G> out(graph);
  exec_arena<G>& a = out.arena();
  (a.write(bindings), ...);
  // Two pointer parameters bound to one address are one memory: where the
  // graph does not order what touches it, refused as check() refuses it.
  if constexpr (((std::is_pointer_v<typename B::value_type>) || ...)) {
    constexpr std::array<std::uint64_t, sizeof...(B)> bound{name_hash(B::name.view())...};
    const std::span<const ref_info> params(G::shape.params);
    bool aliased = false;
    for (const std::uint64_t name : bound)
      aliased = aliased || aliases_another_pointer(params, G::shape.param_offsets.data(), a.params, name);
    if (aliased) refuse_races_of_aliases(to_spec(a.graph), G::shape.params, G::shape.param_offsets.data(), a.params);
  }
  out.graph_ = make_graph();
  const native::same_device_batch batch;
  lower_graph(a.graph, a.nodes, a.state, out.graph_.get());
  return out;
}
#endif
}  // namespace detail

/// With a mistake (a missing binding, a top-level shape problem), returns
/// its error type instead (see or_error in graph.hpp).
template <class... Items, class... B>
[[nodiscard]] detail::or_error<detail::instantiation_error_t<graph_t<Items...>, B...>,
                               lowered<graph_t<Items...>>>
lower(const graph_t<Items...>& graph, const B&... bindings) {
  if constexpr (!std::is_void_v<detail::instantiation_error_t<graph_t<Items...>, B...>>) {
    (void)graph, ((void)bindings, ...);
    detail::returns_error();
  } else {
    return detail::lower_with(graph, bindings...);
  }
}

namespace detail {

/// Whether parameter `rebound` (by hash), a pointer other than null, now
/// holds the address another pointer parameter holds: two names for one
/// memory. `params`: the graph's parameter table, `offsets` each one's
/// place in `bytes`.
[[nodiscard]] inline bool aliases_another_pointer(std::span<const ref_info> params,
                                                  const std::size_t* offsets, const std::byte* bytes,
                                                  std::uint64_t rebound) noexcept {
  std::size_t slot = params.size();
  for (std::size_t p = 0; p < params.size(); ++p)
    if (params[p].hash == rebound) slot = p;
  if (slot == params.size() || !params[slot].runtime_type().is_pointer) return false;
  const std::byte* const address = bytes + offsets[slot];
  const void* const null = nullptr;
  if (std::memcmp(address, &null, sizeof(void*)) == 0) return false;
  for (std::size_t p = 0; p < params.size(); ++p)
    if (p != slot && params[p].runtime_type().is_pointer &&
        std::memcmp(bytes + offsets[p], address, sizeof(void*)) == 0)
      return true;
  return false;
}

/// Refuses, with check()'s message, a race of `spec` where its parameters
/// hold `bytes` (refuse_races_of_bound_values, compiled in the library).
template <std::size_t P>
void refuse_races_of_aliases(const graph_spec& spec, const std::array<ref_info, P>& params,
                             const std::size_t* offsets, const std::byte* bytes) {
  std::array<bound_value_view, P> values;
  for (std::size_t p = 0; p < P; ++p)
    values[p] = {params[p].name, params[p].runtime_type(), {bytes + offsets[p], params[p].size}};
  refuse_races_of_bound_values(spec, values);
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

}  // namespace detail

template <class G>
class exec {
 public:
  static constexpr std::size_t node_count = G::node_count;

  /// Instantiates a lowered graph, taking over everything it points into.
  explicit exec(lowered<G>&& built, const instantiate_options& options)
      : arena_(std::move(built.arena_)), core_(std::move(built.core_)) {
    if (options.device_launch) check_device_launchable(to_spec(arena().graph));
    core_.reinstantiate(std::move(built.graph_), options, namer());
    arena().state.exec = core_.native_exec();
    arena().rebind.template_stale.assign(G::node_count, false);
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
  /// The exec as device code launches it (cudag/device_graph.hpp). Throws
  /// unless instantiated with instantiate_options::device_launch.
  [[nodiscard]] device_graph device_handle() const {
    if (!core_.device_launchable())
      throw cudag::error("a DSL graph not instantiated for device launch "
                         "(instantiate_options::device_launch): device code cannot launch it",
                         cudaErrorInvalidValue);
    return device_graph{core_.native_exec()};
  }

  /// Rebinds parameters (`x = d_x2, n = 512`), type-checked at compile time,
  /// in one pass: every node reading a parameter whose value changed is
  /// recomputed once, then sent to CUDA by the shared rebind algorithm
  /// (cudag/rebind.hpp; the same native calls as the spec exec makes). Safe
  /// while earlier launches run: they keep the values they were launched with.
  /// A binding of a parameter the graph does not read, or with another type,
  /// returns its error type instead (see or_error in graph.hpp).
  template <class... B>
  detail::or_error<detail::rebinding_error_t<G, B...>, rebind_path> rebind(const B&... bindings) {
    if constexpr (!std::is_void_v<detail::rebinding_error_t<G, B...>>) {
      ((void)bindings, ...);
      detail::returns_error();
    } else {
      return rebind_checked(bindings...);
    }
  }

  /// automatic: prefer_whole_graph_update(); the others force one path.
  void set_rebind_policy(rebind_policy policy) noexcept { arena().rebind.policy = policy; }

  /// Enables or disables a kernel, memset or memcpy node, by name. A node the
  /// graph lacks, or of another kind, returns its error type instead.
  template <fixed_string Name>
  detail::or_error<detail::node_name_error_t<G, Name, true>, void> set_enabled(bool enabled) {
    if constexpr (!std::is_void_v<detail::node_name_error_t<G, Name, true>>) {
      (void)enabled;
      detail::returns_error();
    } else {
      constexpr std::uint32_t v = G::shape.node_index(Name.view());
      native::set_enabled(core_.native_exec(), arena().nodes.handles[v], enabled, Name.view());
    }
  }
  template <fixed_string Name>
  [[nodiscard]] detail::or_error<detail::node_name_error_t<G, Name, true>, bool> enabled() const {
    if constexpr (!std::is_void_v<detail::node_name_error_t<G, Name, true>>) {
      detail::returns_error();
    } else {
      constexpr std::uint32_t v = G::shape.node_index(Name.view());
      return native::enabled(core_.native_exec(), arena().nodes.handles[v], Name.view());
    }
  }
  /// The device address of a buffer the top-level graph's mem_alloc node
  /// produced, typed and offset as the view says: `e.buffer(tmp + 16)`.
  /// Fixed for the life of this exec; for reading results back after a
  /// launch (see the spec exec's buffer_address for the lifetime). A buffer
  /// the graph does not allocate returns its error type instead.
  /// (A view's type, not buffer_t<Name, T>, is deduced: nvcc cannot deduce
  /// a class-type template argument from the view.)
  template <class View>
    requires std::is_same_v<typename View::dsl_tag, detail::buffer_tag>
  [[nodiscard]] detail::or_error<typename decltype(detail::buffer_error<G, View>())::type,
                                 typename View::element_type*>
  buffer(View view) const {
    if constexpr (!std::is_void_v<typename decltype(detail::buffer_error<G, View>())::type>) {
      (void)view;
      detail::returns_error();
    } else {
      constexpr std::uint32_t slot = G::shape.buffer_slot(detail::name_hash(View::name.view()));
      using element = typename View::element_type;
      const std::size_t bytes = arena().buffer_bytes[slot];
      if (view.offset > bytes / sizeof(element))
        cudag::detail::refuse_view_past_end(View::name.view(), view.offset, sizeof(element), bytes);
      return static_cast<element*>(arena().state.values.buffers[slot]) + view.offset;
    }
  }

  /// The CUDA node created for a top-level node. A node the graph lacks
  /// returns its error type instead.
  template <fixed_string Name>
  [[nodiscard]] detail::or_error<detail::node_name_error_t<G, Name, false>, cudaGraphNode_t>
  node_handle() const {
    if constexpr (!std::is_void_v<detail::node_name_error_t<G, Name, false>>) {
      detail::returns_error();
    } else {
      return arena().nodes.handles[G::shape.node_index(Name.view())];
    }
  }

 private:
  using arena_type = detail::exec_arena<G>;

  template <class... B>
  rebind_path rebind_checked(const B&... bindings) {
    using readers = detail::rebind_readers<G, detail::name_hash(B::name.view())...>;
    arena_type& a = arena();
    // The values before, to put back where a new launch or CUDA refuses the
    // rebind (a refused rebind changes nothing; the same one may be retried).
    std::array<std::byte, sizeof(a.params)> before;
    std::memcpy(before.data(), a.params, sizeof(a.params));
    const std::array<bool, sizeof...(B)> changed{a.write_changed(bindings)...};
    // A pointer rebound to the address another pointer parameter holds: its
    // nodes and the other's touch one memory now, where the graph may not
    // order them. Judged as check() judges bindings; a refusal changes
    // nothing.
    if constexpr (((std::is_pointer_v<typename B::value_type>) || ...)) {
      constexpr std::array<std::uint64_t, sizeof...(B)> rebound{detail::name_hash(B::name.view())...};
      const std::span<const detail::ref_info> params(G::shape.params);
      bool aliased = false;
      for (std::size_t b = 0; b < sizeof...(B); ++b)
        aliased = aliased || (changed[b] && detail::aliases_another_pointer(
                                                params, G::shape.param_offsets.data(), a.params,
                                                rebound[b]));
      if (aliased) {
        try {
          detail::refuse_races_of_aliases(to_spec(a.graph), G::shape.params,
                                          G::shape.param_offsets.data(), a.params);
        } catch (...) {
          std::memcpy(a.params, before.data(), sizeof(a.params));
          throw;
        }
      }
    }
    std::array<std::uint32_t, readers::entries.size()> dirty{};
    std::size_t count = 0;
    for (const auto& e : readers::entries) {
      bool reads_changed = false;
      for (std::size_t b = 0; b < sizeof...(B); ++b) reads_changed |= e.reads[b] && changed[b];
      if (reads_changed) dirty[count++] = e.rank;
    }
    if constexpr (G::launch_follows_parameters) {
      // Every launch that follows a changed parameter is checked before any
      // node changes: a shape CUDA cannot launch refuses the rebind whole.
      try {
        for (std::size_t i = 0; i < count; ++i) {
          const std::uint32_t v = G::shape.order[dirty[i]];
          const detail::node_entry& e = a.nodes.entries[G::shape.position[v]];
          if (e.ops->check_launch)
            e.ops->check_launch(e.body, e.storage, &a.state, G::shape.names[v], readers::hashes);
        }
      } catch (...) {
        std::memcpy(a.params, before.data(), sizeof(a.params));
        throw;
      }
    }
    rebind_view view(*this, readers::hashes, before.data());
    return apply_rebind(core_, view, std::span<const std::uint32_t>(dirty.data(), count),
                        arena().rebind);
  }

  /// This graph's nodes, by creation rank, as the shared rebind algorithm
  /// sees them.
  class rebind_view final : public rebind_nodes {
   public:
    rebind_view(exec& owner, detail::param_hashes hashes, const std::byte* before)
        : owner_(owner), hashes_(hashes), before_(before) {}
    std::size_t top_level_count() const noexcept override { return G::node_count; }
    bool needs_whole_update(std::uint32_t rank) const noexcept override {
      const node_kind k = G::shape.kinds[G::shape.order[rank]];
      return k == node_kind::child || k == node_kind::conditional;
    }
    bool captured(std::uint32_t rank) const noexcept override {
      return G::shape.kinds[G::shape.order[rank]] == node_kind::captured;
    }
    void push(std::uint32_t rank, native::param_target to) override {
      arena_type& a = owner_.arena();
      const std::uint32_t v = G::shape.order[rank];
      const detail::node_entry& e = a.nodes.entries[G::shape.position[v]];
      e.ops->update(e.body, e.storage, &a.state, a.nodes.handles[v], to, G::shape.names[v], hashes_);
    }
    void restore_captured(cudaGraphExec_t) override {
      arena_type& a = owner_.arena();
      for (std::uint32_t rank = 0; rank < G::node_count; ++rank) {
        const std::uint32_t v = G::shape.order[rank];
        if (G::shape.kinds[v] != node_kind::captured) continue;
        const detail::node_entry& e = a.nodes.entries[G::shape.position[v]];
        e.ops->reapply(e.body, e.storage, &a.state, a.nodes.handles[v], G::shape.names[v]);
      }
    }
    std::string name_of(cudaGraphNode_t node) const override { return owner_.node_name_of(node); }
    bool restore_values() override {  // every node reads the parameters when it is sent
      std::memcpy(owner_.arena().params, before_, sizeof(owner_.arena().params));
      return true;
    }
    bool any_needs_whole_update() const noexcept override {
      constexpr bool any = cudag::detail::holds(G::shape.kinds, node_kind::child) ||
                           cudag::detail::holds(G::shape.kinds, node_kind::conditional);
      return any;
    }
    bool any_captured() const noexcept override {
      constexpr bool any = cudag::detail::holds(G::shape.kinds, node_kind::captured);
      return any;
    }

   private:
    exec& owner_;
    detail::param_hashes hashes_;
    const std::byte* before_;  ///< the parameters' bytes before this rebind
  };

  /// A callable naming this graph's nodes. Not a lambda: a lambda here
  /// would be named (in its type information) by the whole graph type.
  [[nodiscard]] detail::node_namer namer() const noexcept {
    return detail::node_namer{arena().nodes.handles.data(), G::shape.names.data(), G::node_count};
  }
  [[nodiscard]] std::string node_name_of(cudaGraphNode_t node) const { return namer()(node); }

  [[nodiscard]] arena_type& arena() const noexcept { return *static_cast<arena_type*>(arena_.get()); }

  // Destruction order: the exec core (graph and executable graph) goes
  // first, then the arena the graph's nodes point into.
  detail::arena_owner arena_;
  exec_core core_;
};

/// Lowers and instantiates `graph` with every parameter bound by name. With
/// a mistake (a missing binding, a top-level shape problem), returns its
/// error type instead (see or_error in graph.hpp).
template <class G, class... B>
[[nodiscard]] detail::or_error<detail::instantiation_error_t<G, B...>, exec<G>> instantiate_with(
    const G& graph, const instantiate_options& options, const B&... bindings)
#if CUDAG_DSL_DEVICE_PASS
{
  (void)graph, (void)options, ((void)bindings, ...);
  detail::device_pass_stub();
}
#else
{
  if constexpr (!std::is_void_v<detail::instantiation_error_t<G, B...>>) {
    (void)graph, (void)options, ((void)bindings, ...);
    detail::returns_error();
  } else {
    return exec<G>(detail::lower_with(graph, bindings...), options);
  }
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
[[nodiscard]] detail::or_error<detail::instantiation_error_t<graph_t<Items...>, B...>,
                               exec<graph_t<Items...>>>
instantiate(const graph_t<Items...>& graph, const B&... bindings) {
  if constexpr (!std::is_void_v<detail::instantiation_error_t<graph_t<Items...>, B...>>) {
    (void)graph, ((void)bindings, ...);
    detail::returns_error();
  } else {
    return instantiate_with(graph, instantiate_options{}, bindings...);
  }
}

namespace detail {

/// What lower() and instantiate() give for a graph variable whose
/// declaration was refused (refused_graph in graph.hpp): every use of the
/// exec is accepted, so the declaration's error stays the only one. Never
/// run: the program does not compile.
struct refused_exec {
  void launch(cudaStream_t) noexcept {}
  void upload(cudaStream_t) noexcept {}
  void synchronize(cudaStream_t) noexcept {}
  template <class... B>
  rebind_path rebind(const B&...) noexcept {
    return {};
  }
  void set_rebind_policy(rebind_policy) noexcept {}
  template <fixed_string Name>
  void set_enabled(bool) noexcept {}
  template <fixed_string Name>
  [[nodiscard]] bool enabled() const noexcept {
    return false;
  }
  template <fixed_string Name>
  [[nodiscard]] cudaGraphNode_t node_handle() const noexcept {
    return nullptr;
  }
  template <class View>
  [[nodiscard]] typename View::element_type* buffer(View) const noexcept {
    return nullptr;
  }
};
}  // namespace detail

template <detail::refused_graph_type E, class... B>
detail::refused_exec lower(const E&, const B&...) noexcept {
  return {};
}
template <detail::refused_graph_type E, class... B>
detail::refused_exec lower(const E&&, const B&...) = delete;
template <detail::refused_graph_type E, class... B>
detail::refused_exec instantiate(const E&, const B&...) noexcept {
  return {};
}
template <detail::refused_graph_type E, class... B>
detail::refused_exec instantiate(const E&&, const B&...) = delete;
inline detail::refused_exec instantiate(detail::refused_exec,
                                       const instantiate_options& = {}) noexcept {
  return {};
}

/// Instantiates a graph lowered earlier.
template <class G>
[[nodiscard]] exec<G> instantiate(lowered<G>&& built, const instantiate_options& options = {}) {
  return exec<G>(std::move(built), options);
}

}  // namespace cudag::dsl
