// Near twins of the builder's compile-fail cases (this folder): the same
// calls with the fault corrected compile, and mean what they say.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <variant>

#include "cudag/blas.hpp"
#include "cudag/device_scalar.hpp"
#include "cudag/error.hpp"
#include "cudag/op.hpp"
#include "cudag/spec_writer.hpp"
#include "gpu_support.hpp"
#include "kernel_of.hpp"

namespace twins {

// add_op_without_overload: an op with its cudag_add_op beside it.
struct fft {
  int n;
};
cudag::node_ref cudag_add_op(cudag::builder& b, std::string name, const fft& op) {
  auto n = b.empty(std::move(name));
  (void)op;
  return n;
}

}  // namespace twins

namespace {

template <class T>
T literal_of(const cudag::value& v) {
  const auto& bytes = std::get<cudag::literal>(v.source).bytes;
  T out{};
  EXPECT_EQ(bytes.size(), sizeof(T));
  std::memcpy(&out, bytes.data(), sizeof(T));
  return out;
}

// narrowing / argument_count / pointer_type / parameter_type: a float
// literal, three arguments, a float*, a float parameter.
TEST(BuilderCompileFailTwins, KernelArgumentsOfTheParameterTypes) {
  cudag::builder b("twins");
  auto x = b.param<float*>("x");
  auto a = b.param<float>("a");
  b.kernel("scale_literal", &scale, cudag::launch(1, 32), x, 2.0f, 4);
  b.kernel("scale_param", &scale, cudag::launch(1, 32), x, a, 4);
  const cudag::graph_spec spec = b.build();
  const auto& literal = std::get<cudag::kernel_node>(spec.nodes[0].params);
  ASSERT_EQ(literal.args.size(), 3u);
  EXPECT_EQ(literal.args[0].type, cudag::type_of<float*>());
  EXPECT_EQ(literal_of<float>(literal.args[1]), 2.0f);
  EXPECT_EQ(literal_of<int>(literal.args[2]), 4);
  const auto& param = std::get<cudag::kernel_node>(spec.nodes[1].params);
  EXPECT_EQ(std::get<cudag::param_ref>(param.args[1].source).name, "a");
}

// memset_fill / host_callable / captured_callable / parameter_not_trivially_copyable.
TEST(BuilderCompileFailTwins, FillsCallablesAndParameters) {
  cudag::builder b("twins");
  auto x = b.param<float*>("x");
  auto label = b.param<const char*>("label");
  b.memset("clear", x, 0.0f, 1024);
  int seen = 0;
  b.host("report", [&seen](int v) { seen = v; }, 4);
  b.captured("record", "what", [](cudaStream_t s, float* p, int n) { (void)s, (void)p, (void)n; }, x,
             4);
  b.host("print", [](const char* text) { (void)text; }, label);
  const cudag::graph_spec spec = b.build();
  ASSERT_EQ(spec.nodes.size(), 4u);
  const auto& clear = std::get<cudag::memset_node>(spec.nodes[0].params);
  EXPECT_EQ(clear.element_size, 4u);
  EXPECT_EQ(clear.width, 1024u);
  const auto& report = std::get<cudag::host_node>(spec.nodes[1].params);
  const int four = 4;
  const void* values[] = {&four};
  (*report.function)(values);
  EXPECT_EQ(seen, 4);
  const auto& record = std::get<cudag::captured_node>(spec.nodes[2].params);
  EXPECT_EQ(record.what, "what");
  EXPECT_EQ(record.args.size(), 2u);
  ASSERT_NE(spec.find_param("label"), nullptr);
  EXPECT_EQ(spec.find_param("label")->type, cudag::type_of<const char*>());
}

// memcpy_operand / event_operand: a pointer source, an event. The kernel
// cases' CUDAG_KERNEL(scale) carries the kernel's name into the node.
TEST(BuilderCompileFailTwins, OperandsAndNamedKernel) {
  cudag::builder b("twins");
  auto x = b.param<float*>("x");
  auto copy = b.memcpy("stage", x, x, 64);
  cudaEvent_t event{};
  auto done = b.record("done", event);
  auto s = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, 4);
  s.after(copy).precede(done);
  const cudag::graph_spec spec = b.build();
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.nodes[0].kind(), cudag::node_kind::memcpy);
  EXPECT_EQ(spec.nodes[1].kind(), cudag::node_kind::event_record);
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[2].params).function_name, "scale");
  static_assert(std::is_same_v<decltype(CUDAG_KERNEL(scale)),
                               cudag::named_kernel<"scale", void(float*, float, int)>>);
}

// literal_too_large: 16 bytes are held inline.
TEST(BuilderCompileFailTwins, SixteenByteLiteralHeldInline) {
  const std::array<float, 4> v{1, 2, 3, 4};
  const cudag::value_view view = cudag::value_view::literal_copy(v);
  EXPECT_EQ(view.bytes, nullptr);
  EXPECT_EQ(view.type.size, 16u);
  EXPECT_EQ(std::memcmp(view.inline_bytes, v.data(), sizeof(v)), 0);
}

// add_op_without_overload.
TEST(BuilderCompileFailTwins, OpWithItsAddOp) {
  cudag::builder b("twins");
  const cudag::node_ref n = cudag::add_op(b, "transform", twins::fft{64});
  EXPECT_EQ(n.name(), "transform");
  EXPECT_EQ(b.build().nodes[0].kind(), cudag::node_kind::empty);
}

// gemm_operand_a / gemm_const_c / gemm_alpha / gemm_element /
// blas_element_of_pointer: float matrix pointers, C non-const, float alpha.
TEST(BuilderCompileFailTwins, GemmOperands) {
  namespace blas = cudag::blas;
  static_assert(blas::element_of<const float*>() == blas::element::f32);
  static_assert(!blas::element_of<void*>().has_value());
  cudag::builder b("twins");
  auto a = b.param<const float*>("a");
  auto c = b.param<float*>("c");
  (void)blas::gemm(b, "project", {.m = 4, .n = 4, .k = 4}, a, a, c, 0.5f);
  const cudag::graph_spec spec = b.build();
  const auto& gemm = std::get<cudag::captured_node>(spec.nodes[0].params);
  EXPECT_EQ(gemm.what, "gemm f32->f32 col-major 4x4x4 NN");
  ASSERT_EQ(gemm.args.size(), 5u);
  EXPECT_EQ(literal_of<float>(gemm.args[3]), 0.5f);
}

// device_scalar_type: a trivially copyable T.
TEST(BuilderCompileFailTwins, DeviceScalarOfFloat) {
  static_assert(std::is_constructible_v<cudag::device_scalar<float>, const float&>);
  if (!cudag::testing::why_no_gpu().empty()) {
    // No device here: the allocation reports it, as a cudag::error.
    EXPECT_THROW(cudag::device_scalar<float>(1.5f), cudag::error);
    return;
  }
  cudag::device_scalar<float> s(1.5f);
  EXPECT_EQ(s.read(nullptr), 1.5f);
}

}  // namespace
