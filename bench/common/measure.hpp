#pragma once
// What the GPU benchmark programs share: a CUDA call checked (exit 1, naming
// the program, the place and CUDA's error name) and the median of samples.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define BENCH_CHECK(program, call)                                                      \
  do {                                                                                  \
    const cudaError_t bench_code_ = (call);                                             \
    if (bench_code_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s: %s:%d %s failed: %s\n", program, __FILE__, __LINE__, #call, \
                   cudaGetErrorName(bench_code_));                                      \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace bench {

/// The median of `v` (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace bench
