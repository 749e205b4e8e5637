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
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/handles.hpp"
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

// ----------------------------------------------------------------- kernel --
/// Blocks for `count` items, `per_block` a block: never 0 (a launch of zero
/// blocks is an error; one block with the kernel's bounds check is the rule).
[[nodiscard]] constexpr unsigned blocks_for(std::uint64_t count, std::uint64_t per_block) noexcept {
  if (per_block == 0) per_block = 1;
  const std::uint64_t blocks = (count + per_block - 1) / per_block;
  return blocks == 0 ? 1u : static_cast<unsigned>(blocks);
}
cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, const cudaKernelNodeParams& p,
                           std::string_view name);
void set_kernel(param_target to, cudaGraphNode_t n, const cudaKernelNodeParams& p,
                std::string_view name);
/// cudaLaunchAttributePriority, honoured when instantiated with node priorities.
void set_kernel_priority(cudaGraphNode_t n, int priority, std::string_view name);

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
