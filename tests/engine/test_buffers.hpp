#pragma once
// Host <-> device helpers of the engine's gpu tests.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/handles.hpp"

namespace engine_test {

template <class T>
std::vector<T> read_back(const cudag::device_buffer<T>& d) {
  std::vector<T> h(d.size());
  EXPECT_EQ(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

template <class T>
void upload(const cudag::device_buffer<T>& d, const std::vector<T>& h) {
  ASSERT_EQ(cudaMemcpy(d.data(), h.data(), d.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  // Launch streams are non-blocking: finish this legacy-stream work first.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

/// Every element set to `v` (a poison value, or a known non-zero input).
template <class T>
void fill(const cudag::device_buffer<T>& d, T v) {
  upload(d, std::vector<T>(d.size(), v));
}

}  // namespace engine_test
