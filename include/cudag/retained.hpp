#pragma once
// What a CUDA graph keeps alive by itself. Lowering hands the objects a graph
// points at (host-node callables, run-time compiled modules, library handles
// of captured nodes, argument storage) to the CUDA graph as one user object
// (cudaUserObjectCreate, cudaGraphRetainUserObject): every executable graph
// instantiated from it, by cudag or by anyone, holds them too, so that a CUDA
// graph or exec outliving the cudag objects that built it stays valid.
//
// CUDA calls a user object's destructor on a thread of its own, where no
// CUDA call may be made; releasing these objects can make one (a module
// unloaded, a stream destroyed). So the destructor only queues them, and
// they are released on a thread of the program: when cudag next destroys a
// graph or an exec or lowers one, or when release_retained_objects() is
// called.

#include <cstddef>

namespace cudag {

/// Releases what CUDA graphs and execs destroyed since the last call kept
/// alive; returns how many sets were released. Any thread; never inside a
/// CUDA callback.
std::size_t release_retained_objects() noexcept;

}  // namespace cudag
