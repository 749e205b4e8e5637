#pragma once
// State shared by the compile-time lowering walk and by rebinding: where
// named values live, where host-node failures go, the stream used to record
// captured nodes, and how a node's changed parameters reach CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "cudag/dsl/arguments.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/handles.hpp"
#include "cudag/lean_std.hpp"
#include "cudag/native_nodes.hpp"

namespace cudag::dsl::detail {

/// The parameters a rebind changed (name hashes): nodes in nested graphs
/// that read any of them are recomputed.
using param_hashes = std::span<const std::uint64_t>;

struct lowering_state {
  value_tables values;
  /// Each buffer's allocation size in bytes, by slot beside values.buffers
  /// (where the graph keeps them: the exec's read-back checks views by it).
  std::size_t* buffer_bytes = nullptr;
  std::shared_ptr<host_failure_sink> host_failures;
  std::shared_ptr<retired_objects> retired;  ///< host-node snapshots a rebind replaced
  cudaStream_t capture_stream = nullptr;  ///< created on first use
  unique_stream owned_capture_stream;
  cudaGraphExec_t exec = nullptr;         ///< set once instantiated
  /// While the lowering walk adds a kernel node with a typed dependency:
  /// CUDA's edge data, one per dependency (empty for every other node).
  std::span<const cudaGraphEdgeData> edges;

  cudaStream_t stream_for_capture() {
    if (!capture_stream) {
      owned_capture_stream = make_stream();
      capture_stream = owned_capture_stream.get();
    }
    return capture_stream;
  }
};

}  // namespace cudag::dsl::detail
