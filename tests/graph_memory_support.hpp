#pragma once
// Gives back graph-owned memory that outlived its graph (a buffer without a
// free node, or the last launch's allocation under auto-free-on-launch)
// through another graph's free node. cudaFree would do as far as CUDA is
// concerned, but compute-sanitizer's memcheck (CUDA 13.0) then keeps the
// freed size for the address, and reports a later, larger graph allocation
// at that address as out of bounds; a free node it tracks correctly
// (tests/sanitizer/freed_graph_memory_repro.cu shows both with raw CUDA).
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"

namespace cudag::testing {

inline void free_graph_allocation(void* address) {
  cudag::builder b("release");
  auto allocation = b.external_buffer<unsigned char>("allocation");
  b.free("free_allocation", allocation);
  const cudag::binding binds[] = {
      cudag::bind("allocation", static_cast<unsigned char*>(address))};
  auto e = cudag::instantiate(std::move(b).build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
}

}  // namespace cudag::testing
