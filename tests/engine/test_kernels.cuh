#pragma once
// Kernels shared by the engine's gpu tests.
#include <cuda_runtime.h>

#include <cstdint>

namespace engine_test {

__global__ void fill_iota(float* out, float start, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = start + static_cast<float>(i);
}

__global__ void scale(float* x, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

__global__ void axpy(const float* x, float* y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void add_one(int* counter) { atomicAdd(counter, 1); }

/// Body of a while loop: counts, and ends the loop after `limit` rounds.
__global__ void count_and_continue(cudaGraphConditionalHandle h, int* counter, int limit) {
  const int now = atomicAdd(counter, 1) + 1;
  cudaGraphSetConditional(h, now < limit ? 1u : 0u);
}

__global__ void set_condition(cudaGraphConditionalHandle h, const unsigned* value) {
  cudaGraphSetConditional(h, *value);
}

__global__ void write_value(int* out, int v) { *out = v; }

/// Records the order in which nodes ran: slot[id] = next ticket.
__global__ void take_ticket(unsigned* ticket, unsigned* order, int id) {
  order[id] = atomicAdd(ticket, 1u);
}

/// Busy-waits at least `cycles` SM clock cycles. The empty asm statements
/// with a memory clobber keep the compiler from moving memory operations
/// across the wait.
__device__ inline void spin_cycles(long long cycles) {
  asm volatile("" ::: "memory");
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  asm volatile("" ::: "memory");
}

/// One node of an ordering test (one thread): takes a ticket when it starts,
/// busy-waits spin[id] cycles, takes a ticket when it ends. An edge a -> b
/// held when end[a] < begin[b]: a had finished before b started. Without
/// the edge, a long spin[a] and a short spin[b] make b start first or
/// while a still runs.
__global__ void ordered_ticket(unsigned* ticket, unsigned* begin, unsigned* end,
                               const long long* spin, int id) {
  begin[id] = atomicAdd(ticket, 1u);
  spin_cycles(spin[id]);
  end[id] = atomicAdd(ticket, 1u);
}

/// Busy-waits at least `milliseconds` (on any clock up to 2 GHz), then
/// writes `value`: a producer slow enough that a consumer which does not
/// wait for it reads what was there before.
__global__ void spin_then_write(int* out, int value, int milliseconds) {
  spin_cycles(2000000LL * milliseconds);
  *out = value;
}

/// One thread per block writes blockIdx.x + 1 to slot[blockIdx.x] and counts
/// the block: which blocks ran, independent of any bounds guard.
__global__ void mark_blocks(unsigned* slot, unsigned* blocks_seen) {
  if (threadIdx.x == 0) {
    slot[blockIdx.x] = blockIdx.x + 1;
    atomicAdd(blocks_seen, 1u);
  }
}

}  // namespace engine_test
