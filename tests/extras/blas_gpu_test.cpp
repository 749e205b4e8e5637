// cuBLAS GEMM nodes on a GPU, checked against a float64 CPU reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cudag/blas.hpp"
#include "cudag/builder.hpp"
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
