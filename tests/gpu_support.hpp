#pragma once
// Shared by the gpu suite: skip (saying why) where no CUDA device is usable,
// and check every CUDA call in tests.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace cudag::testing {

/// "" when a device is usable, else the reason (no driver, no device, ...).
inline std::string why_no_gpu() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no usable CUDA device: cudaGetDeviceCount returned ") +
           cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")";
  }
  if (count == 0) return "no CUDA device present";
  return {};
}

}  // namespace cudag::testing

/// First statement of every gpu test.
#define CUDAG_REQUIRE_GPU()                                             \
  do {                                                                  \
    if (const std::string why = ::cudag::testing::why_no_gpu(); !why.empty()) \
      GTEST_SKIP() << why;                                              \
  } while (0)

/// Checks a CUDA call inside a test and reports the call and error name.
#define CUDAG_EXPECT_CUDA(call_expression)                                       \
  do {                                                                           \
    const cudaError_t cudag_test_code = (call_expression);                       \
    ASSERT_EQ(cudag_test_code, cudaSuccess)                                      \
        << #call_expression << ": " << cudaGetErrorName(cudag_test_code);        \
  } while (0)
