// rtc on a GPU: NVRTC kernels as kernel nodes of a spec, run on real data.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/rtc.hpp"
#include "gpu_support.hpp"
#include "test_kernels.hpp"

namespace rtc = cudag::rtc;

TEST(RtcGpu, KernelNodeComputesKnownResult) {
  CUDAG_REQUIRE_GPU();
  constexpr int count = 1000;
  const auto scale = extras_test::scale_kernel();
  const auto axpy = extras_test::axpy_kernel();
  EXPECT_EQ(scale.name, "scale<float>");
  EXPECT_NE(scale.native(), nullptr);

  cudag::builder b("rtc");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto scaled = b.kernel("scale", scale, cudag::launch_over(n, 128), x, 3.0f, n);
  auto added = b.kernel("axpy", axpy, cudag::launch_over(n, 128), x, y, 0.5f, n);
  b.edge(scaled, added);
  const cudag::graph_spec spec = b.build();

  std::vector<float> hx(count), hy(count);
  for (int i = 0; i < count; ++i) {
    hx[i] = 1.0f + 0.25f * float(i % 17);
    hy[i] = -2.0f + float(i % 5);
  }
  cudag::device_buffer<float> dx(count), dy(count);
  CUDAG_EXPECT_CUDA(cudaMemcpy(dx.data(), hx.data(), dx.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaMemcpy(dy.data(), hy.data(), dy.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking

  auto stream = cudag::make_stream();
  const std::vector<cudag::binding> bindings{cudag::bind("x", dx.data()), cudag::bind("y", dy.data()),
                                             cudag::bind("n", count)};
  auto exec = cudag::instantiate(spec, bindings);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());

  std::vector<float> rx(count, -1.0f), ry(count, -1.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(rx.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
  CUDAG_EXPECT_CUDA(cudaMemcpy(ry.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(rx[i], hx[i] * 3.0f) << "x[" << i << "]";
    ASSERT_EQ(ry[i], hy[i] + 0.5f * (hx[i] * 3.0f)) << "y[" << i << "]";
  }
}

TEST(RtcGpu, ModuleOutlivesTheHandle) {
  CUDAG_REQUIRE_GPU();
  constexpr int count = 64;
  cudag::graph_spec spec;
  {
    const auto scale = extras_test::scale_kernel();
    cudag::builder b("outlives");
    auto x = b.param<float*>("x");
    b.kernel("scale", scale, cudag::launch(dim3(1), dim3(count)), x, -1.5f, count);
    spec = b.build();
  }  // the handle is gone; the spec's keep_alive holds the module
  std::vector<float> hx(count, 2.0f);
  cudag::device_buffer<float> dx(count);
  CUDAG_EXPECT_CUDA(cudaMemcpy(dx.data(), hx.data(), dx.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
  auto stream = cudag::make_stream();
  const std::vector<cudag::binding> bindings{cudag::bind("x", dx.data())};
  auto exec = cudag::instantiate(spec, bindings);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  std::vector<float> rx(count, 0.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(rx.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) ASSERT_EQ(rx[i], -3.0f) << i;
}

TEST(RtcGpu, WrongDeclaredSignatureIsRefused) {
  CUDAG_REQUIRE_GPU();
  try {
    (void)rtc::compile_kernel<void(float*, double, int)>(extras_test::kernels_source, "scale<float>");
    FAIL() << "a kernel was accepted with a wrong signature";
  } catch (const cudag::error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("compiled: void scale<float>(float*, float, int)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("declared: void scale<float>(float*, double, int)"), std::string::npos)
        << message;
  }
  // The same through an explicitly loaded module.
  const auto program = rtc::compile(extras_test::kernels_source, {"axpy"});
  const auto loaded = rtc::module::load(program);
  EXPECT_THROW((rtc::kernel<void(float*, float*, float, int)>(loaded, "axpy")), cudag::error);
  EXPECT_NO_THROW((rtc::kernel<void(const float*, float*, float, int)>(loaded, "axpy")));
}

TEST(RtcGpu, SyntaxErrorShowsTheLog) {
  CUDAG_REQUIRE_GPU();
  const rtc::source broken{"broken_gpu.cu", "__global__ void oops(float* x) { x[0] = ; }"};
  try {
    (void)rtc::compile_kernel<void(float*)>(broken, "oops");
    FAIL() << "a source with a syntax error compiled";
  } catch (const rtc::compile_error& e) {
    EXPECT_NE(std::string(e.what()).find("oops"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("broken_gpu.cu(1)"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
