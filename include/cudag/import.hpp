#pragma once
// A cudaGraph_t that cudag did not build (captured from any library, or
// built by hand) read back into a graph_spec, so that check(), analyze(),
// DOT pictures and lowering apply to it.
//
// Nodes are named by kind and index in the graph's creation order
// ("kernel_0", "memcpy_0", "kernel_1", "child_0"...), edges become
// dependencies, and parameters are read where CUDA can read them back:
// - kernel: function, grid, block, dynamic shared bytes, and each argument
//   as literal bytes (argument sizes from the driver's cuFuncGetParamInfo,
//   reached through cudaGetDriverEntryPointByVersion; no libcuda link);
// - memcpy (1-D, pointer to pointer), memset, host (function + user data),
//   empty, event record/wait, mem alloc/free;
// - child graphs, imported recursively.
// An argument or pointer that falls inside a mem-alloc node's allocation
// becomes a buffer reference (name + offset), so the buffer checks see it
// and a re-lowered graph uses its own allocation.
//
// A node that cannot be read (a kernel launched with `extra` arguments or
// whose argument sizes the driver does not tell, a 2-D/3-D or array copy,
// a conditional node, external semaphores, ...) is kept *opaque*: a
// captured node that, when lowered, inserts a copy of the original node
// (a one-node clone of the source graph) as a child graph. It keeps its
// effect, not its parameters. Where the source graph cannot be cloned
// (alloc/free or conditional nodes), lowering such a node throws, naming it.
//
// Each edge's data (CUDA's programmatic dependent launch) becomes the kind
// of its dependency (node::dependency_kinds): full, programmatic (from the
// upstream kernel's programmatic port) or launch_completion (from its
// launch-completion port). Edge data of another combination is refused,
// naming the edge's two nodes, and so are two edges of different kinds
// between the same two nodes. A kernel node with a programmatic or
// launch-completion edge into it is imported with
// kernel_node::synchronizes_grid_dependencies set: CUDA already runs it
// early, so its author took it to call cudaGridDependencySynchronize()
// before reading what its predecessors wrote. cudag cannot see the kernel's
// code to confirm that; the marker records the graph as CUDA runs it. (A
// kernel kept opaque cannot take such an edge: check() refuses it, naming
// the edge.)
#include <cuda_runtime_api.h>

#include <string>

#include "cudag/spec.hpp"

namespace cudag {

struct import_options {
  std::string name = "imported";  ///< graph_spec::name of the result
};

/// Reads `graph` into a spec. The spec's literals hold the graph's pointers
/// and handles as they are: the memory and events they point at must
/// outlive any lowering of the spec. Throws cudag::error naming the node
/// when CUDA refuses a query.
[[nodiscard]] graph_spec import_graph(cudaGraph_t graph, const import_options& options = {});

}  // namespace cudag
