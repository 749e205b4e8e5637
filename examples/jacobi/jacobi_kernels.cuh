#pragma once
// Kernels of the Jacobi example: one relaxation sweep of the 2-D Poisson
// equation, and the convergence decision that drives the graph's while loop.
#include <cuda_runtime.h>

namespace jacobi {

/// out = average of in's four neighbours minus the source term, on the
/// interior; records the largest change (as float bits: non-negative floats
/// order like their bit patterns) when max_change_bits is not null.
///
/// The arithmetic is spelled with round-to-nearest intrinsics, in the order
/// the CPU reference uses, so that nvcc contracts nothing into an FMA: the
/// GPU computes exactly what the CPU does, and the two must agree on the
/// number of rounds to convergence, not just approximately on the grid.
__global__ void sweep(const float* in, float* out, const float* source, int n, float h2,
                      unsigned* max_change_bits) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row <= 0 || col <= 0 || row >= n - 1 || col >= n - 1) return;
  const int i = row * n + col;
  const float neighbours = __fadd_rn(__fadd_rn(__fadd_rn(in[i - n], in[i + n]), in[i - 1]), in[i + 1]);
  const float v = __fmul_rn(0.25f, __fsub_rn(neighbours, __fmul_rn(h2, source[i])));
  out[i] = v;
  if (max_change_bits) atomicMax(max_change_bits, __float_as_uint(fabsf(__fsub_rn(v, in[i]))));
}

/// Counts the iteration; loops again while the change is above tolerance
/// and the iteration budget is not spent.
__global__ void decide(cudaGraphConditionalHandle again, const unsigned* max_change_bits,
                       int* iterations, float tolerance, int max_iterations) {
  const int done = ++*iterations;
  const float change = __uint_as_float(*max_change_bits);
  cudaGraphSetConditional(again, change > tolerance && done < max_iterations ? 1u : 0u);
}

}  // namespace jacobi
