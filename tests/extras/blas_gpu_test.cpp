// cuBLAS GEMM nodes on a GPU, checked against a float64 CPU reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cudag/blas.hpp"
#include "cudag/builder.hpp"
#include "cudag/capture.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "gpu_support.hpp"

namespace blas = cudag::blas;

namespace {

// Element (r, c) of a matrix with `rows` x `cols` as stored, leading dimension ld.
std::size_t at(const blas::gemm_desc& d, int r, int c, int ld) {
  return d.order == blas::layout::row_major ? std::size_t(r) * ld + c : std::size_t(c) * ld + r;
}

/// C = alpha * op(A) op(B) + beta * C in double, tightly packed, one batch.
std::vector<double> reference(const blas::gemm_desc& d, const std::vector<double>& a,
                              const std::vector<double>& b, const std::vector<double>& c, double alpha,
                              double beta) {
  const bool ta = d.trans_a == blas::transpose::yes, tb = d.trans_b == blas::transpose::yes;
  const bool row = d.order == blas::layout::row_major;
  const int lda = row ? (ta ? d.m : d.k) : (ta ? d.k : d.m);
  const int ldb = row ? (tb ? d.k : d.n) : (tb ? d.n : d.k);
  const int ldc = row ? d.n : d.m;
  std::vector<double> out(c);
  for (int i = 0; i < d.m; ++i)
    for (int j = 0; j < d.n; ++j) {
      double sum = 0;
      for (int p = 0; p < d.k; ++p) {
        const double av = ta ? a[at(d, p, i, lda)] : a[at(d, i, p, lda)];
        const double bv = tb ? b[at(d, j, p, ldb)] : b[at(d, p, j, ldb)];
        sum += av * bv;
      }
      out[at(d, i, j, ldc)] = alpha * sum + beta * c[at(d, i, j, ldc)];
    }
  return out;
}

std::vector<double> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(0.5, 1.5);  // no cancellation: relative error is meaningful
  std::vector<double> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <class T>
T convert(double v) {
  if constexpr (std::is_same_v<T, float>) return float(v);
  else if constexpr (std::is_same_v<T, __half>) return __float2half(float(v));
  else return __float2bfloat16(float(v));
}
template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}

/// Host values rounded to T, uploaded; `rounded` gets the values T holds.
template <class T>
cudag::device_buffer<T> upload(const std::vector<double>& values, std::vector<double>& rounded) {
  std::vector<T> host(values.size());
  rounded.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    host[i] = convert<T>(values[i]);
    rounded[i] = to_double(host[i]);
  }
  cudag::device_buffer<T> device(values.size());
  EXPECT_EQ(cudaMemcpy(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the launch stream is non-blocking
  return device;
}

template <class T>
std::vector<double> download(const cudag::device_buffer<T>& device) {
  std::vector<T> host(device.size());
  EXPECT_EQ(cudaMemcpy(host.data(), device.data(), device.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<double> out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) out[i] = to_double(host[i]);
  return out;
}

double max_relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), 1e-30));
  }
  return worst;
}

void poison(void* p, std::size_t bytes) {
  ASSERT_EQ(cudaMemset(p, 0xFF, bytes), cudaSuccess);  // all-ones: NaN in every float format
  // Launch streams are non-blocking: finish this legacy-stream work first.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

/// Builds, instantiates and runs one GEMM node; returns max relative error.
template <class In, class Out>
double run_gemm(const blas::gemm_desc& d, double alpha, double beta, unsigned seed) {
  const std::size_t a_count = std::size_t(d.m) * d.k * d.batch;
  const std::size_t b_count = std::size_t(d.k) * d.n * d.batch;
  const std::size_t c_count = std::size_t(d.m) * d.n * d.batch;
  std::vector<double> a_values, b_values, c_values;
  auto da = upload<In>(random_values(a_count, seed), a_values);
  auto db = upload<In>(random_values(b_count, seed + 1), b_values);
  cudag::device_buffer<Out> dc(c_count);
  if (beta == 0.0) poison(dc.data(), dc.bytes());
  else dc = upload<Out>(random_values(c_count, seed + 2), c_values);
  if (beta == 0.0) c_values.assign(c_count, 0.0);

  cudag::builder b("gemm");
  auto pa = b.param<const In*>("a");
  auto pb = b.param<const In*>("b");
  auto pc = b.param<Out*>("c");
  auto pal = b.param<float>("alpha");
  blas::gemm(b, "gemm", d, pa, pb, pc, pal, float(beta));
  const std::vector<cudag::binding> bindings{
      cudag::bind("a", static_cast<const In*>(da.data())), cudag::bind("b", static_cast<const In*>(db.data())),
      cudag::bind("c", dc.data()), cudag::bind("alpha", float(alpha))};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), bindings);
  exec.launch(stream.get());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  exec.synchronize(stream.get());

  const std::vector<double> got = download(dc);
  double worst = 0;
  const std::size_t a_size = std::size_t(d.m) * d.k, b_size = std::size_t(d.k) * d.n,
                    c_size = std::size_t(d.m) * d.n;
  for (int batch = 0; batch < d.batch; ++batch) {
    auto slice = [&](const std::vector<double>& v, std::size_t size) {
      return std::vector<double>(v.begin() + batch * size, v.begin() + (batch + 1) * size);
    };
    const auto want = reference(d, slice(a_values, a_size), slice(b_values, b_size),
                                slice(c_values, c_size), alpha, beta);
    worst = std::max(worst, max_relative_error(slice(got, c_size), want));
  }
  return worst;
}

}  // namespace

TEST(BlasGpu, FloatGemmMatchesDoubleReference) {
  CUDAG_REQUIRE_GPU();
  using blas::layout;
  using blas::transpose;
  for (layout order : {layout::column_major, layout::row_major})
    for (transpose ta : {transpose::no, transpose::yes})
      for (transpose tb : {transpose::no, transpose::yes}) {
        const blas::gemm_desc d{.m = 37, .n = 21, .k = 48, .trans_a = ta, .trans_b = tb, .order = order};
        EXPECT_LE((run_gemm<float, float>(d, 1.25, 0.0, 7)), 1e-5) << blas::describe(d);
      }
  const blas::gemm_desc with_beta{.m = 16, .n = 24, .k = 32, .order = layout::row_major};
  EXPECT_LE((run_gemm<float, float>(with_beta, 0.75, 0.5, 11)), 1e-5) << blas::describe(with_beta);
}

TEST(BlasGpu, HalfAndBfloat16AccumulateInFloat) {
  CUDAG_REQUIRE_GPU();
  const blas::gemm_desc half_in{.m = 64, .n = 32, .k = 64, .order = blas::layout::row_major,
                                .input = blas::element::f16, .output = blas::element::f32};
  EXPECT_LE((run_gemm<__half, float>(half_in, 1.0, 0.0, 3)), 1e-4) << blas::describe(half_in);
  blas::gemm_desc bf16_in = half_in;
  bf16_in.input = blas::element::bf16;
  bf16_in.trans_b = blas::transpose::yes;
  EXPECT_LE((run_gemm<__nv_bfloat16, float>(bf16_in, 1.0, 0.0, 5)), 1e-4) << blas::describe(bf16_in);
  blas::gemm_desc half_out = half_in;
  half_out.output = blas::element::f16;
  EXPECT_LE((run_gemm<__half, __half>(half_out, 0.5, 0.0, 9)), 2e-3) << blas::describe(half_out);
  blas::gemm_desc bf16_out = bf16_in;
  bf16_out.output = blas::element::bf16;
  EXPECT_LE((run_gemm<__nv_bfloat16, __nv_bfloat16>(bf16_out, 0.5, 0.0, 13)), 1e-2)
      << blas::describe(bf16_out);
}

TEST(BlasGpu, BatchedStridedGemm) {
  CUDAG_REQUIRE_GPU();
  const blas::gemm_desc d{.m = 12, .n = 20, .k = 16, .trans_a = blas::transpose::yes,
                          .order = blas::layout::row_major, .batch = 3};
  EXPECT_LE((run_gemm<float, float>(d, 1.0, 0.0, 17)), 1e-5) << blas::describe(d);
  blas::gemm_desc col = d;
  col.order = blas::layout::column_major;
  EXPECT_LE((run_gemm<float, float>(col, 2.0, 0.0, 19)), 1e-5) << blas::describe(col);
}

TEST(BlasGpu, RebindingPointersAndAlphaAcrossReplays) {
  CUDAG_REQUIRE_GPU();
  const blas::gemm_desc d{.m = 32, .n = 16, .k = 24, .order = blas::layout::row_major};
  const std::size_t a_count = 32 * 24, b_count = 24 * 16, c_count = 32 * 16;
  std::vector<double> a1, a2, bv;
  auto da1 = upload<float>(random_values(a_count, 21), a1);
  auto da2 = upload<float>(random_values(a_count, 22), a2);
  auto db = upload<float>(random_values(b_count, 23), bv);
  cudag::device_buffer<float> dc1(c_count), dc2(c_count);
  poison(dc1.data(), dc1.bytes());
  poison(dc2.data(), dc2.bytes());

  cudag::builder b("rebind");
  auto pa = b.param<const float*>("a");
  auto pb = b.param<const float*>("b");
  auto pc = b.param<float*>("c");
  auto alpha = b.param<float>("alpha");
  blas::gemm(b, "gemm", d, pa, pb, pc, alpha, 0.0f);
  const std::vector<cudag::binding> bindings{
      cudag::bind("a", static_cast<const float*>(da1.data())),
      cudag::bind("b", static_cast<const float*>(db.data())), cudag::bind("c", dc1.data()),
      cudag::bind("alpha", 1.0f)};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), bindings);
  const std::vector<double> zeros(c_count, 0.0);

  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  const auto first = download(dc1);
  EXPECT_LE(max_relative_error(first, reference(d, a1, bv, zeros, 1.0, 0.0)), 1e-5);

  // New output pointer and alpha: the node is re-recorded and swapped in
  // place; the executable graph stays the same one.
  const cudaGraphExec_t native = exec.native_exec();
  exec.rebind("c", dc2.data());
  exec.rebind("alpha", 0.5f);
  EXPECT_EQ(exec.native_exec(), native);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  EXPECT_LE(max_relative_error(download(dc2), reference(d, a1, bv, zeros, 0.5, 0.0)), 1e-5);
  EXPECT_EQ(download(dc1), first) << "the first output was written again after rebinding c";

  // New input pointer, several parameters at once.
  poison(dc2.data(), dc2.bytes());
  const std::vector<cudag::binding> next{cudag::bind("a", static_cast<const float*>(da2.data())),
                                         cudag::bind("alpha", -2.0f)};
  exec.rebind(std::span<const cudag::binding>(next));
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  EXPECT_LE(max_relative_error(download(dc2), reference(d, a2, bv, zeros, -2.0, 0.0)), 1e-5);
  EXPECT_EQ(exec.replay_count(), 3u);
}

namespace {

/// Leading dimension of a matrix with `rows` x `cols` as stored: the given
/// one, or tightly packed.
int leading(const blas::gemm_desc& d, int given, int rows, int cols) {
  if (given) return given;
  return d.order == blas::layout::row_major ? cols : rows;
}

/// A strided, padded GEMM computed on the CPU from the descriptor's own
/// fields (leading dimensions, strides), on whole buffers: elements the
/// GEMM must not touch keep their value.
std::vector<double> strided_reference(const blas::gemm_desc& d, const std::vector<double>& a,
                                      const std::vector<double>& b, const std::vector<double>& c,
                                      double alpha, double beta) {
  const bool ta = d.trans_a == blas::transpose::yes, tb = d.trans_b == blas::transpose::yes;
  const int lda = leading(d, d.lda, ta ? d.k : d.m, ta ? d.m : d.k);
  const int ldb = leading(d, d.ldb, tb ? d.n : d.k, tb ? d.k : d.n);
  const int ldc = leading(d, d.ldc, d.m, d.n);
  std::vector<double> out(c);
  for (int batch = 0; batch < d.batch; ++batch) {
    const std::size_t a0 = std::size_t(batch) * d.stride_a, b0 = std::size_t(batch) * d.stride_b,
                      c0 = std::size_t(batch) * d.stride_c;
    for (int i = 0; i < d.m; ++i)
      for (int j = 0; j < d.n; ++j) {
        double sum = 0;
        for (int p = 0; p < d.k; ++p) {
          const double av = ta ? a[a0 + at(d, p, i, lda)] : a[a0 + at(d, i, p, lda)];
          const double bv = tb ? b[b0 + at(d, j, p, ldb)] : b[b0 + at(d, p, j, ldb)];
          sum += av * bv;
        }
        const std::size_t ci = c0 + at(d, i, j, ldc);
        out[ci] = alpha * sum + beta * c[ci];
      }
  }
  return out;
}

/// Marks the elements a strided GEMM reads or writes of one operand.
std::vector<bool> used_elements(const blas::gemm_desc& d, std::size_t size, long long stride,
                                int rows, int cols, int ld) {
  std::vector<bool> used(size, false);
  for (int batch = 0; batch < d.batch; ++batch)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) used.at(std::size_t(batch) * stride + at(d, r, c, ld)) = true;
  return used;
}

/// Runs one strided GEMM node (strides must be given) over padded buffers:
/// A and B are NaN outside the matrices (reading padding poisons the
/// result), C's padding holds a sentinel that must survive, and C's matrices
/// are NaN when beta is 0. Checks every element of C.
void check_strided_gemm(const blas::gemm_desc& d, double alpha, double beta, unsigned seed) {
  SCOPED_TRACE(blas::describe(d));
  const bool ta = d.trans_a == blas::transpose::yes, tb = d.trans_b == blas::transpose::yes;
  const int a_rows = ta ? d.k : d.m, a_cols = ta ? d.m : d.k;
  const int b_rows = tb ? d.n : d.k, b_cols = tb ? d.k : d.n;
  const int lda = leading(d, d.lda, a_rows, a_cols), ldb = leading(d, d.ldb, b_rows, b_cols),
            ldc = leading(d, d.ldc, d.m, d.n);
  const std::size_t a_size = std::size_t(d.stride_a) * d.batch + 17;
  const std::size_t b_size = std::size_t(d.stride_b) * d.batch + 13;
  const std::size_t c_size = std::size_t(d.stride_c) * d.batch + 11;
  const auto a_used = used_elements(d, a_size, d.stride_a, a_rows, a_cols, lda);
  const auto b_used = used_elements(d, b_size, d.stride_b, b_rows, b_cols, ldb);
  const auto c_used = used_elements(d, c_size, d.stride_c, d.m, d.n, ldc);

  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double sentinel = 1234.5;
  auto fill = [&](std::size_t size, const std::vector<bool>& used, double outside, unsigned s) {
    std::vector<double> v = random_values(size, s);
    for (std::size_t i = 0; i < size; ++i)
      if (!used[i]) v[i] = outside;
    return v;
  };
  std::vector<double> a_values, b_values, c_values;
  auto da = upload<float>(fill(a_size, a_used, nan, seed), a_values);
  auto db = upload<float>(fill(b_size, b_used, nan, seed + 1), b_values);
  std::vector<double> c_initial = fill(c_size, c_used, sentinel, seed + 2);
  if (beta == 0.0)
    for (std::size_t i = 0; i < c_size; ++i)
      if (c_used[i]) c_initial[i] = nan;  // poison: beta 0 must not read C
  auto dc = upload<float>(c_initial, c_values);

  cudag::builder b("strided");
  auto pa = b.param<const float*>("a");
  auto pb = b.param<const float*>("b");
  auto pc = b.param<float*>("c");
  blas::gemm(b, "gemm", d, pa, pb, pc, float(alpha), float(beta));
  const std::vector<cudag::binding> bindings{cudag::bind("a", static_cast<const float*>(da.data())),
                                             cudag::bind("b", static_cast<const float*>(db.data())),
                                             cudag::bind("c", dc.data())};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), bindings);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());

  std::vector<double> c_for_reference = c_values;
  if (beta == 0.0)
    for (std::size_t i = 0; i < c_size; ++i)
      if (c_used[i]) c_for_reference[i] = 0.0;  // beta * C is absent, not NaN
  const std::vector<double> want = strided_reference(d, a_values, b_values, c_for_reference, alpha, beta);
  const std::vector<double> got = download(dc);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < c_size; ++i) {
    if (c_used[i]) {
      const double error = std::abs(got[i] - want[i]) / std::abs(want[i]);
      ASSERT_TRUE(error <= 1e-5) << "C[" << i << "] = " << got[i] << ", expected " << want[i];
      ++checked;
    } else {
      ASSERT_EQ(got[i], sentinel) << "C[" << i << "] lies outside every matrix and was written";
    }
  }
  EXPECT_EQ(checked, std::size_t(d.m) * d.n * d.batch);
}

}  // namespace

TEST(BlasGpu, LeadingDimensionsAndStridesAreHonoured) {
  CUDAG_REQUIRE_GPU();
  using blas::layout;
  using blas::transpose;
  // Row-major, A transposed (stored k x m), every matrix padded, batches
  // further apart than their matrices need; a small workspace.
  check_strided_gemm({.m = 12, .n = 20, .k = 16, .trans_a = transpose::yes, .order = layout::row_major,
                      .lda = 12 + 5, .ldb = 20 + 3, .ldc = 20 + 7, .batch = 3,
                      .stride_a = 17 * 16 + 11, .stride_b = 23 * 16 + 5, .stride_c = 27 * 12 + 13,
                      .workspace_bytes = std::size_t(64) << 10},
                     1.5, 0.0, 31);
  // Column-major, B transposed (stored n x k), beta reads C through ldc.
  check_strided_gemm({.m = 9, .n = 14, .k = 11, .trans_b = transpose::yes, .order = layout::column_major,
                      .lda = 9 + 4, .ldb = 14 + 2, .ldc = 9 + 6, .batch = 2,
                      .stride_a = 13 * 11 + 7, .stride_b = 16 * 11 + 3, .stride_c = 15 * 14 + 5,
                      .workspace_bytes = std::size_t(1) << 20},
                     0.75, 0.5, 37);
  // One GEMM (no batch) with padded rows, row-major, both transposed.
  check_strided_gemm({.m = 8, .n = 6, .k = 5, .trans_a = transpose::yes, .trans_b = transpose::yes,
                      .order = layout::row_major, .lda = 8 + 1, .ldb = 5 + 2, .ldc = 6 + 5,
                      .stride_a = 9 * 5, .stride_b = 7 * 6, .stride_c = 11 * 8},
                     -1.0, 0.25, 41);
}

TEST(BlasGpu, CaptureHandleBindsTheStreamAndOwnsItsWorkspace) {
  CUDAG_REQUIRE_GPU();
  constexpr std::size_t workspace = std::size_t(256) << 20;
  auto first = cudag::make_stream();
  auto second = cudag::make_stream();
  std::size_t free_before = 0, free_after = 0, free_again = 0, total = 0;
  CUDAG_EXPECT_CUDA(cudaMemGetInfo(&free_before, &total));
  blas::capture_handle handle(workspace);
  cublasHandle_t h = nullptr;
  {
    auto lock = handle.lock();
    EXPECT_TRUE(lock.owns_lock());
    h = handle.bind(first.get(), "bind_test");
    ASSERT_NE(h, nullptr);
    cudaStream_t bound = nullptr;
    ASSERT_EQ(cublasGetStream(h, &bound), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(bound, first.get());
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;
    ASSERT_EQ(cublasGetPointerMode(h, &mode), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(mode, CUBLAS_POINTER_MODE_HOST);
  }
  CUDAG_EXPECT_CUDA(cudaMemGetInfo(&free_after, &total));
  EXPECT_GE(free_before - std::min(free_before, free_after), workspace)
      << "binding did not allocate the " << workspace << "-byte workspace";
  {
    auto lock = handle.lock();
    EXPECT_EQ(handle.bind(second.get(), "bind_test"), h) << "a second bind made a new handle";
    cudaStream_t bound = nullptr;
    ASSERT_EQ(cublasGetStream(h, &bound), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(bound, second.get());
  }
  CUDAG_EXPECT_CUDA(cudaMemGetInfo(&free_again, &total));
  EXPECT_LT(free_after - std::min(free_after, free_again), workspace / 2)
      << "a second bind allocated another workspace";

  // The first bind may happen inside a thread-local capture (as when a GEMM
  // node is first recorded): creating the handle and workspace must not
  // invalidate it.
  blas::capture_handle fresh(std::size_t(1) << 20);
  cudag::capture_guard guard(first.get());
  {
    auto lock = fresh.lock();
    EXPECT_NE(fresh.bind(first.get(), "inside_capture"), nullptr);
  }
  EXPECT_TRUE(cudag::is_capturing(first.get()));
  EXPECT_NO_THROW((void)guard.end());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
