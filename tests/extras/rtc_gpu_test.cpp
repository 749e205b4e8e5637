// rtc on a GPU: NVRTC kernels as kernel nodes of a spec, run on real data.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
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

namespace {
void launch_1d(const void* function, void** args, int n, cudaStream_t s) {
  CUDAG_CUDA(cudaLaunchKernel(function, dim3((n + 127) / 128), dim3(128), args, 0, s));
}
}  // namespace

TEST(RtcGpu, CurrentArchitectureIsTheDevicesComputeCapability) {
  CUDAG_REQUIRE_GPU();
  int device = -1;
  CUDAG_EXPECT_CUDA(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUDAG_EXPECT_CUDA(cudaGetDeviceProperties(&properties, device));
  const std::string expected =
      "sm_" + std::to_string(properties.major) + std::to_string(properties.minor);
  EXPECT_EQ(rtc::current_architecture(), expected);
  // compile() without an architecture targets this device.
  rtc::options opts;
  opts.defines.push_back("CUDAG_CURRENT_ARCH_TEST=1");  // a key no other test uses
  EXPECT_EQ(rtc::compile(extras_test::kernels_source, {"axpy"}, opts)->architecture, expected);
}

TEST(RtcGpu, ModuleAndKernelAccessors) {
  CUDAG_REQUIRE_GPU();
  constexpr int count = 500;
  const auto program = rtc::compile(extras_test::kernels_source, {"scale<float>", "axpy"});
  const auto loaded = rtc::module::load(program);
  ASSERT_NE(loaded->native(), nullptr);
  EXPECT_EQ(&loaded->program(), program.get());
  EXPECT_EQ(rtc::module::load(program).get(), loaded.get())
      << "a program in use was loaded a second time";
  EXPECT_THROW((void)loaded->kernel("scale<double>"), cudag::error);  // not a name expression

  const cudaKernel_t scale_native = loaded->kernel("scale<float>");
  const cudaKernel_t axpy_native = loaded->kernel("axpy");
  ASSERT_NE(scale_native, nullptr);
  ASSERT_NE(axpy_native, nullptr);
  EXPECT_NE(scale_native, axpy_native);

  // The typed handle over the same module.
  const rtc::kernel<void(float*, float, int)> scale(loaded, "scale<float>");
  EXPECT_EQ(scale.loaded_module().get(), loaded.get());
  EXPECT_EQ(scale.keep_alive.get(), static_cast<const void*>(loaded.get()));
  const cudag::kernel_ref<void(float*, float, int)>& ref = scale.ref();
  EXPECT_EQ(&ref, static_cast<const cudag::kernel_ref<void(float*, float, int)>*>(&scale));
  EXPECT_EQ(ref.name, "scale<float>");
  EXPECT_EQ(ref.function, static_cast<const void*>(scale.native()));
  ASSERT_NE(scale.native(), nullptr);

  // Each handle runs its own kernel: scale multiplies, axpy accumulates.
  std::vector<float> hx(count), hy(count);
  for (int i = 0; i < count; ++i) {
    hx[i] = 1.0f + float(i % 9);
    hy[i] = 10.0f - float(i % 4);
  }
  cudag::device_buffer<float> dx(count), dy(count);
  CUDAG_EXPECT_CUDA(cudaMemcpy(dx.data(), hx.data(), dx.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaMemcpy(dy.data(), hy.data(), dy.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
  auto stream = cudag::make_stream();
  {
    float* x = dx.data();
    float a = 2.5f;
    int n = count;
    void* args[] = {&x, &a, &n};
    launch_1d(scale.native(), args, count, stream.get());  // x = 2.5 x0 through the typed handle
    CUDAG_EXPECT_CUDA(cudaGetLastError());
  }
  {
    const float* x = dx.data();
    float* y = dy.data();
    float a = -2.0f;
    int n = count;
    void* args[] = {&x, &y, &a, &n};
    launch_1d(axpy_native, args, count, stream.get());  // y = y0 - 2 (2.5 x0)
    CUDAG_EXPECT_CUDA(cudaGetLastError());
  }
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(stream.get()));
  std::vector<float> rx(count, -1.0f), ry(count, -1.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(rx.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
  CUDAG_EXPECT_CUDA(cudaMemcpy(ry.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(rx[i], 2.5f * hx[i]) << i;
    ASSERT_EQ(ry[i], hy[i] - 5.0f * hx[i]) << i;
  }
}

// The marker reads an NVRTC kernel's PTX: one without griddepcontrol.wait is
// refused, naming it; one with it runs a programmatic chain that computes
// what the host computes.
TEST(RtcGpu, TheGridDependencyMarkerIsCheckedAgainstThePtx) {
  CUDAG_REQUIRE_GPU();
  int major = 0;
  CUDAG_EXPECT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) GTEST_SKIP() << "programmatic dependent launch needs compute capability 9.0 or newer";
  const rtc::source chained{"chained.cu", R"(
    extern "C" __global__ void step(float* x, int n) {
      asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
      asm volatile("griddepcontrol.wait;" ::: "memory");
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = x[i] * 0.5f + 1.0f;
    }
    extern "C" __global__ void unsynchronized(float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = x[i] * 0.5f + 1.0f;
    })"};
  const auto loaded = rtc::module::load(rtc::compile(chained, {"step", "unsynchronized"}));
  const rtc::kernel<void(float*, int)> step(loaded, "step");
  const rtc::kernel<void(float*, int)> unsynchronized(loaded, "unsynchronized");
  try {
    (void)cudag::synchronizes_grid_dependencies(unsynchronized);
    FAIL() << "a kernel without griddepcontrol.wait was marked";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("rtc kernel 'unsynchronized' of program 'chained.cu' is marked"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.node(), "unsynchronized");
  }

  constexpr int count = 512, steps = 16;
  cudag::builder b("chain");
  auto x = b.param<float*>("x");
  const auto marked = cudag::synchronizes_grid_dependencies(step);
  std::optional<cudag::node_ref> previous;
  for (int s = 0; s < steps; ++s) {
    auto k = b.kernel("step" + std::to_string(s), marked, cudag::launch(4, 128), x, count);
    if (previous) b.edge(*previous, k, cudag::edge_kind::programmatic);
    previous = k;
  }
  std::vector<float> host(count);
  for (int i = 0; i < count; ++i) host[i] = float(i);
  cudag::device_buffer<float> dx(count);
  CUDAG_EXPECT_CUDA(cudaMemcpy(dx.data(), host.data(), dx.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());
  auto stream = cudag::make_stream();
  const std::vector<cudag::binding> bindings{cudag::bind("x", dx.data())};
  auto exec = cudag::instantiate(b.build(), bindings);
  exec.launch(stream.get());
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  std::vector<float> got(count, -1.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(got.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) {
    float want = float(i);
    for (int s = 0; s < steps; ++s) want = want * 0.5f + 1.0f;
    ASSERT_EQ(got[i], want) << "x[" << i << "]";
  }
}
