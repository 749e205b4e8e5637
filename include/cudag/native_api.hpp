#pragma once
// The seam under every native graph call cudag makes: one table of function
// pointers with the CUDA runtime's signatures, read through api(). The
// library installs the CUDA runtime's own functions; a test installs a
// recorder (cudag/native_recorder.hpp) to lower, instantiate, rebind and
// update graphs without a GPU, and to make a chosen call fail.
//
// The per-kind node table (cudag/native_nodes.hpp, compiled in
// src/native/native_nodes.cpp), the exec core, capture (cudag/capture.hpp)
// and import (cudag/import.hpp) call through it. The cost
// is one load and one indirect call per native call, against about a
// microsecond for the cheapest graph call (docs/benchmarks.md measures it).
#include <cuda_runtime_api.h>

#include <cstddef>

// The driver's kernel-node parameters (cuda.h), read by import; declared
// here so that this header does not pull in the driver's API.
struct CUDA_KERNEL_NODE_PARAMS_v2_st;

namespace cudag::native {

/// What a same_device_batch (native_nodes.hpp) learns of the kernels it is
/// asked for: each kernel seen, and its driver function once resolved. An
/// exec keeps one, so that its rebinds resolve each kernel once in its life
/// (the functions belong to the device the exec lives on).
struct kernel_functions {
  struct entry {
    const void* kernel = nullptr;  ///< host stub or cudaKernel_t
    void* function = nullptr;      ///< CUfunction; null: not resolved (yet)
    bool asked_again = false;
  };
  static constexpr unsigned capacity = 16;
  entry entries[capacity];
  unsigned count = 0;
  unsigned last = 0;  ///< the entry found last: a chain asks for one kernel again and again
};

struct api_table {
  // graphs and nodes
  cudaError_t (*graph_create)(cudaGraph_t*, unsigned int);
  cudaError_t (*graph_destroy)(cudaGraph_t);
  cudaError_t (*graph_destroy_node)(cudaGraphNode_t);
  cudaError_t (*add_kernel_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                 std::size_t, const cudaKernelNodeParams*);
  cudaError_t (*add_memcpy_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                 std::size_t, const cudaMemcpy3DParms*);
  cudaError_t (*add_memset_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                 std::size_t, const cudaMemsetParams*);
  cudaError_t (*add_host_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*, std::size_t,
                               const cudaHostNodeParams*);
  cudaError_t (*add_child_graph_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                      std::size_t, cudaGraph_t);
  cudaError_t (*add_empty_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                std::size_t);
  cudaError_t (*add_event_record_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                       std::size_t, cudaEvent_t);
  cudaError_t (*add_event_wait_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                     std::size_t, cudaEvent_t);
  cudaError_t (*add_mem_alloc_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                    std::size_t, cudaMemAllocNodeParams*);
  cudaError_t (*add_mem_free_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                                   std::size_t, void*);
  /// Generic add (conditional nodes, child graphs moved in).
  cudaError_t (*add_node)(cudaGraphNode_t*, cudaGraph_t, const cudaGraphNode_t*,
                          const cudaGraphEdgeData*, std::size_t, cudaGraphNodeParams*);
  cudaError_t (*conditional_handle_create)(cudaGraphConditionalHandle*, cudaGraph_t, unsigned int,
                                           unsigned int);
  cudaError_t (*kernel_node_set_attribute)(cudaGraphNode_t, cudaLaunchAttributeID,
                                           const cudaLaunchAttributeValue*);

  // parameters on the template graph
  cudaError_t (*kernel_node_set_params)(cudaGraphNode_t, const cudaKernelNodeParams*);
  cudaError_t (*memcpy_node_set_params)(cudaGraphNode_t, const cudaMemcpy3DParms*);
  cudaError_t (*memset_node_set_params)(cudaGraphNode_t, const cudaMemsetParams*);
  cudaError_t (*host_node_set_params)(cudaGraphNode_t, const cudaHostNodeParams*);
  cudaError_t (*event_record_node_set_event)(cudaGraphNode_t, cudaEvent_t);
  cudaError_t (*event_wait_node_set_event)(cudaGraphNode_t, cudaEvent_t);

  // parameters on the executable graph
  cudaError_t (*exec_kernel_node_set_params)(cudaGraphExec_t, cudaGraphNode_t,
                                             const cudaKernelNodeParams*);
  cudaError_t (*exec_memcpy_node_set_params)(cudaGraphExec_t, cudaGraphNode_t,
                                             const cudaMemcpy3DParms*);
  cudaError_t (*exec_memset_node_set_params)(cudaGraphExec_t, cudaGraphNode_t,
                                             const cudaMemsetParams*);
  cudaError_t (*exec_host_node_set_params)(cudaGraphExec_t, cudaGraphNode_t,
                                           const cudaHostNodeParams*);
  cudaError_t (*exec_event_record_node_set_event)(cudaGraphExec_t, cudaGraphNode_t, cudaEvent_t);
  cudaError_t (*exec_event_wait_node_set_event)(cudaGraphExec_t, cudaGraphNode_t, cudaEvent_t);
  cudaError_t (*exec_child_graph_node_set_params)(cudaGraphExec_t, cudaGraphNode_t, cudaGraph_t);
  cudaError_t (*node_set_enabled)(cudaGraphExec_t, cudaGraphNode_t, unsigned int);
  cudaError_t (*node_get_enabled)(cudaGraphExec_t, cudaGraphNode_t, unsigned int*);

  // reading graphs back: capture into a graph, import
  cudaError_t (*graph_get_nodes)(cudaGraph_t, cudaGraphNode_t*, std::size_t*);
  cudaError_t (*graph_get_edges)(cudaGraph_t, cudaGraphNode_t*, cudaGraphNode_t*,
                                 cudaGraphEdgeData*, std::size_t*);
  cudaError_t (*node_get_type)(cudaGraphNode_t, cudaGraphNodeType*);
  cudaError_t (*kernel_node_get_params)(cudaGraphNode_t, cudaKernelNodeParams*);
  cudaError_t (*kernel_node_get_attribute)(cudaGraphNode_t, cudaLaunchAttributeID,
                                           cudaLaunchAttributeValue*);
  cudaError_t (*memcpy_node_get_params)(cudaGraphNode_t, cudaMemcpy3DParms*);
  cudaError_t (*memset_node_get_params)(cudaGraphNode_t, cudaMemsetParams*);
  cudaError_t (*host_node_get_params)(cudaGraphNode_t, cudaHostNodeParams*);
  cudaError_t (*child_graph_node_get_graph)(cudaGraphNode_t, cudaGraph_t*);
  cudaError_t (*event_record_node_get_event)(cudaGraphNode_t, cudaEvent_t*);
  cudaError_t (*event_wait_node_get_event)(cudaGraphNode_t, cudaEvent_t*);
  cudaError_t (*mem_alloc_node_get_params)(cudaGraphNode_t, cudaMemAllocNodeParams*);
  cudaError_t (*mem_free_node_get_params)(cudaGraphNode_t, void*);
  cudaError_t (*graph_clone)(cudaGraph_t*, cudaGraph_t);
  cudaError_t (*node_find_in_clone)(cudaGraphNode_t*, cudaGraphNode_t, cudaGraph_t);
  // What only the driver tells of a kernel node: its function and the sizes
  // of its arguments (cuGraphKernelNodeGetParams, cuFuncGetParamInfo,
  // cuKernelGetParamInfo, cuFuncGetName, cuKernelGetName), reached through
  // the runtime so that nothing links libcuda. cudaErrorNotSupported where
  // the driver lacks the function; a parameter index past the last is
  // cudaErrorInvalidValue.
  cudaError_t (*kernel_node_get_driver_params)(cudaGraphNode_t, CUDA_KERNEL_NODE_PARAMS_v2_st*);
  cudaError_t (*function_get_param_info)(cudaFunction_t, std::size_t, std::size_t*, std::size_t*);
  cudaError_t (*kernel_get_param_info)(cudaKernel_t, std::size_t, std::size_t*, std::size_t*);
  cudaError_t (*function_get_name)(const char**, cudaFunction_t);
  cudaError_t (*kernel_get_name)(const char**, cudaKernel_t);

  // executable graphs
  cudaError_t (*instantiate)(cudaGraphExec_t*, cudaGraph_t, cudaGraphInstantiateParams*);
  cudaError_t (*exec_update)(cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo*);
  cudaError_t (*exec_destroy)(cudaGraphExec_t);
  cudaError_t (*launch)(cudaGraphExec_t, cudaStream_t);
  cudaError_t (*upload)(cudaGraphExec_t, cudaStream_t);

  // streams: the ones lowering records captured work on, and capture itself
  cudaError_t (*stream_create)(cudaStream_t*, unsigned int);
  cudaError_t (*stream_destroy)(cudaStream_t);
  cudaError_t (*stream_synchronize)(cudaStream_t);
  cudaError_t (*stream_begin_capture)(cudaStream_t, cudaStreamCaptureMode);
  cudaError_t (*stream_end_capture)(cudaStream_t, cudaGraph_t*);
  /// The graph a capture in progress builds and the nodes its next work
  /// will depend on (cudaStreamGetCaptureInfo).
  cudaError_t (*stream_get_capture_info)(cudaStream_t, cudaStreamCaptureStatus*, unsigned long long*,
                                         cudaGraph_t*, const cudaGraphNode_t**,
                                         const cudaGraphEdgeData**, std::size_t*);
  cudaError_t (*stream_update_capture_dependencies)(cudaStream_t, cudaGraphNode_t*,
                                                    const cudaGraphEdgeData*, std::size_t,
                                                    unsigned int);
  /// Capture into an existing graph (capture_guard), after the given nodes.
  cudaError_t (*stream_begin_capture_to_graph)(cudaStream_t, cudaGraph_t, const cudaGraphNode_t*,
                                               const cudaGraphEdgeData*, std::size_t,
                                               cudaStreamCaptureMode);
  cudaError_t (*stream_is_capturing)(cudaStream_t, cudaStreamCaptureStatus*);
  /// This thread's capture mode (capture_mode_scope).
  cudaError_t (*thread_exchange_stream_capture_mode)(cudaStreamCaptureMode*);
  cudaError_t (*get_device)(int*);
  /// cudaDeviceGetAttribute: the multiprocessor count a cooperative launch's
  /// co-residency is judged by.
  cudaError_t (*device_get_attribute)(int*, cudaDeviceAttr, int);
  /// cudaOccupancyMaxActiveBlocksPerMultiprocessor: blocks of a kernel
  /// (host stub or cudaKernel_t) resident at once on one multiprocessor.
  cudaError_t (*occupancy_max_active_blocks)(int*, const void*, int, std::size_t);
  /// Clears the calling thread's last (non-sticky) error.
  cudaError_t (*get_last_error)();

  // device memory: what executable graphs take (footprint, exec cache)
  /// Free and total device memory of the current device (cudaMemGetInfo).
  cudaError_t (*mem_get_info)(std::size_t*, std::size_t*);
  /// Gives graph memory no executing graph uses back to the OS.
  cudaError_t (*device_graph_mem_trim)(int);
  /// cudaGraphMemAttrReservedMemCurrent, UsedMemCurrent... (a std::uint64_t each).
  cudaError_t (*device_get_graph_mem_attribute)(int, cudaGraphMemAttributeType, void*);
  /// Events for the event nodes of footprint_model::measure.
  cudaError_t (*event_create)(cudaEvent_t*, unsigned int);
  cudaError_t (*event_destroy)(cudaEvent_t);

  // user objects: what a graph keeps alive by itself (cudag/retained.hpp)
  cudaError_t (*user_object_create)(cudaUserObject_t*, void*, cudaHostFn_t, unsigned int,
                                    unsigned int);
  cudaError_t (*user_object_release)(cudaUserObject_t, unsigned int);
  cudaError_t (*graph_retain_user_object)(cudaGraph_t, cudaUserObject_t, unsigned int, unsigned int);

  // stream work: a spec run without a graph (cudag::run_eagerly)
  cudaError_t (*launch_kernel)(const void*, dim3, dim3, void**, std::size_t, cudaStream_t);
  cudaError_t (*memcpy_3d_async)(const cudaMemcpy3DParms*, cudaStream_t);
  /// `height` rows of `width` elements of 1, 2 or 4 bytes, `pitch` bytes
  /// apart, set to the low bytes of `value` (the driver's cuMemsetD2D*Async).
  cudaError_t (*memset_2d_async)(void* dst, std::size_t pitch, unsigned value,
                                 unsigned element_size, std::size_t width, std::size_t height,
                                 cudaStream_t);
  cudaError_t (*launch_host_func)(cudaStream_t, cudaHostFn_t, void*);
  cudaError_t (*event_record)(cudaEvent_t, cudaStream_t);
  cudaError_t (*stream_wait_event)(cudaStream_t, cudaEvent_t, unsigned int);
  cudaError_t (*malloc_async)(void**, std::size_t, cudaStream_t);
  cudaError_t (*free_async)(void*, cudaStream_t);
};

/// The table in use. Set once at start-up by the library; replaced only by
/// install_api() (tests), never while another thread makes native calls.
extern const api_table* active_api;

[[nodiscard]] inline const api_table& api() noexcept { return *active_api; }

/// The CUDA runtime's own functions.
[[nodiscard]] const api_table& cuda_runtime_api() noexcept;

/// Makes `table` the one in use and returns the previous one. Every handle
/// made through a table must be destroyed through the same table.
const api_table* install_api(const api_table* table) noexcept;

}  // namespace cudag::native
