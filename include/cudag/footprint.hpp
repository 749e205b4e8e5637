#pragma once
// What a graph will cost in device memory, before it is instantiated, and
// what it did cost, after:
//
//   cudag::footprint f = cudag::estimate_footprint(spec);        // no CUDA call
//   f.nodes, f.nodes_by_kind[...], f.exec_bytes, f.allocation_peak_bytes
//   auto model = cudag::footprint_model::measure(0);             // this GPU, once
//   auto [e, used] = cudag::instantiate_and_measure(spec, binds, stream);
//
// An executable graph takes device memory of its own (the driver's copy of
// every node, about 2 KiB a kernel node on an H100 by the default model);
// graph-owned buffers (mem_alloc nodes) take graph memory besides, mapped
// at the first upload or launch and given back by cudaDeviceGraphMemTrim.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cudag/bindings.hpp"
#include "cudag/exec.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// Number of node kinds (node_kind's alternatives).
inline constexpr std::size_t node_kind_count = static_cast<std::size_t>(node_kind::conditional) + 1;

/// Device memory an executable graph takes: a fixed part plus so many bytes
/// per node of each kind (nested nodes included).
struct footprint_model {
  std::size_t fixed_bytes = 0;
  std::array<std::size_t, node_kind_count> bytes_per_node{};  ///< indexed by node_kind
  /// false: default_model()'s figures, plausible but not measured on the
  /// device in use.
  bool measured = false;
  int device = -1;               ///< the device measured (-1: none)
  std::string device_name;       ///< its name, "" for the default model
  /// The smallest non-zero step by which cudaMemGetInfo's free memory moved
  /// while measuring (2 MiB on the GPUs seen so far): a measured figure is
  /// exact to about this step divided by the nodes of a measured graph.
  std::size_t granularity_bytes = 0;
  std::size_t nodes_measured = 0;  ///< nodes of each measured graph

  [[nodiscard]] std::size_t per_node(node_kind kind) const noexcept {
    return bytes_per_node[static_cast<std::size_t>(kind)];
  }

  /// DEFAULT FIGURES, NOT MEASURED: a kernel node about 2.1 KiB and a
  /// fixed 192 KiB, from raw CUDA on an H100 (a 200-kernel chain 0.6 MiB,
  /// a 1000-kernel chain 2.25 MiB per exec); the other kinds guessed from
  /// it. measure() on the device in use replaces them.
  [[nodiscard]] static footprint_model default_model() noexcept;

  struct measure_options {
    /// Nodes of each measured graph (a chain of one kind).
    std::size_t nodes = 4096;
    /// A __global__ function taking no arguments, for the kernel nodes; null:
    /// an empty kernel loaded from PTX built into the library
    /// (cudaLibraryLoadData, outside the native seam).
    const void* kernel = nullptr;
    /// Where each graph is uploaded (the default stream when null).
    cudaStream_t stream = nullptr;
  };
  /// Calibrates the model on `device` (made current for the call, then
  /// restored): for each kind, instantiates and uploads a graph of `nodes`
  /// nodes of it (and an empty graph for the fixed part), reading
  /// cudaMemGetInfo before the instantiation and after an upload and one launch, graph
  /// memory (cudaGraphMemAttrReservedMemCurrent) subtracted. memset and
  /// memcpy nodes write into one buffer of the graph (a mem_alloc node);
  /// mem_alloc and mem_free are measured as pairs (half each); a child node
  /// holds one empty node, measured less that node; a conditional node an
  /// empty body. Every native call goes through the seam but the loading
  /// of the built-in kernel. Free memory that other threads or processes
  /// take or give back meanwhile distorts the figures, and so does memory
  /// the driver kept from executable graphs destroyed earlier in this
  /// process (it gives that to the next ones): calibrate early. Every
  /// measured graph stays alive until the calibration ends, for that reason.
  [[nodiscard]] static footprint_model measure(int device, const measure_options& options);
  [[nodiscard]] static footprint_model measure(int device) { return measure(device, {}); }

  /// One line a kind: "kernel 2163 B/node", then the fixed part, the device
  /// and whether it was measured.
  [[nodiscard]] std::string table() const;
};

/// A spec's footprint, before instantiating.
struct footprint {
  /// Nodes of each kind, those of child graphs and conditional bodies
  /// included (a body once, however often it runs). A captured node counts
  /// as one: what it records is not known before it is recorded.
  std::array<std::size_t, node_kind_count> nodes_by_kind{};
  std::size_t nodes = 0;   ///< all of them (= spec.total_nodes())
  std::size_t graphs = 0;  ///< the spec's graph, its children and bodies
  /// The executable graph's device memory by the model: fixed_bytes + the
  /// bytes of each node.
  std::size_t exec_bytes = 0;
  /// Graph-owned buffers: the largest total that can be live at one point
  /// of some execution order the edges allow. A buffer is live from its
  /// mem_alloc node to its mem_free node (to the end of the launch and
  /// beyond without one); two buffers cannot overlap when a path leads from
  /// one's free to the other's alloc. Computed exactly, as a maximum-weight
  /// antichain (weighted Dilworth, one max-flow). A child graph's buffers
  /// count as one block of its own peak, live from the child node to the
  /// end of the graph (kept while any of them is not freed inside it, else
  /// ending at the child node). CUDA must map at least this much at launch;
  /// it rounds up to its granularity and may map up to
  /// allocation_total_bytes.
  std::size_t allocation_peak_bytes = 0;
  /// The sum of every mem_alloc node's bytes: the upper bound.
  std::size_t allocation_total_bytes = 0;
  bool model_measured = false;  ///< the model's `measured`

  [[nodiscard]] std::size_t count(node_kind kind) const noexcept {
    return nodes_by_kind[static_cast<std::size_t>(kind)];
  }
  /// "graph 'g': 203 nodes (kernel 200, memset 3), exec ~0.61 MiB (default
  /// model), graph-owned peak 4 MiB of 6 MiB".
  [[nodiscard]] std::string summary(std::string_view graph_name = {}) const;
};

/// The footprint of `spec` by `model`. No CUDA call; the spec need not be
/// checked (unknown dependency names are ignored).
[[nodiscard]] footprint estimate_footprint(const graph_spec& spec,
                                           const footprint_model& model = footprint_model::default_model());

/// Graph memory of a device, as cudaDeviceGetGraphMemAttribute reports it.
struct graph_memory_state {
  std::uint64_t reserved_bytes = 0;  ///< cudaGraphMemAttrReservedMemCurrent
  std::uint64_t used_bytes = 0;      ///< cudaGraphMemAttrUsedMemCurrent
};
[[nodiscard]] graph_memory_state graph_memory(int device);
/// Free device memory of the current device (cudaMemGetInfo).
[[nodiscard]] std::size_t device_memory_free();

/// What an instantiation took, measured.
struct measured_footprint {
  /// The drop of cudaMemGetInfo's free memory from before the instantiation
  /// to after the upload (0 if it rose): the exec and any graph memory the
  /// upload had to reserve. In steps of the driver's granularity.
  std::size_t device_bytes = 0;
  /// Graph memory reserved by the upload (ReservedMemCurrent after less before).
  std::uint64_t graph_reserved_bytes = 0;
  /// The attributes after the upload.
  graph_memory_state graph_after{};
  /// device_bytes less graph_reserved_bytes (0 if negative): the exec itself.
  [[nodiscard]] std::size_t exec_bytes() const noexcept {
    return device_bytes > graph_reserved_bytes ? device_bytes - static_cast<std::size_t>(graph_reserved_bytes) : 0;
  }
};

/// An exec and what it took.
struct measured_exec {
  exec executable;
  measured_footprint footprint;
};

/// instantiate(), then an upload on `stream` (so that the graph memory is
/// mapped and counted), measured around both. Other work taking or giving
/// back device memory meanwhile shows in the figure.
[[nodiscard]] measured_exec instantiate_and_measure(graph_spec spec,
                                                    std::span<const binding> bindings,
                                                    cudaStream_t stream,
                                                    const instantiate_options& options = {});

}  // namespace cudag
