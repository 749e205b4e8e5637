// Prelude: the builder's, and what the README's tour of the extras names:
// NVRTC source, GEMM operands, library calls to capture, graphs.
#pragma once
#include "builder.hpp"

extern const cudag::rtc::source source;
extern const cudag::param_handle<const float*> a;
extern const cudag::param_handle<const float*> w;
extern const cudag::param_handle<float*> c;
extern const cudag::param_handle<float> alpha;
extern cudaGraph_t any_cuda_graph;
extern cudaGraph_t graph;
