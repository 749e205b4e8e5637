#pragma once
// The per-kind table of native graph operations: for each node kind, how it
// is added to a graph, how its parameters are set on the template graph, and
// how on the executable graph. Both front ends (the spec engine and the DSL)
// call these and nothing else, so a kind's native calls, their errors (each
// names the node) and their rules live in one place:
//
//   kind          add                   set (template | exec)
//   kernel        add_kernel            set_kernel
//   memcpy        add_memcpy            set_memcpy
//   memset        add_memset            set_memset
//   host          add_host              set_host
//   child         add_child             set_child (exec only: CUDA has no template setter)
//   captured      add_child (moved in)  set_child
//   empty         add_empty             -
//   event record  add_event_record      set_event_record
//   event wait    add_event_wait        set_event_wait
//   mem alloc     add_mem_alloc         - (CUDA cannot update alloc/free nodes)
//   mem free      add_mem_free          -
//   conditional   add_conditional       - (its bodies' nodes are set one by one)
//
// And, for a spec run without a graph (cudag::run_eagerly), each kind's
// stream work: run_kernel (cudaLaunchKernel), run_memcpy, run_memset,
// run_host (cudaLaunchHostFunc), run_event_record, run_event_wait,
// run_mem_alloc and run_mem_free (stream-ordered allocation); children and
// captured work run their nodes on the same stream, conditionals cannot run.
//
// Compiled in src/native/native_nodes.cpp; every call goes through the seam
// of native_api.hpp. docs/engine.md says how to add a node kind.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/host_failure_sink.hpp"
#include "cudag/handles.hpp"
#include "cudag/lean_std.hpp"
#include "cudag/spec.hpp"

namespace cudag::native {

using deps_span = std::span<const cudaGraphNode_t>;

/// Where a setter sends a node's parameters: the executable graph's node
/// (cudaGraphExec*SetParams) when `exec` is set, else the template graph's
/// node (cudaGraph*SetParams, applied later by one whole-graph update).
struct param_target {
  cudaGraphExec_t exec = nullptr;
  [[nodiscard]] static param_target on_template() noexcept { return {}; }
  [[nodiscard]] static param_target on_exec(cudaGraphExec_t e) noexcept { return {e}; }
};

// ---------------------------------------------------------------- batches --
/// Marks a run of native calls on this thread during which the current
/// device stays the same: lowering a graph, one rebind pass. Within it the
/// CUDA side of the seam resolves each kernel's function once (when the run
/// asks for the kernel a second time) and adds and sets kernel nodes (and
/// adds empty nodes) through the driver's entry points; the runtime's calls
/// resolve the function anew on every call, about 40 % of a kernel node's
/// cost (docs/benchmarks.md, "Native paths").
/// Whatever the driver refuses is asked of the runtime again, so errors are
/// the runtime's. Batches nest; user code that runs within one (a captured
/// node's recording) runs with the batch paused (see batch_pause). A test's
/// recorder sees the same calls with or without a batch.
class same_device_batch {
 public:
  /// Remembers within the outermost batch of this thread, and forgets when it ends.
  same_device_batch() noexcept;
  /// Remembers in `memory`, which outlives the batch (an exec's).
  explicit same_device_batch(kernel_functions& memory) noexcept;
  ~same_device_batch();
  same_device_batch(const same_device_batch&) = delete;
  same_device_batch& operator=(const same_device_batch&) = delete;
  /// Node calls this thread has made through the driver so far (for tests
  /// and tools: a recorder or a machine without a driver makes none).
  [[nodiscard]] static std::uint64_t driver_calls() noexcept;

 private:
  kernel_functions* previous_ = nullptr;  ///< the thread's memory before this batch
  bool swapped_ = false;
  kernel_functions own_;
};

/// Closes this thread's batch while user code runs inside it (the code may
/// change the current device, or build graphs of its own); reopens it
/// after, its resolved functions forgotten.
class batch_pause {
 public:
  batch_pause() noexcept;
  ~batch_pause();
  batch_pause(const batch_pause&) = delete;
  batch_pause& operator=(const batch_pause&) = delete;

 private:
  kernel_functions* paused_ = nullptr;
};

// ----------------------------------------------------------------- kernel --
/// Blocks for `count` items, `per_block` a block: never 0 (a launch of zero
/// blocks is an error; one block with the kernel's bounds check is the rule).
[[nodiscard]] constexpr unsigned blocks_for(std::uint64_t count, std::uint64_t per_block) noexcept {
  if (per_block == 0) per_block = 1;
  const std::uint64_t blocks = (count + per_block - 1) / per_block;
  return blocks == 0 ? 1u : static_cast<unsigned>(blocks);
}

// ------------------------------------------------------------ shape rules --
// The one arithmetic of shape rules (a launch dimension that follows an
// integral parameter), used by the spec engine's apply_launch_rules and by
// the DSL's kernel nodes, so that the two front ends cannot drift.

/// CUDA's limit on each launch dimension (compute capability 3.0 and later).
[[nodiscard]] constexpr std::uint64_t launch_limit(launch_dim dim) noexcept {
  switch (dim) {
    case launch_dim::grid_x: return 0x7FFFFFFFu;
    case launch_dim::grid_y:
    case launch_dim::grid_z: return 65535;
    case launch_dim::block_x:
    case launch_dim::block_y: return 1024;
    case launch_dim::block_z: return 64;
    case launch_dim::shared_bytes: return 0xFFFFFFFFu;
  }
  return 0;
}

/// An integral parameter's value as a shape rule reads it, the same in both
/// front ends: a signed value as it is (a negative one counts as 0), an
/// unsigned one as it is up to 2^63 - 1 and as 2^63 - 1 above (a count of
/// 3 * 10^9 in an unsigned int is 3 * 10^9, not negative).
template <class T>
[[nodiscard]] constexpr std::int64_t shape_rule_input(T value) noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return value ? 1 : 0;
  else if constexpr (std::is_signed_v<T>)
    return static_cast<std::int64_t>(value);
  else
    return value > std::uint64_t{INT64_MAX} ? INT64_MAX : static_cast<std::int64_t>(value);
}

/// ceil(n * multiplier / divisor) for a product past 64 bits, at most
/// 2^64 - 1, in two 64-bit halves: the portable form of the wide path below
/// (unsigned __int128 is a GCC and Clang extension). Always compiled, so the
/// cpu suite compares it with the 128-bit form where that exists.
[[nodiscard]] constexpr std::uint64_t scaled_extent_wide_portable(std::uint64_t n, std::uint64_t multiplier,
                                                                  std::uint64_t divisor) noexcept {
  // The 128-bit product as hi:lo, from four 32-bit partial products.
  const std::uint64_t a0 = n & 0xFFFFFFFFu, a1 = n >> 32;
  const std::uint64_t b0 = multiplier & 0xFFFFFFFFu, b1 = multiplier >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  const std::uint64_t lo = (middle << 32) | (p00 & 0xFFFFFFFFu);
  const std::uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
  // A quotient of 2^64 or more saturates; otherwise hi < divisor, and long
  // division of lo's 64 bits, one at a time, gives it (remainder in hi).
  if (hi >= divisor) return ~std::uint64_t{0};
  std::uint64_t rem = hi, quotient = 0;
  for (int bit = 63; bit >= 0; --bit) {
    const bool carry = (rem >> 63) != 0;
    rem = (rem << 1) | ((lo >> bit) & 1u);
    quotient <<= 1;
    if (carry || rem >= divisor) {
      rem -= divisor;
      quotient |= 1u;
    }
  }
  if (rem != 0) return quotient == ~std::uint64_t{0} ? quotient : quotient + 1;
  return quotient;
}

/// ceil(max(value, 0) * multiplier / divisor), in 128 bits where 64 could
/// overflow, at most 2^64 - 1. A divisor of 0 (check() refuses it) reads as 1.
[[nodiscard]] constexpr std::uint64_t scaled_extent(std::int64_t value, std::uint64_t multiplier,
                                                    std::uint64_t divisor) noexcept {
  const std::uint64_t n = value < 0 ? 0 : static_cast<std::uint64_t>(value);
  if (divisor == 0) divisor = 1;
  if (n <= 0xFFFFFFFFu && multiplier <= 0xFFFFFFFFu) {
    const std::uint64_t product = n * multiplier;
    if (divisor == 1) return product;  // the common rule: a reshape computes it for every node
    return product / divisor + (product % divisor != 0);
  }
#ifdef __SIZEOF_INT128__
  const unsigned __int128 product = static_cast<unsigned __int128>(n) * multiplier;
  const unsigned __int128 wide = product / divisor + (product % divisor != 0);
  return wide > 0xFFFFFFFFFFFFFFFFull ? ~std::uint64_t{0} : static_cast<std::uint64_t>(wide);
#else
  return scaled_extent_wide_portable(n, multiplier, divisor);
#endif
}

/// What a shape rule sets its dimension to for a parameter's value: the
/// scaled extent, 0 made 1 for a grid or block dimension (a launch of zero
/// blocks or threads is an error: one block, the kernel's bounds check doing
/// nothing, is the rule). `fits` is false past launch_limit(dim).
struct launch_extent {
  unsigned value = 0;
  bool fits = false;
};
[[nodiscard]] constexpr launch_extent shape_rule_extent(launch_dim dim, std::int64_t value,
                                                        std::uint64_t multiplier,
                                                        std::uint64_t divisor) noexcept {
  const std::uint64_t extent = scaled_extent(value, multiplier, divisor);
  if (extent > launch_limit(dim)) return {0, false};
  if (extent == 0 && dim != launch_dim::shared_bytes) return {1, true};
  return {static_cast<unsigned>(extent), true};
}

/// Whether two launch dimensions are the same (dim3 has no operator==).
[[nodiscard]] constexpr bool same_dims(const dim3& a, const dim3& b) noexcept {
  return a.x == b.x && a.y == b.y && a.z == b.z;
}

/// Whether two launches (anything with gridDim, blockDim and sharedMemBytes)
/// have the same grid, block and shared memory.
template <class Launch>
[[nodiscard]] constexpr bool same_launch(const Launch& a, const Launch& b) noexcept {
  return same_dims(a.gridDim, b.gridDim) && same_dims(a.blockDim, b.blockDim) &&
         a.sharedMemBytes == b.sharedMemBytes;
}

/// Whether a block of x * y * z threads is one CUDA launches (at most 1024).
[[nodiscard]] constexpr bool block_fits(unsigned x, unsigned y, unsigned z) noexcept {
  return static_cast<std::uint64_t>(x) * y * z <= 1024;
}

/// The field of a launch (cudaKernelNodeParams, or anything with gridDim,
/// blockDim and sharedMemBytes) that a shape rule sets.
template <class Launch>
[[nodiscard]] constexpr unsigned& launch_dimension(Launch& k, launch_dim dim) noexcept {
  switch (dim) {
    case launch_dim::grid_x: return k.gridDim.x;
    case launch_dim::grid_y: return k.gridDim.y;
    case launch_dim::grid_z: return k.gridDim.z;
    case launch_dim::block_x: return k.blockDim.x;
    case launch_dim::block_y: return k.blockDim.y;
    case launch_dim::block_z: return k.blockDim.z;
    case launch_dim::shared_bytes: return k.sharedMemBytes;
  }
  return k.sharedMemBytes;
}

cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, const cudaKernelNodeParams& p,
                           std::string_view name);
/// CUDA's edge data for an edge of kind `kind`: zeros for a full edge; the
/// programmatic dependency type from the upstream kernel's programmatic or
/// launch-completion port otherwise.
[[nodiscard]] cudaGraphEdgeData edge_data_of(edge_kind kind) noexcept;
/// The edge kind CUDA's edge data `data` means; none for a combination
/// cudag does not write (import refuses it, naming the edge).
[[nodiscard]] std::optional<edge_kind> edge_kind_of(const cudaGraphEdgeData& data) noexcept;
/// A kernel node after `deps`, dependency k of kind `edges[k]` (one per
/// dependency): cudaGraphAddNode with the edge data.
cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, std::span<const cudaGraphEdgeData> edges,
                           const cudaKernelNodeParams& p, std::string_view name);
void set_kernel(param_target to, cudaGraphNode_t n, const cudaKernelNodeParams& p,
                std::string_view name);
/// Launch attribute `id` of kernel node `n` set to `value`
/// (cudaGraphKernelNodeSetAttribute), on the template graph.
void set_kernel_attribute(cudaGraphNode_t n, cudaLaunchAttributeID id,
                          const cudaLaunchAttributeValue& value, std::string_view name);
/// Makes graph `g` keep `objects` alive by itself (one CUDA user object,
/// its reference moved to the graph): every exec instantiated from it holds
/// them too (cudag/retained.hpp). Nothing is made for an empty set.
void retain_in_graph(cudaGraph_t g, std::vector<std::shared_ptr<const void>> objects,
                     std::string_view graph_name);

/// Each of `priority` (0: none) and `a` not at its default, sent to kernel
/// node `h` in a fixed order (priority, cluster, cooperative, memory-sync
/// domain, carveout, access-policy window).
void send_launch_attributes(cudaGraphNode_t h, int priority, const launch_attributes& a,
                            std::string_view name);
/// Throws, naming kernel node `name`, where a cooperative launch of
/// `function` over `grid` could not have every block resident at once on
/// the current device (CUDA would refuse it only at launch, with
/// cudaErrorCooperativeLaunchTooLarge).
void check_cooperative_grid(const void* function, dim3 grid, dim3 block, unsigned shared_bytes,
                            std::string_view name);

// ----------------------------------------------------------------- memcpy --
[[nodiscard]] cudaMemcpy3DParms memcpy_1d_params(void* dst, const void* src, std::size_t bytes,
                                                 cudaMemcpyKind kind) noexcept;
cudaGraphNode_t add_memcpy(cudaGraph_t g, deps_span deps, const cudaMemcpy3DParms& p,
                           std::string_view name);
void set_memcpy(param_target to, cudaGraphNode_t n, const cudaMemcpy3DParms& p,
                std::string_view name);

// ----------------------------------------------------------------- memset --
/// `height` rows of `width` elements of `element_size` bytes (1, 2 or 4),
/// each set to the low bytes of `bits`; rows `pitch_bytes` apart (a single
/// row's pitch is its width in bytes).
[[nodiscard]] cudaMemsetParams memset_params(void* dst, unsigned bits, unsigned element_size,
                                             std::size_t width, std::size_t height,
                                             std::size_t pitch_bytes) noexcept;
cudaGraphNode_t add_memset(cudaGraph_t g, deps_span deps, const cudaMemsetParams& p,
                           std::string_view name);
void set_memset(param_target to, cudaGraphNode_t n, const cudaMemsetParams& p,
                std::string_view name);

// ------------------------------------------------------------------- host --
cudaGraphNode_t add_host(cudaGraph_t g, deps_span deps, const cudaHostNodeParams& p,
                         std::string_view name);
void set_host(param_target to, cudaGraphNode_t n, const cudaHostNodeParams& p,
              std::string_view name);

// ------------------------------------------------------ child and captured --
enum class child_ownership {
  clone,  ///< CUDA clones the child; the caller keeps and destroys it
  move,   ///< the node owns the child (needed for alloc/free or conditional nodes)
};
/// With child_ownership::move the caller must release its handle after success.
cudaGraphNode_t add_child(cudaGraph_t g, deps_span deps, cudaGraph_t child, child_ownership own,
                          std::string_view name);
/// Exec only: a template child node cannot take a new graph (CUDA has no
/// such setter), so a template target throws cudaErrorNotSupported.
void set_child(param_target to, cudaGraphNode_t n, cudaGraph_t child, std::string_view name);

// ------------------------------------------------------------------ empty --
cudaGraphNode_t add_empty(cudaGraph_t g, deps_span deps, std::string_view name);

// ----------------------------------------------------------------- events --
cudaGraphNode_t add_event_record(cudaGraph_t g, deps_span deps, cudaEvent_t e,
                                 std::string_view name);
void set_event_record(param_target to, cudaGraphNode_t n, cudaEvent_t e, std::string_view name);
cudaGraphNode_t add_event_wait(cudaGraph_t g, deps_span deps, cudaEvent_t e, std::string_view name);
void set_event_wait(param_target to, cudaGraphNode_t n, cudaEvent_t e, std::string_view name);

// ------------------------------------------------------- graph allocations --
struct allocation {
  cudaGraphNode_t node = nullptr;
  void* pointer = nullptr;
};
/// `device` < 0: the current device.
allocation add_mem_alloc(cudaGraph_t g, deps_span deps, std::size_t bytes, int device,
                         std::string_view name);
cudaGraphNode_t add_mem_free(cudaGraph_t g, deps_span deps, void* pointer, std::string_view name);

// ----------------------------------------------------------- conditionals --
[[nodiscard]] cudaGraphConditionalHandle create_condition(cudaGraph_t g, unsigned default_value,
                                                          bool assign_default,
                                                          std::string_view name);
/// Adds a conditional node; its body graphs (owned by the node) come back in
/// bodies_out, to be filled. if_else: two bodies; switch: one per case.
cudaGraphNode_t add_conditional(cudaGraph_t g, deps_span deps, cudaGraphConditionalHandle h,
                                conditional_kind kind, unsigned body_count,
                                std::span<cudaGraph_t> bodies_out, std::string_view name);

// ------------------------------------------------- stream work, no graph --
void run_kernel(cudaStream_t stream, const cudaKernelNodeParams& p, std::string_view name);
void run_memcpy(cudaStream_t stream, const cudaMemcpy3DParms& p, std::string_view name);
void run_memset(cudaStream_t stream, const cudaMemsetParams& p, std::string_view name);
void run_host(cudaStream_t stream, const cudaHostNodeParams& p, std::string_view name);
void run_event_record(cudaStream_t stream, cudaEvent_t e, std::string_view name);
void run_event_wait(cudaStream_t stream, cudaEvent_t e, std::string_view name);
[[nodiscard]] void* run_mem_alloc(cudaStream_t stream, std::size_t bytes, std::string_view name);
void run_mem_free(cudaStream_t stream, void* pointer, std::string_view name);

// --------------------------------------------------------- executable graph --
/// Names a node of the graph being instantiated or updated ("" if unknown).
using node_namer = std::function<std::string(cudaGraphNode_t)>;

/// Applies `from` to `exec` with cudaGraphExecUpdate. A refusal throws
/// cudag::error naming the node and saying why CUDA refused; the exec is
/// unchanged then.
void update_exec(cudaGraphExec_t exec, cudaGraph_t from, const node_namer& name_of);
void set_enabled(cudaGraphExec_t exec, cudaGraphNode_t n, bool enabled, std::string_view name);
[[nodiscard]] bool enabled(cudaGraphExec_t exec, cudaGraphNode_t n, std::string_view name);

// ---------------------------------------------------------------- capture --
void begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode, std::string_view name);
/// Ends the capture; an invalidated capture throws (naming `name`), with the
/// partial graph destroyed and the thread's last error cleared.
[[nodiscard]] unique_graph end_capture(cudaStream_t stream, std::string_view name);
/// Ends and discards a capture after a failure inside it; clears the
/// thread's last error so that later calls are not poisoned.
void abandon_capture(cudaStream_t stream) noexcept;

/// A capture in progress: the graph it builds and what its next work
/// depends on.
struct capture_point {
  cudaGraph_t graph = nullptr;
  /// Read with their edge data, as CUDA 13 requires where one is of
  /// another type than full (a kernel captured with programmatic stream
  /// serialization, as cuBLAS and CUTLASS do on Hopper; without it the
  /// query fails, cudaErrorLossyQuery). Nodes added after them follow them
  /// with full edges: they wait for the whole upstream work, which every
  /// node kind may.
  std::vector<cudaGraphNode_t> dependencies;
};
/// Throws, naming `name` (the graph being added), if `stream` is not
/// capturing.
[[nodiscard]] capture_point capture_in_progress(cudaStream_t stream, std::string_view name);
/// Removes a node (and its edges) from its graph: undoes a partial insertion.
void destroy_node(cudaGraphNode_t node) noexcept;
/// Makes `nodes` what the stream's next captured work depends on.
void set_capture_dependencies(cudaStream_t stream, std::span<const cudaGraphNode_t> nodes,
                              std::string_view name);

/// Records what `record(stream)` issues on `stream` into a new graph: the
/// one way captured nodes are recorded, at lowering and at rebind.
template <class Record>
[[nodiscard]] unique_graph record_by_capture(cudaStream_t stream, std::string_view name,
                                             Record&& record) {
  const batch_pause user_code;  // record() is the caller's code
  begin_capture(stream, cudaStreamCaptureModeThreadLocal, name);
  try {
    std::forward<Record>(record)(stream);
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  return end_capture(stream, name);
}

/// State of one host node, owned by the exec that runs it: the callable and
/// where its exceptions go (a host node must not throw into the driver).
struct host_call {
  std::string node;
  std::shared_ptr<host_failure_sink> failures;
  std::function<void()> body;

  static void CUDART_CB run(void* self) noexcept {
    auto* call = static_cast<host_call*>(self);
    try {
      call->body();
    } catch (...) {
      call->failures->record(call->node, std::current_exception());
    }
  }
  [[nodiscard]] cudaHostNodeParams params() noexcept { return {&host_call::run, this}; }
};

}  // namespace cudag::native

namespace cudag::detail {
/// The refusals of a launch that shape rules make and CUDA cannot launch,
/// naming the node (cudaErrorInvalidConfiguration): a dimension past its
/// limit with the rule and the parameter's value, a block of more than 1024
/// threads. Both front ends throw these; compiled with lowering.
[[noreturn, gnu::cold]] void refuse_launch_rule(const std::string& path, const shape_rule& r,
                                                std::int64_t value, std::uint64_t limit);
[[noreturn, gnu::cold]] void refuse_launch_block(const std::string& path, const dim3& block);
}  // namespace cudag::detail
