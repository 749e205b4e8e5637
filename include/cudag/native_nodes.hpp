#pragma once
// The only place that adds nodes to a cudaGraph_t: one checked wrapper per
// node kind, each naming the node in its error. Both lowering paths (a spec,
// and the DSL's compile-time walk) call these, so every front end gets the
// same errors and the same rules.
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "cudag/error.hpp"
#include "cudag/exec_core.hpp"

namespace cudag::native {

using deps_span = std::span<const cudaGraphNode_t>;

inline cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, const cudaKernelNodeParams& p,
                                  std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddKernelNode(&n, g, deps.data(), deps.size(), &p), name);
  return n;
}

inline cudaMemcpy3DParms memcpy_1d_params(void* dst, const void* src, std::size_t bytes,
                                          cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), bytes, bytes, 1};
  p.dstPtr = cudaPitchedPtr{dst, bytes, bytes, 1};
  p.extent = cudaExtent{bytes, 1, 1};
  p.kind = kind;
  return p;
}

inline cudaGraphNode_t add_memcpy(cudaGraph_t g, deps_span deps, void* dst, const void* src,
                                  std::size_t bytes, cudaMemcpyKind kind, std::string_view name) {
  cudaGraphNode_t n = nullptr;
  const cudaMemcpy3DParms p = memcpy_1d_params(dst, src, bytes, kind);
  CUDAG_CUDA_NODE(cudaGraphAddMemcpyNode(&n, g, deps.data(), deps.size(), &p), name);
  return n;
}

inline cudaGraphNode_t add_memset(cudaGraph_t g, deps_span deps, const cudaMemsetParams& p,
                                  std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddMemsetNode(&n, g, deps.data(), deps.size(), &p), name);
  return n;
}

inline cudaGraphNode_t add_host(cudaGraph_t g, deps_span deps, const cudaHostNodeParams& p,
                                std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddHostNode(&n, g, deps.data(), deps.size(), &p), name);
  return n;
}

/// Adds `child` as a child graph. A child holding alloc/free or conditional
/// nodes cannot be cloned: pass move_ownership and release your handle.
inline cudaGraphNode_t add_child(cudaGraph_t g, deps_span deps, cudaGraph_t child,
                                 bool move_ownership, std::string_view name) {
  cudaGraphNode_t n = nullptr;
  if (!move_ownership) {
    CUDAG_CUDA_NODE(cudaGraphAddChildGraphNode(&n, g, deps.data(), deps.size(), child), name);
    return n;
  }
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeGraph;
  p.graph.graph = child;
  p.graph.ownership = cudaGraphChildGraphOwnershipMove;
  CUDAG_CUDA_NODE(cudaGraphAddNode(&n, g, deps.data(), nullptr, deps.size(), &p), name);
  return n;
}

inline cudaGraphNode_t add_empty(cudaGraph_t g, deps_span deps, std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddEmptyNode(&n, g, deps.data(), deps.size()), name);
  return n;
}

inline cudaGraphNode_t add_event_record(cudaGraph_t g, deps_span deps, cudaEvent_t e,
                                        std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddEventRecordNode(&n, g, deps.data(), deps.size(), e), name);
  return n;
}

inline cudaGraphNode_t add_event_wait(cudaGraph_t g, deps_span deps, cudaEvent_t e,
                                      std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddEventWaitNode(&n, g, deps.data(), deps.size(), e), name);
  return n;
}

struct allocation {
  cudaGraphNode_t node = nullptr;
  void* pointer = nullptr;
};

inline allocation add_mem_alloc(cudaGraph_t g, deps_span deps, std::size_t bytes, int device,
                                std::string_view name) {
  if (device < 0) CUDAG_CUDA_NODE(cudaGetDevice(&device), name);
  cudaMemAllocNodeParams p{};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = device;
  p.bytesize = bytes;
  allocation a;
  CUDAG_CUDA_NODE(cudaGraphAddMemAllocNode(&a.node, g, deps.data(), deps.size(), &p), name);
  a.pointer = p.dptr;
  return a;
}

inline cudaGraphNode_t add_mem_free(cudaGraph_t g, deps_span deps, void* pointer,
                                    std::string_view name) {
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddMemFreeNode(&n, g, deps.data(), deps.size(), pointer), name);
  return n;
}

inline cudaGraphConditionalHandle create_condition(cudaGraph_t g, unsigned default_value,
                                                   bool assign_default, std::string_view name) {
  cudaGraphConditionalHandle h{};
  CUDAG_CUDA_NODE(cudaGraphConditionalHandleCreate(&h, g, default_value,
                                                   assign_default ? cudaGraphCondAssignDefault : 0),
                  name);
  return h;
}

/// Adds a conditional node; its body graphs (owned by the node) come back in
/// bodies_out to be filled. switch: one body per case.
inline cudaGraphNode_t add_conditional(cudaGraph_t g, deps_span deps, cudaGraphConditionalHandle h,
                                   cudaGraphConditionalNodeType type, unsigned body_count,
                                   std::span<cudaGraph_t> bodies_out, std::string_view name) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = type;
  p.conditional.size = body_count;
  if (bodies_out.size() < body_count)
    throw error("conditional node '" + std::string(name) + "': room for " +
                    std::to_string(bodies_out.size()) + " bodies, " + std::to_string(body_count) +
                    " needed",
                cudaErrorInvalidValue, "cudaGraphAddNode", std::string(name));
  cudaGraphNode_t n = nullptr;
  CUDAG_CUDA_NODE(cudaGraphAddNode(&n, g, deps.data(), nullptr, deps.size(), &p), name);
  for (unsigned i = 0; i < body_count; ++i) bodies_out[i] = p.conditional.phGraph_out[i];
  return n;
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
