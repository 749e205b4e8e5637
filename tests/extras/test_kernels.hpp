#pragma once
// Kernels of the extras gpu tests, compiled at run time with NVRTC.
#include "cudag/rtc.hpp"

namespace extras_test {

inline const cudag::rtc::source kernels_source{"extras_test_kernels.cu", R"(
  template <class T>
  __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
  }
  __global__ void axpy(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
  }
)"};

inline cudag::rtc::kernel<void(float*, float, int)> scale_kernel() {
  return cudag::rtc::compile_kernel<void(float*, float, int)>(kernels_source, "scale<float>");
}
inline cudag::rtc::kernel<void(const float*, float*, float, int)> axpy_kernel() {
  return cudag::rtc::compile_kernel<void(const float*, float*, float, int)>(kernels_source, "axpy");
}

}  // namespace extras_test
