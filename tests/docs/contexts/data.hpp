// Prelude: the kernels, and the host-side values fragments pass around
// (device pointers, counts, a stream, a spec and its bindings).
#pragma once
#include "kernels.hpp"

void library_call(cudaStream_t stream);
void another_library_call(cudaStream_t stream);

extern float* d_x;
extern float* d_y;
extern float* d_x2;
extern int* d_steps;
extern int count;
extern cudaStream_t stream;
extern float* d_noise;
extern cufftComplex* d_spectrum;
extern cufftComplex* d_other_spectrum;
extern cudag::graph_spec spec;
extern const cudag::binding binds[2];
extern std::span<const cudag::binding> bindings;
extern float* other;
extern float* fake_x;
extern float* fake_y;
extern float* fake_x2;
extern cudaGraphNode_t node;
extern const cudag::rtc::source src;
