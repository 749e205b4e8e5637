// Prelude of the docs' code blocks: every public header and the kernels the
// blocks name, declared as a .cu file declares them (__global__ is empty
// under the host compiler). Names of values are left to the other preludes.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <cudag/blas.hpp>
#include <cudag/cudag.hpp>
#include <cudag/fft.hpp>
#include <cudag/native_recorder.hpp>
#include <cudag/rand.hpp>
#include <cudag/rtc.hpp>

__global__ void scale(float* x, float a, int n);
__global__ void axpy(const float* x, float* y, float a, int n);
__global__ void smooth(const float* in, float* out, int n);
__global__ void decide(cudaGraphConditionalHandle expensive, const unsigned* error_bits);
__global__ void fill_kernel(float* x, int n);
__global__ void use_kernel(const float* in, float* out);
__global__ void choose_next(cudag::device_graph next, int* steps, int limit);
