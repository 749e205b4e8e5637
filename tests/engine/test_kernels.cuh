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

}  // namespace engine_test
