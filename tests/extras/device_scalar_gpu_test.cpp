// device_scalar on a GPU: set() and read() are ordered with the rest of the
// stream's work. Kernels are compiled at run time with NVRTC.
//
// Each ordering test puts a kernel that waits on the GPU clock before it
// reads the scalar (tens of milliseconds) on the stream first. A set() that
// did not wait for earlier work on the stream (a copy on another stream or
// on the legacy default stream, which a non-blocking stream does not wait
// for) lands while that kernel waits, so the kernel reads the new value.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/device_scalar.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/rtc.hpp"
#include "gpu_support.hpp"

namespace {

const cudag::rtc::source scalar_kernels{"device_scalar_test_kernels.cu", R"(
  __device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
    return t;
  }
  // Waits `wait_ns` on the GPU clock, then copies *scalar to *out.
  __global__ void wait_then_copy(const float* scalar, float* out, unsigned long long wait_ns) {
    const unsigned long long start = now_ns();
    while (now_ns() - start < wait_ns) {
    }
    *out = *static_cast<const volatile float*>(scalar);
  }
)"};

using wait_kernel_t = cudag::rtc::kernel<void(const float*, float*, unsigned long long)>;

wait_kernel_t wait_kernel() {
  return cudag::rtc::compile_kernel<void(const float*, float*, unsigned long long)>(scalar_kernels,
                                                                                   "wait_then_copy");
}

constexpr unsigned long long wait_ns = 100'000'000;  // 100 ms

/// One node: wait, then copy the scalar to `out`.
cudag::graph_spec reader_graph(const wait_kernel_t& k) {
  cudag::builder b("read_scalar");
  auto scalar = b.param<const float*>("scalar");
  auto out = b.param<float*>("out");
  b.kernel("wait_then_copy", k, cudag::launch(1, 1), scalar, out, wait_ns);
  return b.build();
}

float read_float(const float* device) {
  float value = 0.0f;
  EXPECT_EQ(cudaMemcpy(&value, device, sizeof value, cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

void poison(float* device) {
  ASSERT_EQ(cudaMemset(device, 0xFF, sizeof(float)), cudaSuccess);  // NaN
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // before work on the non-blocking stream
}

}  // namespace

TEST(DeviceScalarGpu, LaunchesBeforeSetSeeTheOldValueLaunchesAfterItTheNew) {
  CUDAG_REQUIRE_GPU();
  const auto k = wait_kernel();
  auto stream = cudag::make_stream();
  cudag::device_scalar<float> factor(3.0f);
  float* const address = factor.get();
  ASSERT_NE(address, nullptr);
  EXPECT_EQ(factor.read(stream.get()), 3.0f);  // the initial value

  cudag::device_buffer<float> before_out(1), after_out(1);
  poison(before_out.data());
  poison(after_out.data());
  const cudag::graph_spec spec = reader_graph(k);
  const std::vector<cudag::binding> before_binds{
      cudag::bind("scalar", static_cast<const float*>(factor.get())),
      cudag::bind("out", before_out.data())};
  const std::vector<cudag::binding> after_binds{
      cudag::bind("scalar", static_cast<const float*>(factor.get())),
      cudag::bind("out", after_out.data())};
  auto before = cudag::instantiate(spec, before_binds);
  auto after = cudag::instantiate(spec, after_binds);

  const auto start = std::chrono::steady_clock::now();
  before.launch(stream.get());  // reads the scalar after waiting 100 ms
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  {
    // The value may die as soon as set() returns: overwrite it at once.
    auto value = std::make_unique<float>(7.0f);
    factor.set(*value, stream.get());
    *static_cast<volatile float*>(value.get()) = -100.0f;
  }
  after.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  after.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The test's premise: both kernels waited (the first was still waiting
  // when set() was enqueued).
  ASSERT_GE(elapsed, 2 * wait_ns * 1e-9 * 0.9) << "the waiting kernel did not wait";
  EXPECT_EQ(factor.get(), address) << "set() moved the value: graphs keep the old address";
  EXPECT_EQ(read_float(before_out.data()), 3.0f)
      << "a launch enqueued before set() saw the new value: set() is not ordered on the stream";
  EXPECT_EQ(read_float(after_out.data()), 7.0f)
      << "a launch enqueued after set() did not see the value set (or saw the caller's variable "
         "after it changed)";
  EXPECT_EQ(factor.read(stream.get()), 7.0f);
}

TEST(DeviceScalarGpu, ReadWaitsForTheStream) {
  CUDAG_REQUIRE_GPU();
  const auto k = wait_kernel();
  auto stream = cudag::make_stream();
  cudag::device_scalar<float> factor(1.0f);
  cudag::device_buffer<float> out(1);
  poison(out.data());
  const std::vector<cudag::binding> binds{
      cudag::bind("scalar", static_cast<const float*>(factor.get())), cudag::bind("out", out.data())};
  auto exec = cudag::instantiate(reader_graph(k), binds);

  exec.launch(stream.get());  // waits 100 ms, then reads 1
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  factor.set(11.0f, stream.get());  // behind the waiting kernel
  // read() must wait for the stream, so it sees the set, not the value the
  // device held while the kernel waited.
  EXPECT_EQ(factor.read(stream.get()), 11.0f);
  EXPECT_EQ(read_float(out.data()), 1.0f) << "the kernel saw a value set after it was launched";
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(stream.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
}

namespace {
struct quad {
  int a, b, c, d;
};
}  // namespace

TEST(DeviceScalarGpu, CopiesTheWholeValue) {
  CUDAG_REQUIRE_GPU();
  auto stream = cudag::make_stream();
  cudag::device_scalar<quad> value(quad{1, -2, 3, -4});
  quad got = value.read(stream.get());
  EXPECT_EQ((std::vector<int>{got.a, got.b, got.c, got.d}), (std::vector<int>{1, -2, 3, -4}));
  value.set(quad{50, 60, -70, 80}, stream.get());
  got = value.read(stream.get());
  EXPECT_EQ((std::vector<int>{got.a, got.b, got.c, got.d}), (std::vector<int>{50, 60, -70, 80}));
  // Independent of read(): the bytes at get().
  quad raw{};
  CUDAG_EXPECT_CUDA(cudaMemcpy(&raw, value.get(), sizeof raw, cudaMemcpyDeviceToHost));
  EXPECT_EQ((std::vector<int>{raw.a, raw.b, raw.c, raw.d}), (std::vector<int>{50, 60, -70, 80}));
  // A default-constructed scalar holds T{}.
  cudag::device_scalar<int> zero;
  EXPECT_EQ(zero.read(stream.get()), 0);
  zero.set(-9, stream.get());
  EXPECT_EQ(zero.read(stream.get()), -9);
}
