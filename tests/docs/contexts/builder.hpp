// Prelude: a run-time builder `b` with the parameters fragments read, and
// launch shapes.
#pragma once
#include "data.hpp"

__global__ void step(float* x, cudaGraphConditionalHandle again);
void my_sort(float* keys, int n, cudaStream_t stream);

extern cudag::builder b;
extern const cudag::param_handle<float*> x;
extern const cudag::param_handle<int> n;
extern const cudag::param_handle<float*> keys;
extern const cudag::param_handle<float*> out;
extern const dim3 grid, block;
extern const unsigned blocks;
extern std::vector<int> rounds_seen;
