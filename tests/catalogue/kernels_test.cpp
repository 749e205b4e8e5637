// Bad-input catalogue, kernels and NVRTC. NVRTC runs on the CPU; with an
// explicit architecture no GPU is needed, and a wrong declaration is refused
// before anything is loaded.
#include <string>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/rtc.hpp"

namespace {

using catalogue::refusal;
using catalogue::scale;
using catalogue::strings;
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

}  // namespace
