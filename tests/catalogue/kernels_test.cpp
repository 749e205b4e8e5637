// Bad-input catalogue, kernels and NVRTC. NVRTC runs on the CPU; with an
// explicit architecture no GPU is needed, and a wrong declaration is refused
// before anything is loaded.
#include <string>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "cudag/rtc.hpp"

namespace {

using catalogue::refusal;
using catalogue::scale;
using catalogue::strings;
using catalogue::dev_x;
namespace rtc = cudag::rtc;

rtc::options sm90() {
  rtc::options o;
  o.architecture = "sm_90";
  o.use_cache = false;
  return o;
}

const rtc::source scale_source{"catalogue_scale.cu", R"(
  template <class T>
  __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
  })"};

TEST(Catalogue, NvrtcSyntaxErrorCarriesTheLog) {
  const rtc::source broken{"broken.cu", R"(
    __global__ void broken_kernel(float* x) {
      x[0] = 1.0f +;
    })"};
  auto e = refusal<rtc::compile_error>([&] { (void)rtc::compile(broken, {"broken_kernel"}, sm90()); });
  ASSERT_TRUE(e);
  // The log is NVRTC's own text; its first line is pinned, the rest is the log.
  const std::string first_line = e->log().substr(0, e->log().find('\n'));
  EXPECT_EQ(first_line, "broken.cu(3): error: expected an expression");
  EXPECT_EQ(std::string(e->what()),
            "rtc: compiling program 'broken.cu' (kernels: broken_kernel) for sm_90 failed: "
            "NVRTC_ERROR_COMPILATION\n" + e->log());
  EXPECT_EQ(e->node(), "broken_kernel");
  EXPECT_EQ(e->call(), "nvrtcCompileProgram");
}

TEST(Catalogue, WrongKernelSignatureShowsBoth) {
  auto e = refusal<cudag::error>([&] {
    (void)rtc::compile_kernel<void(float*, double, int)>(scale_source, "scale<float>", sm90());
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "rtc: kernel 'scale<float>' does not match its declared signature: parameter 1 is "
            "'float' in the kernel, 'double' in the declaration\n"
            "  compiled: void scale<float>(float*, float, int)\n"
            "  declared: void scale<float>(float*, double, int)\n"
            "  (lowered name _Z5scaleIfEvPT_S0_i)");
  EXPECT_EQ(e->node(), "scale<float>");
}

TEST(Catalogue, WrongKernelParameterCountShowsBoth) {
  auto e = refusal<cudag::error>([&] {
    (void)rtc::compile_kernel<void(float*, float)>(scale_source, "scale<float>", sm90());
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "rtc: kernel 'scale<float>' does not match its declared signature: the kernel takes 3 "
            "parameters, the declaration 2\n"
            "  compiled: void scale<float>(float*, float, int)\n"
            "  declared: void scale<float>(float*, float)\n"
            "  (lowered name _Z5scaleIfEvPT_S0_i)");
  EXPECT_EQ(e->node(), "scale<float>");
}

TEST(Catalogue, MissingKernelSourceFileIsNamed) {
  auto e = refusal<cudag::error>([] { (void)rtc::source::from_file("no_such_kernel.cu"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "rtc: cannot read kernel source file 'no_such_kernel.cu'");
}

TEST(Catalogue, NullKernelFunctionIsNamed) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, n);
  cudag::graph_spec spec = b.build();
  std::get<cudag::kernel_node>(spec.nodes[0].params).function = nullptr;  // e.g. a failed lookup
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "kernel node 'scale' has no function (null function pointer for 'scale')");
  EXPECT_EQ(c->nodes(), (strings{"scale"}));
}

/// check()'s refusal of one kernel launched over `config`.
std::optional<cudag::check_error> attribute_refusal(const cudag::launch_config& config) {
  cudag::builder b("g");
  b.kernel("pairs", CUDAG_KERNEL(scale), config, b.param<float*>("x"), 2.0f, b.param<int>("n"));
  const cudag::graph_spec spec = b.build();
  return refusal<cudag::check_error>([&] { cudag::check(spec); });
}

TEST(Catalogue, AClusterThatDoesNotDivideTheGrid) {
  auto c = attribute_refusal(cudag::launch(6, 32).cluster(4));
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "kernel node 'pairs' has a cluster of 4x1x1 blocks, which does not divide its grid of 6x1x1 blocks");
  EXPECT_EQ(c->nodes(), (strings{"pairs"}));
}

TEST(Catalogue, ASharedCarveoutOverAHundredPercent) {
  auto c = attribute_refusal(cudag::launch(6, 32).shared_carveout(120));
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "kernel node 'pairs' prefers a shared-memory carveout of 120%; a carveout is 0 to 100 percent");
}

TEST(Catalogue, AnAccessPolicyWindowWithoutAnAddress) {
  auto c = attribute_refusal(cudag::launch(6, 32).access_policy(nullptr, 1 << 20, 0.5f));
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "kernel node 'pairs' has an access-policy window of 1048576 bytes at a null address");
}

TEST(Catalogue, ACooperativeGridLargerThanTheDeviceHolds) {
  cudag::native::recorder rec;
  rec.set_occupancy(2, 132);  // what the device answers (an H200, 256 threads)
  {
    cudag::builder b("g");
    b.kernel("ring", CUDAG_KERNEL(scale), cudag::launch(300, 256).cooperative(), b.param<float*>("x"), 2.0f,
             b.param<int>("n"));
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 64)};
    auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(b.build(), binds); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "kernel node 'ring' is a cooperative launch of 300 blocks, but at most 264 can be resident at "
              "once on device 0 (2 a multiprocessor x 132 multiprocessors, at 256 threads and 0 shared bytes "
              "a block)");
    EXPECT_EQ(e->node(), "ring");
    EXPECT_EQ(e->code(), cudaErrorCooperativeLaunchTooLarge);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ANodeCudaRefusesInADeviceLaunchableGraph) {
  cudag::native::recorder rec;
  {
    cudag::builder b("g");
    auto x = b.param<float*>("x");
    auto k = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, 64);
    b.edge(k, b.host("report", [] {}));
    cudag::instantiate_options o;
    o.device_launch = true;
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    auto c = refusal<cudag::check_error>([&] { (void)cudag::instantiate(b.build(), binds, o); });
    ASSERT_TRUE(c);
    EXPECT_EQ(std::string(c->what()),
              "graph 'g' is instantiated for device launch, and node 'report' is a host node; a "
              "device-launchable graph holds only kernel, memcpy, memset and child-graph nodes (CUDA refuses "
              "the others)");
    EXPECT_EQ(c->nodes(), (strings{"report"}));
  }
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
}

TEST(Catalogue, ADeviceHandleOfAnExecNotForDeviceLaunch) {
  cudag::native::recorder rec;
  {
    cudag::builder b("g");
    b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), b.param<float*>("x"), 2.0f, 64);
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    auto ex = cudag::instantiate(b.build(), binds);
    auto e = refusal<cudag::error>([&] { (void)ex.device_handle(); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "graph 'g' was not instantiated for device launch (instantiate_options::device_launch): device "
              "code cannot launch it");
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DeviceLaunchWithAutoFreeOnLaunch) {
  cudag::native::recorder rec;
  {
    cudag::builder b("g");
    b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), b.param<float*>("x"), 2.0f, 64);
    cudag::instantiate_options o;
    o.device_launch = true;
    o.auto_free_on_launch = true;
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(b.build(), binds, o); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "instantiate options ask for device launch and auto-free on launch together, which CUDA "
              "refuses");
  }
  catalogue::expect_no_leak(rec);
}

}  // namespace
