#pragma once
// State shared by the compile-time lowering walk and by rebinding: where
// named values live, where host-node failures go, the stream used to record
// captured nodes, and how a node's changed parameters reach CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "cudag/dsl/arguments.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_nodes.hpp"

namespace cudag::dsl {

/// Where a recomputed node's parameters go.
enum class update_target {
  exec_node,      ///< cudaGraphExec*SetParams on the instantiated graph
  template_node,  ///< cudaGraph*SetParams on the template (then cudaGraphExecUpdate)
};

struct lowering_state {
  value_tables values;
  std::shared_ptr<host_failure_sink> host_failures;
  cudaStream_t capture_stream = nullptr;  ///< created on first use
  unique_stream owned_capture_stream;
  cudaGraphExec_t exec = nullptr;         ///< set once instantiated

  cudaStream_t stream_for_capture() {
    if (!capture_stream) {
      owned_capture_stream = make_stream();
      capture_stream = owned_capture_stream.get();
    }
    return capture_stream;
  }
};

/// Records `record(stream)` by stream capture into a fresh graph.
template <class Record>
[[nodiscard]] unique_graph record_by_capture(cudaStream_t stream, std::string_view node,
                                             Record&& record) {
  CUDAG_CUDA_NODE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), node);
  cudaGraph_t recorded = nullptr;
  try {
    record(stream);
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &recorded);
    if (recorded) (void)cudaGraphDestroy(recorded);
    throw;
  }
  CUDAG_CUDA_NODE(cudaStreamEndCapture(stream, &recorded), node);
  return unique_graph(recorded);
}

}  // namespace cudag::dsl
