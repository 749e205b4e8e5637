#pragma once
// The run-time front end: the same node kinds as the DSL, for graphs whose
// shape is known only at run time. Kernel and host-callable arguments are
// checked against the callee's parameter types at compile time (see
// arguments.hpp); names and edges are checked as the graph is assembled, the
// rest by check() when the graph is instantiated.
//
//   cudag::builder b("saxpy");
//   auto x = b.param<float*>("x");
//   auto n = b.param<int>("n");
//   auto scale = b.kernel("scale", CUDAG_KERNEL(scale_kernel), cudag::launch_over(n, 256), x, 2.0f, n);
//   auto clear = b.memset("clear", x, 0u, 1024);
//   b.edge(clear, scale);
//   cudag::resolved_graph graph = b.resolve();   // what instantiate() runs
#include <cuda_runtime_api.h>

#include <concepts>
#include <cstdlib>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cudag/arguments.hpp"
#include "cudag/resolved_graph.hpp"
#include "cudag/spec.hpp"

namespace cudag {

struct launch_config {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  unsigned shared_bytes = 0;
  std::optional<grid_rule> grid_from;
  int priority = 0;
  std::vector<shape_rule> shape_rules;
  launch_attributes attributes;

  /// Thread-block clusters of x * y * z blocks
  /// (cudaLaunchAttributeClusterDimension): cudag::launch(grid, block).cluster(2, 1, 1).
  /// check() requires the cluster to divide the grid in every dimension,
  /// to hold at most 8 blocks (the portable limit), and to be 1 in a grid
  /// dimension that follows a parameter.
  launch_config& cluster(unsigned x, unsigned y = 1, unsigned z = 1) {
    attributes.cluster = dim3(x, y, z);
    return *this;
  }
  /// A cooperative launch (cudaLaunchAttributeCooperative): every block
  /// resident at once, so that the grid may synchronise as a whole.
  launch_config& cooperative(bool on = true) {
    attributes.cooperative = on;
    return *this;
  }
  /// The memory-synchronisation domain (cudaLaunchAttributeMemSyncDomain).
  launch_config& mem_sync_domain(cudaLaunchMemSyncDomain domain) {
    attributes.mem_sync_domain = domain;
    return *this;
  }
  /// The preferred share of the unified cache given to shared memory, in
  /// percent (cudaLaunchAttributePreferredSharedMemoryCarveout); check()
  /// refuses more than 100.
  launch_config& shared_carveout(int percent) {
    attributes.shared_carveout = percent;
    return *this;
  }

  /// An L2 access-policy window over [base, base + bytes)
  /// (cudaLaunchAttributeAccessPolicyWindow): `hit` (persisting by default)
  /// for a share `hit_ratio` of it, `miss` for the rest. check() refuses a
  /// window without a base or a ratio outside 0 to 1.
  launch_config& access_policy(const void* base, std::size_t bytes, float hit_ratio = 1.0f,
                               cudaAccessProperty hit = cudaAccessPropertyPersisting,
                               cudaAccessProperty miss = cudaAccessPropertyStreaming) {
    attributes.access_policy = access_policy_window{base, bytes, hit_ratio, hit, miss};
    return *this;
  }

  /// Makes launch dimension `dim` follow integral parameter `p`:
  /// ceil(p * multiplier / divisor), recomputed whenever `p` is rebound (a
  /// shape family: one executable graph for every batch size).
  template <std::integral T>
  launch_config& follow(launch_dim dim, const param_handle<T>& p, std::uint64_t multiplier = 1,
                        std::uint64_t divisor = 1) {
    shape_rules.push_back(shape_rule{dim, p.name, multiplier, divisor});
    return *this;
  }
};

[[nodiscard]] inline launch_config launch(dim3 grid, dim3 block, unsigned shared_bytes = 0) {
  return {grid, block, shared_bytes, std::nullopt, 0, {}, {}};
}

/// One thread per element of an integral parameter: ceil(count / block_size)
/// blocks, recomputed when `count` is rebound.
template <std::integral T>
[[nodiscard]] launch_config launch_over(const param_handle<T>& count, unsigned block_size,
                                        unsigned shared_bytes = 0) {
  return {dim3(1), dim3(block_size), shared_bytes, grid_rule{count.name, block_size}, 0, {}, {}};
}

/// A kernel with its name, for messages and pictures.
template <class... P>
[[nodiscard]] kernel_ref<void(P...)> kernel_of(void (*function)(P...), std::string name) {
  return {reinterpret_cast<const void*>(function), std::move(name), nullptr, false};
}

/// A kernel's name as a template argument, so that a compile error about
/// the kernel's arguments names the kernel (see named_kernel).
template <std::size_t N>
struct kernel_name {
  char text[N];
  constexpr kernel_name(const char (&s)[N]) noexcept {  // NOLINT: implicit from a literal
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};
/// A kernel_ref whose type carries the kernel's name: what CUDAG_KERNEL(f)
/// makes. A call with mismatched arguments is refused naming it,
/// `kernel_argument_mismatch<named_kernel<kernel_name<6>{"scale"}, void(float*, float, int)>, 1, float, double>`.
template <kernel_name Name, class Signature>
struct named_kernel : kernel_ref<Signature> {};
template <kernel_name Name, class... P>
[[nodiscard]] named_kernel<Name, void(P...)> kernel_of(void (*function)(P...)) {
  return {{reinterpret_cast<const void*>(function), std::string(Name.text), nullptr, false}};
}
#define CUDAG_KERNEL(function) ::cudag::kernel_of<#function>(&function)

class builder;

/// A node of a builder, for edges: b.edge(a, c), or c.after(a, b). Valid
/// until the builder's build() && or resolve() &&, which hand its nodes on.
class node_ref {
 public:
  node_ref(builder& owner, std::size_t index);
  [[nodiscard]] const std::string& name() const;
  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  /// Adds edges from each of `before` to this node.
  template <class... N>
  node_ref& after(const N&... before);
  /// Adds edges from this node to each of `later`.
  template <class... N>
  node_ref& precede(const N&... later);
  /// Declares how this kernel, host or captured node touches what its
  /// pointer argument `argument` (from 0) points at, where that is not what
  /// the argument's type says (cudag/memory_access.hpp): access_mode::read
  /// for a `T*` it never writes, access_mode::concurrent for atomic updates
  /// meant to overlap others, and `extent_bytes` for the bytes it touches
  /// from the argument's address (accesses to disjoint bytes of one buffer
  /// are no race). The race check of check() reads it; refused at once,
  /// naming the node, for another kind of node or an argument that is not
  /// a pointer. A second declaration of one argument replaces the first.
  node_ref& access(std::size_t argument, access_mode mode, std::size_t extent_bytes = to_the_end);

 private:
  friend class builder;
  builder* owner_;
  // 32 bits each, as in the builder's name table: a ref stays two words.
  std::uint32_t index_;
  /// The owner's generation when the ref was made: a ref from before a
  /// build() && would otherwise name whichever node took its index since.
  std::uint32_t generation_;
};

// ------------------------------------------------------ refused calls --
// A node call whose arguments do not fit (a kernel's parameters, a host or
// capture callable, a memset fill, a memcpy, memset or event operand)
// returns, in place of its node_ref, an object of a type named after the
// fault, and is never run. That type's destructor cannot be called, so the
// user's own statement fails on its own line, with no template context
// printed before it: one error, whose first line names the fault, the kernel
// (its handle's type: CUDAG_KERNEL(f) carries the name, a function pointer
// the signature), the position and both types. The types derive from
// node_ref, so later uses of the result (edges, after()) add no second error.
// Deleted, and private under nvcc, whose front end reports a deleted
// destructor twice for `auto n = b.kernel(...)`, a private one once.
#if defined(__CUDACC__)
#define CUDAG_REFUSED_CALL_DESTRUCTOR(type) \
 private:                                    \
  ~type() = default
#else
#define CUDAG_REFUSED_CALL_DESTRUCTOR(type) ~type() = delete
#endif

/// Kernel (the kernel's handle type) is called with Arguments arguments; it takes Parameters.
template <class Kernel, std::size_t Parameters, std::size_t Arguments>
struct kernel_argument_count_mismatch : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(kernel_argument_count_mismatch);
};
/// Argument `Position` (from 0) is an Argument where Kernel takes a Parameter.
template <class Kernel, std::size_t Position, class Parameter, class Argument>
struct kernel_argument_mismatch : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(kernel_argument_mismatch);
};
/// The host callable F cannot be called with (Arguments...).
template <class F, class... Arguments>
struct host_callable_does_not_accept : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(host_callable_does_not_accept);
};
/// The capture callable F cannot be called with (cudaStream_t, Arguments...).
template <class F, class... Arguments>
struct capture_callable_does_not_accept : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(capture_callable_does_not_accept);
};
/// A memset fills 1-, 2- or 4-byte elements: Fill is none of those.
template <class Fill>
struct memset_fill_is_not_1_2_or_4_bytes : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(memset_fill_is_not_1_2_or_4_bytes);
};
/// The node's operand `Operand` must pass as Expected; it is a Given.
template <class Operand, class Expected, class Given>
struct node_operand_has_wrong_type : node_ref {
  CUDAG_REFUSED_CALL_DESTRUCTOR(node_operand_has_wrong_type);
};
/// The operands node_operand_has_wrong_type names.
namespace operand {
struct memcpy_destination;
struct memcpy_source;
struct memset_destination;
struct event;
}  // namespace operand

/// node_ref (or Otherwise, a further check), or Error when the call is refused.
template <class Error, bool Accepted, class Otherwise = node_ref>
using node_ref_or = std::conditional_t<Accepted, Otherwise, Error>;

/// A memset fill value: a 1-, 2- or 4-byte integer or floating-point number.
template <class F>
concept fills_memset = (std::is_integral_v<F> || std::is_floating_point_v<F>) &&
                       (sizeof(F) == 1 || sizeof(F) == 2 || sizeof(F) == 4);

namespace detail {
template <class Kernel, class... P, class... A>
consteval auto kernel_call_verdict(type_list<P...>, type_list<A...>) {
  if constexpr (sizeof...(P) != sizeof...(A)) {
    return std::type_identity<kernel_argument_count_mismatch<Kernel, sizeof...(P), sizeof...(A)>>{};
  } else {
    constexpr std::size_t i = first_mismatched_argument(type_list<P...>{}, type_list<A...>{});
    if constexpr (i == sizeof...(A))
      return std::type_identity<node_ref>{};
    else
      return std::type_identity<kernel_argument_mismatch<
          Kernel, i, std::tuple_element_t<i, std::tuple<P...>>,
          std::remove_cvref_t<std::tuple_element_t<i, std::tuple<A...>>>>>{};
  }
}
template <class Kernel, class Signature, class... A>
struct kernel_call;
template <class Kernel, class... P, class... A>
struct kernel_call<Kernel, void(P...), A...> {
  using result = typename decltype(kernel_call_verdict<Kernel>(type_list<P...>{}, type_list<A...>{}))::type;
};
/// What builder::kernel returns for a kernel handle K called with A...
template <class K, class... A>
using kernel_call_t = typename kernel_call<K, typename K::signature, A...>::result;
template <class K>
concept kernel_handle = requires { typename K::signature; } &&
                        std::derived_from<K, kernel_ref<typename K::signature>>;

/// What memcpy(name, dst, src, ...) returns: the first operand's refusal, or node_ref.
template <class Dst, class Src>
using memcpy_call_t = node_ref_or<
    node_operand_has_wrong_type<operand::memcpy_destination, void*, argument_type<Dst>>,
    passes_as<void*, Dst>,
    node_ref_or<node_operand_has_wrong_type<operand::memcpy_source, const void*, argument_type<Src>>,
                passes_as<const void*, Src>>>;
/// What memset/memset_2d(name, dst, ..., fill, ...) return: the fill's
/// refusal, the destination's, or node_ref.
template <class Dst, class Fill>
using memset_call_t = node_ref_or<
    memset_fill_is_not_1_2_or_4_bytes<argument_type<Fill>>, fills_memset<argument_type<Fill>>,
    node_ref_or<node_operand_has_wrong_type<operand::memset_destination, void*, argument_type<Dst>>,
                passes_as<void*, Dst>>>;
/// The body of a refused call: never run, since no statement using its
/// result compiles.
[[noreturn]] inline void refused_call() noexcept { std::abort(); }
}  // namespace detail

template <class T>
struct allocation_ref {
  node_ref node;
  buffer_handle<T> buffer;
};

class builder {
 public:
  explicit builder(std::string graph_name = "graph");

  /// Room for `nodes` nodes and `edges` edges in all, for a graph whose size
  /// is known: nothing is reallocated, and no node moved, as it grows.
  void reserve(std::size_t nodes, std::size_t edges = 0);

  // ---------------------------------------------------------- declarations --
  template <class T>
  param_handle<T> param(std::string name) {
    declare_param(name, type_of<T>());
    return {std::move(name)};
  }
  condition_handle condition(std::string name, unsigned default_value = 0,
                             bool assign_default = true);
  /// A device buffer of T the graph did not allocate, bound like a
  /// parameter: bind(name, T*). Nodes use it as a buffer; free() may free it
  /// when another graph allocated it (CUDA refuses a free node for memory
  /// from cudaMalloc or cudaMallocAsync); a node using it must be ordered
  /// before that free.
  template <class T>
  buffer_handle<T> external_buffer(std::string name) {
    declare_param(name, type_of<T*>(), true);
    return {std::move(name), 0};
  }

  // ----------------------------------------------------------------- nodes --
  /// A kernel node: `k` is CUDAG_KERNEL(f), an rtc kernel or any kernel_ref;
  /// the arguments are checked against its parameters at compile time (a
  /// mismatch returns an error type instead: see "refused calls" above).
  template <class K, class... A>
    requires detail::kernel_handle<std::remove_cvref_t<K>>
  detail::kernel_call_t<std::remove_cvref_t<K>, A...> kernel(std::string name, K&& k,
                                                              const launch_config& config,
                                                              A&&... args) {
    using ref = kernel_ref<typename std::remove_cvref_t<K>::signature>;
    // A refused result is never passed on: returning one from a call would
    // destroy it here, a second error inside this template.
    if constexpr (!std::is_same_v<detail::kernel_call_t<std::remove_cvref_t<K>, A...>, node_ref>)
      detail::refused_call();
    else
      return add_kernel(std::move(name), ref(std::forward<K>(k)), config, std::forward<A>(args)...);
  }
  template <class... P, class... A>
  detail::kernel_call_t<kernel_ref<void(P...)>, A...> kernel(std::string name, void (*function)(P...),
                                                              const launch_config& config,
                                                              A&&... args) {
    if constexpr (!std::is_same_v<detail::kernel_call_t<kernel_ref<void(P...)>, A...>, node_ref>)
      detail::refused_call();
    else
      return add_kernel(std::move(name), kernel_of(function, {}), config, std::forward<A>(args)...);
  }

  /// 1-D copy of `bytes`. dst/src: pointers, pointer parameters or buffers.
  template <class Dst, class Src>
  detail::memcpy_call_t<Dst, Src> memcpy(std::string name, Dst&& dst, Src&& src, std::size_t bytes,
                                         cudaMemcpyKind kind = cudaMemcpyDefault) {
    if constexpr (!std::is_same_v<detail::memcpy_call_t<Dst, Src>, node_ref>)
      detail::refused_call();
    else
      return add(std::move(name), memcpy_node{to_value<void*>(std::forward<Dst>(dst)),
                                              to_value<const void*>(std::forward<Src>(src)),
                                              bytes, kind});
  }

  /// Sets `count` elements to `fill`; the element size is fill's size (1, 2 or 4 bytes).
  template <class Dst, class Fill>
  detail::memset_call_t<Dst, Fill> memset(std::string name, Dst&& dst, Fill&& fill,
                                          std::size_t count) {
    if constexpr (!std::is_same_v<detail::memset_call_t<Dst, Fill>, node_ref>)
      detail::refused_call();
    else
      return memset_2d(std::move(name), std::forward<Dst>(dst), 0, std::forward<Fill>(fill), count,
                       1);
  }
  /// Sets `height` rows of `width` elements, rows `pitch_bytes` apart.
  template <class Dst, class Fill>
  detail::memset_call_t<Dst, Fill> memset_2d(std::string name, Dst&& dst, std::size_t pitch_bytes,
                                             Fill&& fill, std::size_t width, std::size_t height) {
    using F = argument_type<Fill>;
    if constexpr (!std::is_same_v<detail::memset_call_t<Dst, Fill>, node_ref>)
      detail::refused_call();
    else
      return add(std::move(name),
                 memset_node{to_value<void*>(std::forward<Dst>(dst)),
                             to_value<F>(std::forward<Fill>(fill)), unsigned(sizeof(F)), width,
                             height, pitch_bytes});
  }

  /// Runs `f(args...)` on a host thread when the node's dependencies are done.
  /// Arguments may be literals, parameters or buffers (f sees their values).
  template <class F, class... A>
  node_ref_or<host_callable_does_not_accept<std::decay_t<F>, argument_type<A>...>,
              std::is_invocable_v<std::decay_t<F>&, const argument_type<A>&...>>
  host(std::string name, F&& f, A&&... args) {
    if constexpr (!std::is_invocable_v<std::decay_t<F>&, const argument_type<A>&...>) {
      detail::refused_call();
    } else {
      host_node n;
      n.function = std::make_shared<const host_function>(
          [f = std::forward<F>(f)](std::span<const void* const> values) mutable {
            call_with<argument_type<A>...>(f, values, std::index_sequence_for<A...>{});
          });
      n.args = {to_value<argument_type<A>>(std::forward<A>(args))...};
      return add(std::move(name), std::move(n));
    }
  }

  /// Work recorded by stream capture: `record(stream, args...)` issues
  /// library calls on `stream`; it runs again when an argument is rebound.
  template <class F, class... A>
  node_ref_or<capture_callable_does_not_accept<std::decay_t<F>, cudaStream_t, argument_type<A>...>,
              std::is_invocable_v<std::decay_t<F>&, cudaStream_t, const argument_type<A>&...>>
  captured(std::string name, std::string what, F&& record, A&&... args) {
    if constexpr (!std::is_invocable_v<std::decay_t<F>&, cudaStream_t, const argument_type<A>&...>) {
      detail::refused_call();
    } else {
      captured_node n;
      n.record = std::make_shared<const capture_function>(
          [f = std::forward<F>(record)](cudaStream_t s, std::span<const void* const> values) mutable {
            call_with<argument_type<A>...>(
                [&](const auto&... v) { f(s, v...); }, values, std::index_sequence_for<A...>{});
          });
      n.args = {to_value<argument_type<A>>(std::forward<A>(args))...};
      n.what = std::move(what);
      return add(std::move(name), std::move(n));
    }
  }

  /// A child graph node. Given by name (a graph_spec), the child's names are
  /// resolved where the graph is checked; given resolved (another builder's
  /// resolve()), its dependency indices are kept and never looked up again.
  node_ref child(std::string name, graph_spec graph);
  node_ref child(std::string name, resolved_graph graph);
  node_ref empty(std::string name);

  template <class E>
  node_ref_or<node_operand_has_wrong_type<operand::event, cudaEvent_t, argument_type<E>>,
              passes_as<cudaEvent_t, E>>
  record(std::string name, E&& event) {
    if constexpr (!passes_as<cudaEvent_t, E>)
      detail::refused_call();
    else
      return add(std::move(name), event_record_node{to_value<cudaEvent_t>(std::forward<E>(event))});
  }
  template <class E>
  node_ref_or<node_operand_has_wrong_type<operand::event, cudaEvent_t, argument_type<E>>,
              passes_as<cudaEvent_t, E>>
  wait(std::string name, E&& event) {
    if constexpr (!passes_as<cudaEvent_t, E>)
      detail::refused_call();
    else
      return add(std::move(name), event_wait_node{to_value<cudaEvent_t>(std::forward<E>(event))});
  }

  /// A mem-alloc node named `name` producing buffer `name` of `count` T.
  template <class T>
  allocation_ref<T> alloc(std::string name, std::size_t count, int device = -1) {
    // Refused before the node is added: a wrapped size would allocate too little.
    if (detail::bytes_overflow(count, sizeof(T)))
      detail::refuse_allocation_size(spec_.name, name, count, sizeof(T));
    node_ref n = add(name, mem_alloc_node{name, count * sizeof(T), device});
    return {n, buffer_handle<T>{std::move(name), 0}};
  }
  template <class T>
  node_ref free(std::string name, const buffer_handle<T>& buffer) {
    return add(std::move(name), mem_free_node{buffer.name});
  }

  node_ref if_then(std::string name, const condition_handle& c, graph_spec then_body);
  node_ref if_else(std::string name, const condition_handle& c, graph_spec then_body,
                   graph_spec else_body);
  node_ref while_loop(std::string name, const condition_handle& c, graph_spec body);
  node_ref switch_case(std::string name, const condition_handle& c, std::vector<graph_spec> cases);
  /// The same with bodies resolved (another builder's resolve()): their
  /// dependency indices are kept, as child() keeps a resolved graph's.
  node_ref if_then(std::string name, const condition_handle& c, resolved_graph then_body);
  node_ref if_else(std::string name, const condition_handle& c, resolved_graph then_body,
                   resolved_graph else_body);
  node_ref while_loop(std::string name, const condition_handle& c, resolved_graph body);
  /// (A template, so that `switch_case(name, c, {})` means no cases by name.)
  template <std::same_as<resolved_graph> Resolved>
  node_ref switch_case(std::string name, const condition_handle& c, std::vector<Resolved> cases) {
    return add_conditional(std::move(name), conditional_kind::switch_case, c, std::move(cases));
  }

  // ----------------------------------------------------------------- edges --
  void edge(const node_ref& from, const node_ref& to);
  /// An edge of another kind than full: edge_kind::programmatic or
  /// edge_kind::launch_completion, from a kernel node into a kernel node
  /// that synchronizes its grid dependencies (check() refuses others). An
  /// edge added again with another kind is refused, naming it.
  void edge(const node_ref& from, const node_ref& to, edge_kind kind);
  /// By name; an unknown name is refused at once, naming the edge.
  void edge(std::string_view from, std::string_view to, edge_kind kind = edge_kind::full);
  /// a -> b -> c ...
  template <class... N>
  void chain(const node_ref& first, const N&... rest) {
    const node_ref* previous = &first;
    ((edge(*previous, rest), previous = &rest), ...);
  }
  [[nodiscard]] node_ref node(std::string_view name);

  // ---------------------------------------------------------------- result --
  /// The spec so far.
  [[nodiscard]] const graph_spec& spec() const noexcept { return spec_; }
  /// The graph as the engine runs it: each dependency the index of its node,
  /// as edge() recorded it, so that no name is looked up again
  /// (check(), topological_order() and instantiate() take it as it is).
  [[nodiscard]] resolved_graph resolve() const&;
  /// The same, moving the graph out: the builder is left empty but for its
  /// graph name, ready for a new graph (every name free again); node_refs
  /// made before are refused from then on.
  [[nodiscard]] resolved_graph resolve() &&;
  /// The spec by name (the interchange form: files, diff, a child graph of
  /// another builder). Checked or instantiated, its names are resolved
  /// again; resolve() is the way to run it.
  [[nodiscard]] graph_spec build() const&;
  /// The same, moving the spec out, as resolve() && does.
  [[nodiscard]] graph_spec build() &&;

 private:
  friend class node_ref;
  template <class... T, class F, std::size_t... I>
  static void call_with(F& f, std::span<const void* const> values, std::index_sequence<I...>) {
    (void)values;  // unused when the callable takes no arguments
    f(*static_cast<const T*>(values[I])...);
  }
  template <class... T, class F, std::size_t... I>
  static void call_with(F&& f, std::span<const void* const> values, std::index_sequence<I...>) {
    (void)values;
    f(*static_cast<const T*>(values[I])...);
  }

  // `k` by value: a kernel_ref made in the call (CUDAG_KERNEL(f)) gives the
  // node its name and keep-alive without a copy. Arguments already checked.
  template <class... P, class... A>
  node_ref add_kernel(std::string name, kernel_ref<void(P...)> k, const launch_config& config,
                      A&&... args) {
    // Built in place: a builder call makes no copy of the node.
    pending_node slot(*this, std::move(name));
    kernel_node& n = slot.emplace<kernel_node>();
    n.function = k.function;
    n.function_name = std::move(k.name);
    n.keep_alive = std::move(k.keep_alive);
    n.synchronizes_grid_dependencies = k.synchronizes_grid_dependencies;
    n.args.reserve(sizeof...(A));
    (append_value<P>(n.args, std::forward<A>(args)), ...);
    apply_launch(n, config);
    return slot.commit();
  }

  /// A node being added: its name is taken and the node appended at once;
  /// unless commit() is reached, both are taken back (an argument threw).
  class pending_node {
   public:
    pending_node(builder& owner, std::string&& name);
    pending_node(const pending_node&) = delete;
    pending_node& operator=(const pending_node&) = delete;
    ~pending_node();
    template <class P>
    P& emplace() {
      // A new node holds a default kernel_node: a kernel node keeps it
      // rather than destroying and building it again.
      node_params& params = owner_.spec_.nodes.back().params;
      if (P* fresh = std::get_if<P>(&params)) return *fresh;
      return params.template emplace<P>();
    }
    node_ref commit() noexcept;

   private:
    builder& owner_;
    bool committed_ = false;
  };

  void declare_param(const std::string& name, const type_tag& type, bool external_buffer = false);
  /// Throws the error that names why edge(from, to) cannot be added: a ref
  /// of another builder, of an earlier build() &&, or of a moved-from builder.
  [[noreturn]] void refuse_edge(const node_ref& from, const node_ref& to) const;
  node_ref add(std::string name, node_params params);
  static void apply_launch(kernel_node& n, const launch_config& config);
  /// Index of the node named `name`, or npos.
  [[nodiscard]] std::size_t find_node(std::string_view name) const noexcept;
  /// Records the last node's name in the index; false if the name is taken.
  bool index_last_node();
  /// The name table grown to `slots` entries (a power of two), holding
  /// every name it held.
  void rebuild_name_table(std::size_t slots);
  void unindex_last_node() noexcept;
  node_ref add_conditional(std::string name, conditional_kind kind, const condition_handle& c,
                           std::vector<graph_spec> bodies);
  /// The same with resolved bodies: their rows are kept for resolve().
  node_ref add_conditional(std::string name, conditional_kind kind, const condition_handle& c,
                           std::vector<resolved_graph> bodies);
  /// The dependencies of every graph of the tree: the top level's from the
  /// edges, the nested graphs' as given (resolved or by name).
  [[nodiscard]] detail::dependency_rows tree_rows() const;

  /// Each node's dependencies as indices, from edges_, in the order of its
  /// `deps`: `begin` (nodes + 1 entries) and `deps` as resolved_graph holds them.
  void write_dependencies(std::vector<std::uint32_t>& begin, std::vector<std::uint32_t>& deps) const;
  /// Empties the builder after a build() && or resolve() &&.
  void start_again(const std::string& graph_name);

  graph_spec spec_;
  /// The rows of the nested graphs given resolved, by the node holding
  /// them, in declaration order (a conditional's bodies' one after another).
  struct nested_rows {
    std::uint32_t node;
    detail::dependency_rows rows;
  };
  std::vector<nested_rows> nested_rows_;
  /// Every edge added, (to << 32) | from, in the order edge() added it to
  /// `deps`: resolve() turns them into the resolved graph's indices.
  std::vector<std::uint64_t> edges_;
  /// The edges, (to << 32) | from, into nodes with long_list_from or more
  /// dependencies, as an open-addressing set (0: empty; an edge's two ends
  /// differ, so no key is 0): edge() finds a repeated one there instead of
  /// scanning the node's list.
  std::vector<std::uint64_t> long_list_edges_;
  std::size_t long_list_edge_count_ = 0;
  static constexpr std::size_t long_list_from = 16;
  [[nodiscard]] bool has_long_list_edge(std::uint64_t key) const noexcept;
  /// Grows long_list_edges_ so that `more` keys go in without growing it.
  void room_for_long_list_edges(std::size_t more);
  /// Adds `key`, which is not there, to a set with room for it.
  void put_long_list_edge(std::uint64_t key) noexcept;
  /// Open-addressing table of node indices + 1 with 32 bits of their name's
  /// hash (0: empty): no allocation per node.
  std::vector<std::uint64_t> name_slots_;
  /// Counts build() && calls: node_refs of an earlier generation are refused.
  std::uint32_t generation_ = 0;
  static constexpr std::size_t npos = ~std::size_t{0};
};

inline node_ref::node_ref(builder& owner, std::size_t index)
    : owner_(&owner), index_(static_cast<std::uint32_t>(index)), generation_(owner.generation_) {}

template <class... N>
node_ref& node_ref::after(const N&... before) {
  (owner_->edge(before, *this), ...);
  return *this;
}
template <class... N>
node_ref& node_ref::precede(const N&... later) {
  (owner_->edge(*this, later), ...);
  return *this;
}

}  // namespace cudag
