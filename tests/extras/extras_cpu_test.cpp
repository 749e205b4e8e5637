// capture, blas, import and user-defined ops: what can be checked without a
// GPU (API misuse, descriptor mapping, the nodes a builder gets).
#include <gtest/gtest.h>

#include <string>

#include "cudag/blas.hpp"
#include "cudag/builder.hpp"
#include "cudag/capture.hpp"
#include "cudag/check.hpp"
#include "cudag/import.hpp"
#include "cudag/op.hpp"
#include "saxpy_op.hpp"

namespace blas = cudag::blas;

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
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

// ----------------------------------------------------------------- capture --
TEST(CaptureGuard, RefusesTheLegacyDefaultStream) {
  const std::string m = message_of([] { cudag::capture_guard guard(cudaStream_t{}); });
  EXPECT_TRUE(contains(m, "legacy default stream")) << m;
  EXPECT_TRUE(contains(message_of([] { cudag::capture_guard guard(cudaStreamLegacy); }),
                       "legacy default stream"));
}

TEST(CaptureGuard, RefusesANullTargetGraph) {
  const std::string m = message_of([] { cudag::capture_guard guard(cudaGraph_t{}, cudaStreamPerThread); });
  EXPECT_TRUE(contains(m, "needs a graph")) << m;
}

TEST(CaptureGuard, EndWithoutACaptureIsRefused) {
  cudag::capture_guard idle;
  EXPECT_FALSE(idle.active());
  EXPECT_TRUE(contains(message_of([&] { (void)idle.end(); }), "no capture in progress"));
  EXPECT_TRUE(contains(message_of([&] { (void)idle.end_into(); }), "no capture in progress"));
  cudag::capture_guard moved(std::move(idle));
  EXPECT_TRUE(contains(message_of([&] { (void)moved.end(); }), "no capture in progress"));
  idle.abandon();  // harmless on an inactive guard
}

// -------------------------------------------------------------------- blas --
TEST(BlasGemm, ColumnMajorMapsAsIs) {
  const auto g = blas::to_cublas({.m = 4, .n = 3, .k = 2, .trans_a = blas::transpose::yes});
  EXPECT_FALSE(g.operands_swapped);
  EXPECT_EQ(g.trans_a, CUBLAS_OP_T);
  EXPECT_EQ(g.trans_b, CUBLAS_OP_N);
  EXPECT_EQ(g.m, 4);
  EXPECT_EQ(g.n, 3);
  EXPECT_EQ(g.lda, 2);  // A is stored k x m
  EXPECT_EQ(g.ldb, 2);
  EXPECT_EQ(g.ldc, 4);
  EXPECT_EQ(g.stride_a, 8);
  EXPECT_EQ(g.stride_c, 12);
}

TEST(BlasGemm, RowMajorSwapsOperands) {
  const auto g = blas::to_cublas({.m = 4, .n = 3, .k = 2, .trans_b = blas::transpose::yes,
                                  .order = blas::layout::row_major});
  EXPECT_TRUE(g.operands_swapped);
  EXPECT_EQ(g.m, 3);
  EXPECT_EQ(g.n, 4);
  EXPECT_EQ(g.k, 2);
  EXPECT_EQ(g.trans_a, CUBLAS_OP_T);  // cuBLAS's first operand is B
  EXPECT_EQ(g.trans_b, CUBLAS_OP_N);
  EXPECT_EQ(g.lda, 2);  // B stored n x k row-major: a row holds k
  EXPECT_EQ(g.ldb, 2);  // A stored m x k row-major
  EXPECT_EQ(g.ldc, 3);
}

TEST(BlasGemm, BadDescriptorsAreNamed) {
  EXPECT_TRUE(contains(message_of([] { (void)blas::to_cublas({.m = 0, .n = 1, .k = 1}); }),
                       "m, n and k must be positive"));
  EXPECT_TRUE(contains(message_of([] { (void)blas::to_cublas({.m = 4, .n = 4, .k = 4, .lda = 2}); }),
                       "lda = 2 is less than 4"));
  EXPECT_TRUE(contains(message_of([] {
                         (void)blas::to_cublas({.m = 4, .n = 4, .k = 4, .input = blas::element::f32,
                                                .output = blas::element::f16});
                       }),
                       "not a float-accumulating"));
}

TEST(BlasGemm, AddsOneCapturedNodeWithParameters) {
  cudag::builder b("gemm");
  auto a = b.param<const float*>("a");
  auto bm = b.param<const float*>("b");
  auto c = b.param<float*>("c");
  auto alpha = b.param<float>("alpha");
  auto n = blas::gemm(b, "project", {.m = 8, .n = 4, .k = 2, .order = blas::layout::row_major}, a,
                      bm, c, alpha, 0.5f);
  const cudag::graph_spec spec = b.build();
  ASSERT_EQ(spec.nodes.size(), 1u);
  EXPECT_EQ(n.name(), "project");
  const auto& captured = std::get<cudag::captured_node>(spec.nodes[0].params);
  EXPECT_EQ(captured.what, "gemm f32->f32 row-major 8x4x2 NN");
  ASSERT_EQ(captured.args.size(), 5u);
  EXPECT_EQ(std::get<cudag::param_ref>(captured.args[3].source).name, "alpha");
  EXPECT_TRUE(std::holds_alternative<cudag::literal>(captured.args[4].source));
  EXPECT_NO_THROW(cudag::check(spec));
}

TEST(BlasGemm, ElementTypeMustMatchTheDescriptor) {
  cudag::builder b("gemm");
  auto a = b.param<const __half*>("a");
  auto c = b.param<float*>("c");
  const std::string m = message_of([&] {
    (void)blas::gemm(b, "mixed", {.m = 2, .n = 2, .k = 2}, a, a, c);
  });
  EXPECT_TRUE(contains(m, "matrix A holds f16 but the descriptor says f32")) << m;
  EXPECT_NO_THROW((void)blas::gemm(
      b, "half", {.m = 2, .n = 2, .k = 2, .input = blas::element::f16}, a, a, c));
}

// ------------------------------------------------------------- user ops --
TEST(UserOp, AddOpUsesTheOpsOwnFunction) {
  static_assert(cudag::user_op<user_ops::saxpy, cudag::param_handle<float>,
                               cudag::param_handle<const float*>, cudag::param_handle<float*>>);
  static_assert(!cudag::user_op<user_ops::saxpy, int>);
  static_assert(!cudag::user_op<int, float>);
  cudag::builder b("ops");
  auto alpha = b.param<float>("alpha");
  auto x = b.param<const float*>("x");
  auto y = b.param<float*>("y");
  auto first = cudag::add_op(b, "update", user_ops::saxpy{1024}, alpha, x, y);
  auto second = cudag::add_op(b, "again", user_ops::saxpy{1024}, 2.0f, x, y);
  b.edge(first, second);
  const cudag::graph_spec spec = b.build();
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_EQ(std::get<cudag::captured_node>(spec.nodes[0].params).what, "cublasSaxpy n=1024");
  EXPECT_EQ(spec.nodes[1].deps, std::vector<std::string>{"update"});
  EXPECT_NO_THROW(cudag::check(spec));
}

// ------------------------------------------------------------------ import --
TEST(Import, RefusesANullGraph) {
  EXPECT_TRUE(contains(message_of([] { (void)cudag::import_graph(nullptr); }), "graph is null"));
}
