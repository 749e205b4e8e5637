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

/// The runtime's table with the graph calls above in place of CUDA's.
inline cudag::native::api_table table() {
  cudag::native::api_table t = cudag::native::cuda_runtime_api();
  t.graph_create = graph_create;
  t.graph_destroy = graph_destroy;
  t.add_kernel_node = add_kernel;
  t.get_device = get_device;
  t.get_last_error = last_error;
  t.stream_destroy = stream_destroy;
  return t;
}

}  // namespace bench_null
