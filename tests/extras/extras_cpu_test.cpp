// capture, blas, import and user-defined ops: what can be checked without a
// GPU (API misuse, descriptor mapping, the nodes a builder gets).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

TEST(CaptureGuard, AnInactiveGuardReportsNoStreamAndNoTarget) {
  cudag::capture_guard idle;
  EXPECT_FALSE(idle.active());
  EXPECT_FALSE(idle.into_existing_graph());
  EXPECT_EQ(idle.stream(), nullptr);
  cudag::capture_guard other;
  other = std::move(idle);  // move-assigning inactive guards: nothing to end
  EXPECT_FALSE(other.active());
  EXPECT_FALSE(other.into_existing_graph());
  EXPECT_EQ(other.stream(), nullptr);
  EXPECT_TRUE(contains(message_of([&] { (void)other.end(); }), "no capture in progress"));
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

TEST(BlasGemm, GivenLeadingDimensionsAndStridesPassThrough) {
  // Column-major: A (m x k) with lda 7 >= m 5, B (k x n) with ldb 9 >= k 4,
  // C (m x n) with ldc 6 >= m 5; strides as given.
  const auto col = blas::to_cublas({.m = 5, .n = 3, .k = 4, .lda = 7, .ldb = 9, .ldc = 6, .batch = 2,
                                    .stride_a = 100, .stride_b = 200, .stride_c = 300});
  EXPECT_FALSE(col.operands_swapped);
  EXPECT_EQ(col.lda, 7);
  EXPECT_EQ(col.ldb, 9);
  EXPECT_EQ(col.ldc, 6);
  EXPECT_EQ(col.stride_a, 100);
  EXPECT_EQ(col.stride_b, 200);
  EXPECT_EQ(col.stride_c, 300);
  // Row-major: cuBLAS's first operand is B, so B's leading dimension and
  // stride come first; C keeps its own.
  const auto row = blas::to_cublas({.m = 5, .n = 3, .k = 4, .order = blas::layout::row_major,
                                    .lda = 7, .ldb = 9, .ldc = 6, .batch = 2, .stride_a = 100,
                                    .stride_b = 200, .stride_c = 300});
  EXPECT_TRUE(row.operands_swapped);
  EXPECT_EQ(row.m, 3);
  EXPECT_EQ(row.n, 5);
  EXPECT_EQ(row.lda, 9);
  EXPECT_EQ(row.ldb, 7);
  EXPECT_EQ(row.ldc, 6);
  EXPECT_EQ(row.stride_a, 200);
  EXPECT_EQ(row.stride_b, 100);
  EXPECT_EQ(row.stride_c, 300);
  // Strides left at 0 follow the leading dimensions: ld x (columns stored,
  // column-major) or ld x (rows stored, row-major).
  const auto packed_col = blas::to_cublas({.m = 5, .n = 3, .k = 4, .lda = 7, .ldb = 9, .ldc = 6});
  EXPECT_EQ(packed_col.stride_a, 7 * 4);
  EXPECT_EQ(packed_col.stride_b, 9 * 3);
  EXPECT_EQ(packed_col.stride_c, 6 * 3);
  const auto packed_row = blas::to_cublas({.m = 5, .n = 3, .k = 4, .trans_a = blas::transpose::yes,
                                           .order = blas::layout::row_major, .lda = 8, .ldb = 9,
                                           .ldc = 6});
  EXPECT_EQ(packed_row.stride_b, 8 * 4);  // A stored k x m row-major: k rows of lda
  EXPECT_EQ(packed_row.stride_a, 9 * 4);  // B stored k x n: k rows of ldb
  EXPECT_EQ(packed_row.stride_c, 6 * 5);  // C m x n: m rows of ldc
  // The bound is the stored row (row-major) or column (column-major).
  EXPECT_TRUE(contains(message_of([] {
                         (void)blas::to_cublas({.m = 5, .n = 3, .k = 4,
                                                .order = blas::layout::row_major, .ldc = 2});
                       }),
                       "ldc = 2 is less than 3"));
  EXPECT_TRUE(contains(message_of([] { (void)blas::to_cublas({.m = 5, .n = 3, .k = 4, .ldb = 3}); }),
                       "ldb = 3 is less than 4"));
  EXPECT_TRUE(contains(message_of([] { (void)blas::to_cublas({.m = 5, .n = 3, .k = 4, .batch = 0}); }),
                       "batch must be positive"));
}

TEST(BlasGemm, CublasCheckNamesTheStatusAndTheNode) {
  EXPECT_NO_THROW(blas::cublas_check(CUBLAS_STATUS_SUCCESS, "cublasSgemm", "project"));
  try {
    blas::cublas_check(CUBLAS_STATUS_INVALID_VALUE, "cublasSgemm", "project");
    FAIL() << "a failed status was accepted";
  } catch (const cudag::error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "cublasSgemm failed for node 'project'")) << m;
    EXPECT_TRUE(contains(m, "CUBLAS_STATUS_INVALID_VALUE")) << m;
    EXPECT_EQ(e.node(), "project");
    EXPECT_EQ(e.call(), "cublasSgemm");
  }
}

TEST(BlasGemm, ElementOfReadsThePointerType) {
  static_assert(blas::element_of<float*>() == blas::element::f32);
  static_assert(blas::element_of<const float*>() == blas::element::f32);
  static_assert(blas::element_of<const __half*>() == blas::element::f16);
  static_assert(blas::element_of<__nv_bfloat16*>() == blas::element::bf16);
  static_assert(!blas::element_of<const void*>().has_value());
  EXPECT_EQ(blas::element_of<const __nv_bfloat16*>(), blas::element::bf16);
  EXPECT_NO_THROW(blas::check_element("n", 'A', std::nullopt, blas::element::f16));  // void*: unchecked
  EXPECT_TRUE(contains(message_of([] {
                         blas::check_element("n", 'C', blas::element::bf16, blas::element::f32);
                       }),
                       "matrix C holds bf16 but the descriptor says f32"));
}

TEST(BlasGemm, GemmCallKeepsItsDescriptorAndCopiesShareIt) {
  const blas::gemm_desc d{.m = 6, .n = 5, .k = 4, .trans_b = blas::transpose::yes,
                          .order = blas::layout::row_major, .ldc = 9, .workspace_bytes = 4096};
  const blas::gemm_call call(d, "layer");
  EXPECT_EQ(call.desc().m, 6);
  EXPECT_EQ(call.desc().n, 5);
  EXPECT_EQ(call.desc().k, 4);
  EXPECT_EQ(call.desc().trans_b, blas::transpose::yes);
  EXPECT_EQ(call.desc().order, blas::layout::row_major);
  EXPECT_EQ(call.desc().ldc, 9);
  EXPECT_EQ(call.desc().workspace_bytes, 4096u);
  const blas::gemm_call copy = call;  // shares the handle and workspace
  EXPECT_EQ(&copy.desc(), &call.desc());
  EXPECT_NE(&blas::gemm_call(d, "other").desc(), &call.desc());
  // The descriptor is validated when the call is made, not when it runs.
  EXPECT_TRUE(contains(message_of([] { blas::gemm_call bad({.m = 2, .n = 2, .k = 0}, "bad"); }),
                       "m, n and k must be positive"));
}

TEST(BlasCaptureHandle, LockExcludesOtherUsers) {
  blas::capture_handle handle(std::size_t(1) << 20);  // creates nothing until bound
  auto lock = handle.lock();
  ASSERT_TRUE(lock.owns_lock());
  std::atomic<bool> other_has_it{false};
  std::thread other([&] {
    auto mine = handle.lock();  // must wait until this thread lets go
    other_has_it = mine.owns_lock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(other_has_it) << "another thread got the handle while this one held it";
  lock.unlock();
  other.join();
  EXPECT_TRUE(other_has_it);
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

// -------------------------------------------------------------- the spec --
TEST(GraphSpec, FindParamFindsDeclaredParametersByExactName) {
  cudag::graph_spec spec;
  spec.name = "params";
  spec.params = {{"x", cudag::type_of<float*>()},
                 {"n", cudag::type_of<int>()},
                 {"xs", cudag::type_of<const float*>()}};
  spec.nodes.push_back(cudag::node{"clear", cudag::empty_node{}, {}});

  const cudag::param_decl* found = spec.find_param("n");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found, &spec.params[1]);
  EXPECT_EQ(found->name, "n");
  EXPECT_EQ(found->type, cudag::type_of<int>());
  const cudag::param_decl* first = spec.find_param("x");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, &spec.params[0]);
  EXPECT_EQ(first->type, cudag::type_of<float*>());
  const cudag::param_decl* last = spec.find_param("xs");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last, &spec.params[2]);
  EXPECT_EQ(last->type, cudag::type_of<const float*>());
  EXPECT_EQ(spec.find_param("missing"), nullptr);
  EXPECT_EQ(spec.find_param("X"), nullptr);      // names are case-sensitive
  EXPECT_EQ(spec.find_param("xs "), nullptr);    // and exact: no prefix or suffix match
  EXPECT_EQ(spec.find_param(""), nullptr);
  EXPECT_EQ(spec.find_param("clear"), nullptr);  // a node is not a parameter
  EXPECT_EQ(cudag::graph_spec{}.find_param("x"), nullptr);

  // What the builder declares is what find_param finds.
  cudag::builder b("built");
  (void)b.param<float*>("y");
  (void)b.param<unsigned>("count");
  const cudag::graph_spec built = b.build();
  const cudag::param_decl* count = built.find_param("count");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->name, "count");
  EXPECT_EQ(count->type, cudag::type_of<unsigned>());
  EXPECT_EQ(built.find_param("n"), nullptr);
}
