#pragma once
// A native table that answers the graph calls a kernel-node graph needs
// without doing anything (fake handles, success): the CPU benchmarks install
// it (cudag::native::install_api) to time what cudag itself adds on top of
// the driver. One thread at a time.
#include <cstdint>

#include "cudag/native_api.hpp"

namespace bench_null {

inline std::uintptr_t next_handle = 1;

template <class H>
H fresh() {
  return reinterpret_cast<H>(next_handle++ * 16);
}

inline cudaError_t graph_create(cudaGraph_t* g, unsigned) {
  *g = fresh<cudaGraph_t>();
  return cudaSuccess;
}
inline cudaError_t graph_destroy(cudaGraph_t) { return cudaSuccess; }
inline cudaError_t add_kernel(cudaGraphNode_t* n, cudaGraph_t, const cudaGraphNode_t*, std::size_t,
                              const cudaKernelNodeParams*) {
  *n = fresh<cudaGraphNode_t>();
  return cudaSuccess;
}
inline cudaError_t get_device(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t last_error() { return cudaSuccess; }
inline cudaError_t stream_destroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t mem_get_info(std::size_t* free, std::size_t* total) {
  *free = *total = std::size_t{1} << 36;
  return cudaSuccess;
}
inline cudaError_t graph_mem_trim(int) { return cudaSuccess; }
inline cudaError_t graph_mem_attribute(int, cudaGraphMemAttributeType, void* value) {
  *static_cast<std::uint64_t*>(value) = 0;
  return cudaSuccess;
}
inline cudaError_t event_create(cudaEvent_t* e, unsigned) {
  *e = fresh<cudaEvent_t>();
  return cudaSuccess;
}
inline cudaError_t event_destroy(cudaEvent_t) { return cudaSuccess; }

/// The runtime's table with the graph calls above in place of CUDA's.
inline cudag::native::api_table table() {
  cudag::native::api_table t = cudag::native::cuda_runtime_api();
  t.graph_create = graph_create;
  t.graph_destroy = graph_destroy;
  t.add_kernel_node = add_kernel;
  t.get_device = get_device;
  t.get_last_error = last_error;
  t.stream_destroy = stream_destroy;
  t.mem_get_info = mem_get_info;
  t.device_graph_mem_trim = graph_mem_trim;
  t.device_get_graph_mem_attribute = graph_mem_attribute;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  return t;
}

}  // namespace bench_null
