// cuFFT transforms as nodes (cudag/fft.hpp), run on a GPU and compared with
// a direct DFT on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "cudag/exec.hpp"
#include "cudag/fft.hpp"
#include "cudag/handles.hpp"
#include "cudag/op.hpp"
#include "gpu_support.hpp"

namespace fft = cudag::fft;

namespace {

using cplx = std::complex<double>;

// The unnormalised forward DFT of a real d0 x d1 array (row-major), its
// last dimension halved as cuFFT stores it: d0 x (d1 / 2 + 1).
std::vector<cplx> dft_r2c(const std::vector<double>& x, int d0, int d1) {
  const int h = d1 / 2 + 1;
  std::vector<cplx> out(std::size_t(d0) * h);
  for (int k0 = 0; k0 < d0; ++k0)
    for (int k1 = 0; k1 < h; ++k1) {
      cplx sum = 0;
      for (int j0 = 0; j0 < d0; ++j0)
        for (int j1 = 0; j1 < d1; ++j1) {
          const double angle = -2.0 * std::numbers::pi *
                               (double(k0) * j0 / d0 + double(k1) * j1 / d1);
          sum += x[std::size_t(j0) * d1 + j1] * cplx(std::cos(angle), std::sin(angle));
        }
      out[std::size_t(k0) * h + k1] = sum;
    }
  return out;
}

// Signal `b` of a batch: no two batches or elements alike, nowhere zero.
std::vector<double> signal(int batch, int length, double phase) {
  std::vector<double> x(std::size_t(batch) * length);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < length; ++i)
      x[std::size_t(b) * length + i] =
          1.25 + std::sin(0.37 * i + phase + b) + 0.5 * std::cos(1.9 * i * (b + 1)) + 0.01 * i;
  return x;
}

template <class T>
void upload(T* device, const std::vector<T>& host) {
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // launch streams are non-blocking
}

template <class T>
std::vector<T> download(const T* device, std::size_t count) {
  std::vector<T> host(count);
  std::memset(static_cast<void*>(host.data()), 0x7F, count * sizeof(T));
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

void poison(void* device, std::size_t bytes) {
  ASSERT_EQ(cudaMemset(device, 0xFF, bytes), cudaSuccess);  // NaN in float and double
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

void run(cudag::exec& exec, cudaStream_t stream) {
  exec.launch(stream);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  exec.synchronize(stream);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// Every value within `tolerance` (relative to the largest magnitude of the
// reference) of the reference; NaN fails.
template <class C>
void expect_spectrum(const std::vector<C>& got, const std::vector<cplx>& want, std::size_t first,
                     double tolerance, const std::string& what) {
  double scale = 0;
  for (const cplx& w : want) scale = std::max(scale, std::abs(w));
  ASSERT_GT(scale, 1.0) << what << ": test design, the reference must not vanish";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const cplx g(got[first + i].x, got[first + i].y);
    ASSERT_TRUE(std::abs(g - want[i]) <= tolerance * scale)
        << what << "[" << i << "] = " << g << ", expected " << want[i];
  }
}

}  // namespace

TEST(FftGpu, BatchedRealToComplexMatchesTheDftAndRebinds) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 96, batch = 3, h = n / 2 + 1;
  const std::vector<double> x1 = signal(batch, n, 0.0), x2 = signal(batch, n, 2.0);
  std::vector<float> f1(x1.begin(), x1.end()), f2(x2.begin(), x2.end());
  cudag::device_buffer<float> in1(f1.size()), in2(f2.size());
  cudag::device_buffer<cufftComplex> spectrum(std::size_t(batch) * h);
  upload(in1.data(), f1);
  upload(in2.data(), f2);

  cudag::builder b("fft");
  auto in = b.param<const float*>("in");
  auto out = b.param<cufftComplex*>("out");
  auto count = b.param<int>("batch");
  cudag::add_op(b, "forward", fft::transform{{.shape = {n}, .batch = batch}}, in, out, count);
  const std::vector<cudag::binding> binds{cudag::bind("in", static_cast<const float*>(in1.data())),
                                          cudag::bind("out", spectrum.data()),
                                          cudag::bind("batch", batch)};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), binds);

  // The reference of batch `k` of signal `x`, from the float values uploaded.
  auto reference = [&](const std::vector<float>& x, int k) {
    return dft_r2c(std::vector<double>(x.begin() + std::ptrdiff_t(k) * n,
                                       x.begin() + std::ptrdiff_t(k + 1) * n),
                   1, n);
  };
  poison(spectrum.data(), spectrum.bytes());
  run(exec, stream.get());
  auto got = download(spectrum.data(), spectrum.size());
  for (int k = 0; k < batch; ++k)
    expect_spectrum(got, reference(f1, k), std::size_t(k) * h, 1e-5, "in1 batch " + std::to_string(k));

  // Replays are the same transform.
  poison(spectrum.data(), spectrum.bytes());
  run(exec, stream.get());
  got = download(spectrum.data(), spectrum.size());
  expect_spectrum(got, reference(f1, 2), 2 * h, 1e-5, "in1 replay, batch 2");

  // Rebinding the input re-records the node: the second signal's spectrum.
  exec.rebind("in", static_cast<const float*>(in2.data()));
  poison(spectrum.data(), spectrum.bytes());
  run(exec, stream.get());
  got = download(spectrum.data(), spectrum.size());
  for (int k = 0; k < batch; ++k)
    expect_spectrum(got, reference(f2, k), std::size_t(k) * h, 1e-5, "in2 batch " + std::to_string(k));

  // A smaller batch: a second plan; the last transform's output is left alone.
  exec.rebind("batch", 2);
  poison(spectrum.data(), spectrum.bytes());
  run(exec, stream.get());
  got = download(spectrum.data(), spectrum.size());
  for (int k = 0; k < 2; ++k)
    expect_spectrum(got, reference(f2, k), std::size_t(k) * h, 1e-5, "batch 2, " + std::to_string(k));
  for (int i = 0; i < h; ++i)
    ASSERT_TRUE(std::isnan(got[2 * h + i].x) && std::isnan(got[2 * h + i].y))
        << "batch 2 wrote the third transform's output at " << i;

  // A batch cuFFT cannot plan is refused naming the node.
  try {
    exec.rebind("batch", 0);
    ADD_FAILURE() << "a batch of 0 was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "forward") << e.what();
    EXPECT_NE(std::string(e.what()).find("batch = 0 is less than 1"), std::string::npos) << e.what();
  }
  (void)cudaGetLastError();
}

TEST(FftGpu, ForwardThenInverseRestoresTheSignalTimesItsLength) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 128, batch = 4, h = n / 2 + 1;
  const std::vector<double> x = signal(batch, n, 0.7);
  std::vector<float> fx(x.begin(), x.end());
  cudag::device_buffer<float> in(fx.size()), back(fx.size());
  upload(in.data(), fx);

  cudag::builder b("round_trip");
  auto spectrum = b.alloc<cufftComplex>("spectrum", std::size_t(batch) * h);
  auto forward = cudag::add_op(b, "forward", fft::transform{{.shape = {n}, .batch = batch}},
                               static_cast<const float*>(in.data()), spectrum.buffer);
  auto inverse = cudag::add_op(
      b, "inverse",
      fft::transform{{.shape = {n}, .dir = fft::direction::complex_to_real, .batch = batch}},
      spectrum.buffer, back.data());
  auto release = b.free("release", spectrum.buffer);
  b.chain(spectrum.node, forward, inverse, release);
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), {});
  poison(back.data(), back.bytes());
  run(exec, stream.get());
  const auto got = download(back.data(), back.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], n * double(fx[i]), 1e-4 * n * 4) << i;
}

TEST(FftGpu, TwoDimensionalDoublePrecisionMatchesTheDft) {
  CUDAG_REQUIRE_GPU();
  constexpr int d0 = 6, d1 = 10, h = d1 / 2 + 1;
  const std::vector<double> x = signal(1, d0 * d1, 1.3);
  cudag::device_buffer<double> in(x.size());
  cudag::device_buffer<cufftDoubleComplex> out(std::size_t(d0) * h);
  upload(in.data(), x);

  cudag::builder b("fft2d");
  cudag::add_op(b, "forward",
                fft::transform{{.shape = {d0, d1}, .prec = fft::precision::f64}},
                static_cast<const double*>(in.data()), out.data());
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), {});
  poison(out.data(), out.bytes());
  run(exec, stream.get());
  expect_spectrum(download(out.data(), out.size()), dft_r2c(x, d0, d1), 0, 1e-12, "2-D f64");
}
