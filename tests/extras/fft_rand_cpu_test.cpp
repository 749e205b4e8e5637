// cuFFT and cuRAND ops: what can be checked without a GPU (descriptors,
// refusals and their messages, the nodes a builder gets). Their effect is
// checked on a GPU by fft_gpu_test.cpp and rand_gpu_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <variant>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/fft.hpp"
#include "cudag/op.hpp"
#include "cudag/rand.hpp"
#include "gpu_support.hpp"

namespace fft = cudag::fft;
namespace rnd = cudag::rand;

namespace {
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const cudag::error& e) {
    return e.what();
  }
  return "(no error)";
}
template <class F>
std::string node_of(F&& f) {
  try {
    f();
  } catch (const cudag::error& e) {
    return e.node();
  }
  return "(no error)";
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
std::string param_name(const cudag::value& v) {
  const auto* p = std::get_if<cudag::param_ref>(&v.source);
  return p ? p->name : "(not a parameter)";
}
}  // namespace

static_assert(cudag::user_op<fft::transform, cudag::param_handle<const float*>,
                             cudag::param_handle<cufftComplex*>>);
static_assert(cudag::user_op<fft::transform, const float*, cufftComplex*, cudag::param_handle<int>>);
static_assert(cudag::user_op<rnd::fill, cudag::param_handle<float*>, int>);
static_assert(cudag::user_op<rnd::fill, double*, cudag::param_handle<long long>>);

// --------------------------------------------------------------------- fft --
TEST(FftDesc, GeometryOfOneTwoAndThreeDimensions) {
  const fft::plan_geometry one = fft::geometry({.shape = {1024}}, "f");
  EXPECT_EQ(one.rank, 1);
  EXPECT_EQ(one.real_elements, 1024);
  EXPECT_EQ(one.complex_elements, 513);
  EXPECT_EQ(one.type, CUFFT_R2C);

  const fft::plan_geometry two =
      fft::geometry({.shape = {64, 127}, .dir = fft::direction::complex_to_real}, "f");
  EXPECT_EQ(two.rank, 2);
  EXPECT_EQ(two.real_elements, 64 * 127);
  EXPECT_EQ(two.complex_elements, 64 * 64);  // the last dimension halves: 127 / 2 + 1
  EXPECT_EQ(two.type, CUFFT_C2R);

  const fft::plan_geometry three =
      fft::geometry({.shape = {4, 6, 10}, .prec = fft::precision::f64}, "f");
  EXPECT_EQ(three.rank, 3);
  EXPECT_EQ(three.real_elements, 240);
  EXPECT_EQ(three.complex_elements, 4 * 6 * 6);
  EXPECT_EQ(three.type, CUFFT_D2Z);
  EXPECT_EQ(fft::geometry({.shape = {8}, .dir = fft::direction::complex_to_real,
                           .prec = fft::precision::f64},
                          "f")
                .type,
            CUFFT_Z2D);
}

TEST(FftDesc, Describe) {
  EXPECT_EQ(fft::describe({.shape = {64, 128}, .batch = 8}), "fft r2c f32 64x128 batch 8");
  EXPECT_EQ(fft::describe({.shape = {256}, .dir = fft::direction::complex_to_real,
                           .prec = fft::precision::f64}),
            "fft z2d f64 256");
}

TEST(FftDesc, BadDescriptorsAreRefusedNamingTheNodeAndTheField) {
  auto refused = [](const fft::transform_desc& d) {
    return message_of([&] { (void)fft::geometry(d, "spectrum"); });
  };
  std::string m = refused({});
  EXPECT_TRUE(contains(m, "fft node 'spectrum'")) << m;
  EXPECT_TRUE(contains(m, "shape is empty")) << m;
  m = refused({.shape = {16, -4}});
  EXPECT_TRUE(contains(m, "shape[1] = -4 is negative")) << m;
  m = refused({.shape = {16, 0, 4}});
  EXPECT_TRUE(contains(m, "shape[1] is 0 but shape[2] is not")) << m;
  m = refused({.shape = {16}, .batch = 0});
  EXPECT_TRUE(contains(m, "batch = 0 is less than 1")) << m;
  EXPECT_EQ(node_of([] { (void)fft::geometry({.shape = {-1}}, "spectrum"); }), "spectrum");
}

TEST(FftOp, AddsOneCapturedNodeReadingItsArguments) {
  cudag::builder b("fft");
  auto signal = b.param<const float*>("signal");
  auto spectrum = b.param<cufftComplex*>("spectrum");
  auto batch = b.param<int>("batch");
  cudag::add_op(b, "forward", fft::transform{{.shape = {1024}, .batch = 8}}, signal, spectrum, batch);
  auto back = b.param<float*>("back");
  cudag::add_op(b, "inverse",
                fft::transform{{.shape = {1024}, .dir = fft::direction::complex_to_real, .batch = 8}},
                spectrum, back);
  b.edge("forward", "inverse");
  const cudag::graph_spec spec = b.build();
  EXPECT_NO_THROW(cudag::check(spec));

  const auto& forward = std::get<cudag::captured_node>(spec.find("forward")->params);
  EXPECT_EQ(forward.what, "fft r2c f32 1024 batch 8");
  ASSERT_EQ(forward.args.size(), 3u);
  EXPECT_EQ(param_name(forward.args[0]), "signal");
  EXPECT_EQ(param_name(forward.args[1]), "spectrum");
  EXPECT_EQ(param_name(forward.args[2]), "batch");

  const auto& inverse = std::get<cudag::captured_node>(spec.find("inverse")->params);
  EXPECT_EQ(inverse.what, "fft c2r f32 1024 batch 8");
  ASSERT_EQ(inverse.args.size(), 3u);  // the descriptor's batch, as a literal
  const auto& batch_literal = std::get<cudag::literal>(inverse.args[2].source);
  int value = 0;
  ASSERT_EQ(batch_literal.bytes.size(), sizeof value);
  std::memcpy(&value, batch_literal.bytes.data(), sizeof value);
  EXPECT_EQ(value, 8);
}

TEST(FftOp, ReadsItsInputUnlessComplexToRealOverwritesIt) {
  // Two forward transforms of one signal may run at once: each only reads it.
  cudag::builder b("fft");
  auto signal = b.param<const float*>("signal");
  auto a = b.param<cufftComplex*>("a");
  auto c = b.param<cufftComplex*>("c");
  cudag::add_op(b, "forward1", fft::transform{{.shape = {64}}}, signal, a);
  cudag::add_op(b, "forward2", fft::transform{{.shape = {64}}}, signal, c);
  EXPECT_NO_THROW(cudag::check(b.spec()));
  EXPECT_EQ(std::get<cudag::captured_node>(b.spec().find("forward1")->params).accesses,
            (cudag::access_declarations{{0, cudag::access_mode::read}}));
  // Two inverse transforms of one spectrum race: cuFFT's c2r overwrites it.
  auto out1 = b.param<float*>("out1");
  auto out2 = b.param<float*>("out2");
  const fft::transform inverse{{.shape = {64}, .dir = fft::direction::complex_to_real}};
  cudag::add_op(b, "inverse1", inverse, a, out1).after(b.node("forward1"));
  cudag::add_op(b, "inverse2", inverse, a, out2).after(b.node("forward1"));
  const std::string m = message_of([&] { cudag::check(b.spec()); });
  EXPECT_TRUE(contains(m, "race: 'inverse1' writes 'a' while 'inverse2' writes it")) << m;
}

TEST(FftOp, WrongElementTypesAreRefusedWhereTheNodeIsDeclared) {
  cudag::builder b("fft");
  auto doubles = b.param<const double*>("doubles");
  auto spectrum = b.param<cufftComplex*>("spectrum");
  std::string m = message_of([&] {
    cudag::add_op(b, "forward", fft::transform{{.shape = {64}}}, doubles, spectrum);
  });
  EXPECT_TRUE(contains(m, "fft node 'forward'")) << m;
  EXPECT_TRUE(contains(m, "the input holds double but the descriptor says float")) << m;

  auto reals = b.param<float*>("reals");
  m = message_of([&] {
    cudag::add_op(b, "wrong_way", fft::transform{{.shape = {64}}}, reals, reals);
  });
  EXPECT_TRUE(contains(m, "the output holds float but the descriptor says cufftComplex")) << m;

  // cuFFT's complex-to-real transform overwrites its input.
  auto frozen = b.param<const cufftComplex*>("frozen");
  m = message_of([&] {
    cudag::add_op(b, "inverse",
                  fft::transform{{.shape = {64}, .dir = fft::direction::complex_to_real}}, frozen,
                  reals);
  });
  EXPECT_TRUE(contains(m, "fft node 'inverse'")) << m;
  EXPECT_TRUE(contains(m, "overwrites its input")) << m;

  m = message_of([&] { cudag::add_op(b, "empty", fft::transform{}, reals, spectrum); });
  EXPECT_TRUE(contains(m, "fft node 'empty'")) << m;
  EXPECT_TRUE(b.build().nodes.empty());  // nothing was added by the refused calls
}

TEST(FftOp, ABatchBelowOneIsRefusedNamingTheNodeBeforeAnyCudaCall) {
  const fft::transform_call call({.shape = {32}}, "spectrum");
  const std::string m = message_of([&] { call(nullptr, nullptr, nullptr, 0); });
  EXPECT_TRUE(contains(m, "fft node 'spectrum'")) << m;
  EXPECT_TRUE(contains(m, "batch = 0 is less than 1")) << m;
  EXPECT_EQ(node_of([&] { call(nullptr, nullptr, nullptr, -3); }), "spectrum");
  EXPECT_EQ(call.plans(), 0u);
}

TEST(FftErrors, ResultNames) {
  EXPECT_STREQ(fft::result_name(CUFFT_INVALID_PLAN), "CUFFT_INVALID_PLAN");
  EXPECT_STREQ(fft::result_name(CUFFT_INVALID_SIZE), "CUFFT_INVALID_SIZE");
  const std::string m =
      message_of([] { fft::cufft_check(CUFFT_INVALID_SIZE, "cufftMakePlanMany64", "spectrum"); });
  EXPECT_EQ(m, "cufftMakePlanMany64 failed for node 'spectrum': CUFFT_INVALID_SIZE");
  EXPECT_NO_THROW(fft::cufft_check(CUFFT_SUCCESS, "cufftExecR2C", "spectrum"));
}

// -------------------------------------------------------------------- rand --
TEST(RandDesc, Describe) {
  EXPECT_EQ(rnd::describe({}), "curand philox uniform f32 seed 0");
  EXPECT_EQ(rnd::describe({.dist = rnd::distribution::normal, .prec = rnd::precision::f64,
                           .gen = rnd::generator::xorwow, .mean = 1.5, .stddev = 0.25,
                           .seed = 42, .offset = 1024}),
            "curand xorwow normal(1.5, 0.25) f64 seed 42 offset 1024");
}

TEST(RandDesc, BadDescriptorsAndCountsAreRefusedNamingTheNode) {
  std::string m = message_of([] {
    rnd::validate({.dist = rnd::distribution::normal, .stddev = -1.0}, "noise");
  });
  EXPECT_TRUE(contains(m, "rand node 'noise'")) << m;
  EXPECT_TRUE(contains(m, "stddev = -1")) << m;
  m = message_of([] { rnd::validate_count({.dist = rnd::distribution::normal}, "noise", 1001); });
  EXPECT_TRUE(contains(m, "count = 1001 is odd")) << m;
  m = message_of([] { rnd::validate_count({}, "noise", -2); });
  EXPECT_TRUE(contains(m, "count = -2 is negative")) << m;
  EXPECT_NO_THROW(rnd::validate_count({}, "noise", 1001));  // uniform values need no pairs
  EXPECT_EQ(node_of([] { rnd::validate_count({}, "noise", -1); }), "noise");
}

TEST(RandOp, AddsOneCapturedNodeReadingItsArguments) {
  cudag::builder b("rand");
  auto out = b.param<float*>("out");
  auto count = b.param<long long>("count");
  cudag::add_op(b, "noise",
                rnd::fill{{.dist = rnd::distribution::normal, .stddev = 0.5, .seed = 42}}, out,
                count);
  cudag::add_op(b, "uniform", rnd::fill{}, out, 1000);
  b.edge("noise", "uniform");  // both fill out: in turn
  const cudag::graph_spec spec = b.build();
  EXPECT_NO_THROW(cudag::check(spec));
  const auto& noise = std::get<cudag::captured_node>(spec.find("noise")->params);
  EXPECT_EQ(noise.what, "curand philox normal(0, 0.5) f32 seed 42");
  ASSERT_EQ(noise.args.size(), 2u);
  EXPECT_EQ(param_name(noise.args[0]), "out");
  EXPECT_EQ(param_name(noise.args[1]), "count");
  const auto& uniform = std::get<cudag::captured_node>(spec.find("uniform")->params);
  ASSERT_EQ(uniform.args.size(), 2u);
  EXPECT_EQ(std::get<cudag::literal>(uniform.args[1].source).bytes.size(), sizeof(int));
}

TEST(RandOp, RefusalsWhereTheNodeIsDeclared) {
  cudag::builder b("rand");
  auto doubles = b.param<double*>("doubles");
  std::string m = message_of([&] { cudag::add_op(b, "noise", rnd::fill{}, doubles, 64); });
  EXPECT_TRUE(contains(m, "rand node 'noise'")) << m;
  EXPECT_TRUE(contains(m, "holds double but the descriptor says f32")) << m;
  auto floats = b.param<float*>("floats");
  m = message_of([&] {
    cudag::add_op(b, "normal", rnd::fill{{.dist = rnd::distribution::normal}}, floats, 63);
  });
  EXPECT_TRUE(contains(m, "rand node 'normal'")) << m;
  EXPECT_TRUE(contains(m, "count = 63 is odd")) << m;
  EXPECT_TRUE(b.build().nodes.empty());
}

TEST(RandOp, AnOddCountReboundIsRefusedNamingTheNodeBeforeAnyCudaCall) {
  const rnd::fill_call call({.dist = rnd::distribution::normal}, "noise");
  const std::string m = message_of([&] { call(nullptr, nullptr, 999); });
  EXPECT_TRUE(contains(m, "rand node 'noise'")) << m;
  EXPECT_TRUE(contains(m, "count = 999 is odd")) << m;
}

TEST(RandOp, WithoutADeviceAtDeclarationTheNodeRefusesToBeRecordedNamingItself) {
  if (cudag::testing::why_no_gpu().empty())
    GTEST_SKIP() << "a CUDA device is usable here: the generator is seeded at declaration "
                    "(rand_gpu_test.cpp)";
  const rnd::fill_call call({.seed = 3}, "noise");
  EXPECT_FALSE(call.seeded());
  try {
    call(nullptr, nullptr, 1000);
    ADD_FAILURE() << "recorded without a generator";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "noise") << e.what();
  }
  EXPECT_FALSE(call.seeded());
}

TEST(RandErrors, StatusNames) {
  EXPECT_STREQ(rnd::status_name(CURAND_STATUS_LENGTH_NOT_MULTIPLE), "CURAND_STATUS_LENGTH_NOT_MULTIPLE");
  const std::string m = message_of(
      [] { rnd::curand_check(CURAND_STATUS_LAUNCH_FAILURE, "curandGenerateUniform", "noise"); });
  EXPECT_EQ(m, "curandGenerateUniform failed for node 'noise': CURAND_STATUS_LAUNCH_FAILURE");
}
