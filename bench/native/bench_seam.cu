// What the native seam costs on the real path: building a graph of empty
// and kernel nodes with the CUDA runtime's functions called directly,
// against the same through cudag's per-kind table (one indirect call more a
// node). Interleaved, warmed, medians; prints one line per shape.
//
//   bench_seam [nodes=2000] [runs=41]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cudag/handles.hpp"
#include "cudag/native_nodes.hpp"

namespace {

__global__ void noop_kernel() {}  // only the add is timed: nothing launches

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Build>
double time_once(Build&& build) {
  cudaGraph_t g = nullptr;
  if (cudaGraphCreate(&g, 0) != cudaSuccess) std::exit(2);
  const auto start = clock_type::now();
  build(g);
  const double us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
  cudaGraphDestroy(g);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 41;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(&noop_kernel);
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(32);

  auto raw_empty = [&](cudaGraph_t g) {
    cudaGraphNode_t prev = nullptr, n = nullptr;
    for (int i = 0; i < nodes; ++i) {
      if (cudaGraphAddEmptyNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0) != cudaSuccess) std::exit(3);
      prev = n;
    }
  };
  auto table_empty = [&](cudaGraph_t g) {
    cudaGraphNode_t prev = nullptr;
    for (int i = 0; i < nodes; ++i)
      prev = cudag::native::add_empty(g, cudag::native::deps_span(&prev, prev ? 1 : 0), "n");
  };
  auto raw_kernel = [&](cudaGraph_t g) {
    cudaGraphNode_t prev = nullptr, n = nullptr;
    for (int i = 0; i < nodes; ++i) {
      if (cudaGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &kp) != cudaSuccess)
        std::exit(3);
      prev = n;
    }
  };
  auto table_kernel = [&](cudaGraph_t g) {
    cudaGraphNode_t prev = nullptr;
    for (int i = 0; i < nodes; ++i)
      prev = cudag::native::add_kernel(g, cudag::native::deps_span(&prev, prev ? 1 : 0), kp, "n");
  };

  std::printf("device: %s; %d-node chains, medians of %d interleaved runs\n", prop.name, nodes, runs);
  auto compare = [&](const char* what, auto& raw, auto& table) {
    std::vector<double> a, b;
    for (int w = 0; w < 3; ++w) time_once(raw), time_once(table);
    for (int r = 0; r < runs; ++r) {
      if (r % 2) {
        a.push_back(time_once(raw));
        b.push_back(time_once(table));
      } else {
        b.push_back(time_once(table));
        a.push_back(time_once(raw));
      }
    }
    std::printf("%-8s raw %9.1f us   through the table %9.1f us   ratio %.3f\n", what, median(a),
                median(b), median(b) / median(a));
  };
  compare("empty", raw_empty, table_empty);
  compare("kernel", raw_kernel, table_kernel);
  return 0;
}
