// cuRAND fills as nodes (cudag/rand.hpp), run on a GPU: statistics within
// bounds, replays that continue cuRAND's sequence (compared with cuRAND
// called directly), the same sequence for the same seed, other values for
// another seed or offset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/op.hpp"
#include "cudag/rand.hpp"
#include "gpu_support.hpp"

namespace rnd = cudag::rand;

namespace {

template <class T>
std::vector<T> download(const T* device, std::size_t count) {
  std::vector<T> host(count, T(-99));
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

void poison(void* device, std::size_t bytes) {
  ASSERT_EQ(cudaMemset(device, 0xFF, bytes), cudaSuccess);  // NaN in float and double
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);          // launch streams are non-blocking
}

void run(cudag::exec& exec, cudaStream_t stream) {
  exec.launch(stream);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  exec.synchronize(stream);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

struct moments {
  double mean = 0, variance = 0, low = INFINITY, high = -INFINITY;
  std::size_t nans = 0;
};
template <class T>
moments moments_of(const std::vector<T>& v) {
  moments m;
  double sum = 0, squares = 0;
  for (T x : v) {
    if (std::isnan(x)) {
      ++m.nans;
      continue;
    }
    sum += x;
    squares += double(x) * x;
    m.low = std::min(m.low, double(x));
    m.high = std::max(m.high, double(x));
  }
  const double n = double(v.size());
  m.mean = sum / n;
  m.variance = squares / n - m.mean * m.mean;
  return m;
}

template <class T>
std::size_t differences(const std::vector<T>& a, const std::vector<T>& b) {
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return d;
}

constexpr std::size_t count = std::size_t(1) << 20;
// Five standard errors of the mean and of the variance of `count` draws.
double mean_bound(double variance) { return 5.0 * std::sqrt(variance / double(count)); }
double variance_bound(double fourth_central, double variance) {
  return 5.0 * std::sqrt((fourth_central - variance * variance) / double(count));
}

}  // namespace

// The values cuRAND gives for the descriptor, called directly: `calls`
// consecutive generations of `count` uniform floats.
std::vector<std::vector<float>> direct_uniform(rnd::generator gen, unsigned long long seed,
                                               unsigned long long offset, int calls) {
  static const curandRngType_t types[] = {CURAND_RNG_PSEUDO_PHILOX4_32_10, CURAND_RNG_PSEUDO_XORWOW};
  std::vector<std::vector<float>> result;
  curandGenerator_t g = nullptr;
  EXPECT_EQ(curandCreateGenerator(&g, types[int(gen)]), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandSetPseudoRandomGeneratorSeed(g, seed), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandSetGeneratorOffset(g, offset), CURAND_STATUS_SUCCESS);
  cudag::device_buffer<float> d(count);
  for (int c = 0; c < calls; ++c) {
    EXPECT_EQ(curandGenerateUniform(g, d.data(), count), CURAND_STATUS_SUCCESS);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    result.push_back(download(d.data(), count));
  }
  EXPECT_EQ(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
  return result;
}

class RandGpuUniform : public ::testing::TestWithParam<rnd::generator> {};

TEST_P(RandGpuUniform, StatisticsSequenceDeterminismAndRebinds) {
  CUDAG_REQUIRE_GPU();
  const rnd::generator gen = GetParam();
  cudag::device_buffer<float> out(count);
  auto make_spec = [&](const rnd::fill_desc& desc) {
    cudag::builder b("uniform");
    auto o = b.param<float*>("out");
    auto n = b.param<long long>("count");
    cudag::add_op(b, "noise", rnd::fill{desc}, o, n);
    return b.build();
  };
  const std::vector<cudag::binding> binds{cudag::bind("out", out.data()),
                                          cudag::bind("count", static_cast<long long>(count))};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(make_spec({.gen = gen, .seed = 1234}), binds);

  poison(out.data(), out.bytes());
  run(exec, stream.get());
  const auto first = download(out.data(), count);
  const moments m = moments_of(first);
  ASSERT_EQ(m.nans, 0u) << "values left unwritten";
  EXPECT_GT(m.low, 0.0);
  EXPECT_LE(m.high, 1.0);
  // Uniform on (0, 1]: variance 1/12, fourth central moment 1/80.
  EXPECT_NEAR(m.mean, 0.5, mean_bound(1.0 / 12));
  EXPECT_NEAR(m.variance, 1.0 / 12, variance_bound(1.0 / 80, 1.0 / 12));

  // The next replay continues the sequence.
  poison(out.data(), out.bytes());
  run(exec, stream.get());
  const auto second = download(out.data(), count);
  const moments m2 = moments_of(second);
  ASSERT_EQ(m2.nans, 0u);
  EXPECT_NEAR(m2.mean, 0.5, mean_bound(1.0 / 12));
  EXPECT_GT(differences(first, second), count * 99 / 100) << "a replay repeated the values";

  // Both are what cuRAND gives for the same generator, seed and offset.
  const auto direct = direct_uniform(gen, 1234, 0, 2);
  EXPECT_EQ(differences(first, direct[0]), 0u) << "the first replay is not cuRAND's first values";
  EXPECT_EQ(differences(second, direct[1]), 0u) << "the second replay is not cuRAND's next values";

  // The same descriptor declared again starts the sequence again.
  auto again = cudag::instantiate(make_spec({.gen = gen, .seed = 1234}), binds);
  poison(out.data(), out.bytes());
  run(again, stream.get());
  EXPECT_EQ(differences(first, download(out.data(), count)), 0u) << "a fixed seed is not reproducible";

  // Another seed: other values; an offset: the sequence skipped ahead.
  auto reseeded = cudag::instantiate(make_spec({.gen = gen, .seed = 99}), binds);
  poison(out.data(), out.bytes());
  run(reseeded, stream.get());
  EXPECT_GT(differences(first, download(out.data(), count)), count * 99 / 100)
      << "the seed did not change the values";
  auto skipped = cudag::instantiate(make_spec({.gen = gen, .seed = 1234, .offset = count}), binds);
  poison(out.data(), out.bytes());
  run(skipped, stream.get());
  EXPECT_EQ(differences(direct_uniform(gen, 1234, count, 1)[0], download(out.data(), count)), 0u)
      << "the offset is not cuRAND's";

  // Rebinding re-records: another output, and a smaller count that leaves
  // the rest alone.
  cudag::device_buffer<float> other(count);
  exec.rebind("out", other.data());
  exec.rebind("count", 1000ll);
  poison(out.data(), out.bytes());
  poison(other.data(), other.bytes());
  run(exec, stream.get());
  const auto partial = download(other.data(), 2000);
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(std::isnan(partial[i])) << i;
  for (int i = 1000; i < 2000; ++i) ASSERT_TRUE(std::isnan(partial[i])) << "written past count: " << i;
  EXPECT_EQ(moments_of(download(out.data(), count)).nans, count) << "the old output was written";
}

INSTANTIATE_TEST_SUITE_P(Generators, RandGpuUniform,
                         ::testing::Values(rnd::generator::philox, rnd::generator::xorwow),
                         [](const auto& info) {
                           return std::string(info.param == rnd::generator::philox ? "philox"
                                                                                    : "xorwow");
                         });

TEST(RandGpu, NormalFloatAndDouble) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> f(count);
  cudag::device_buffer<double> d(count);
  cudag::builder b("normal");
  auto n = b.param<long long>("count");
  auto first = cudag::add_op(
      b, "f32", rnd::fill{{.dist = rnd::distribution::normal, .mean = 2.0, .stddev = 0.5, .seed = 7}},
      f.data(), n);
  auto second = cudag::add_op(b, "f64",
                              rnd::fill{{.dist = rnd::distribution::normal, .prec = rnd::precision::f64,
                                         .mean = -1.0, .stddev = 3.0, .seed = 7}},
                              d.data(), n);
  b.edge(first, second);
  auto stream = cudag::make_stream();
  const std::vector<cudag::binding> binds{cudag::bind("count", static_cast<long long>(count))};
  auto exec = cudag::instantiate(b.build(), binds);
  poison(f.data(), f.bytes());
  poison(d.data(), d.bytes());
  run(exec, stream.get());

  const auto hf = download(f.data(), count);
  const moments mf = moments_of(hf);
  ASSERT_EQ(mf.nans, 0u);
  // Normal: fourth central moment 3 sigma^4.
  EXPECT_NEAR(mf.mean, 2.0, mean_bound(0.25));
  EXPECT_NEAR(mf.variance, 0.25, variance_bound(3 * 0.25 * 0.25, 0.25));
  const auto hd = download(d.data(), count);
  const moments md = moments_of(hd);
  ASSERT_EQ(md.nans, 0u);
  EXPECT_NEAR(md.mean, -1.0, mean_bound(9.0));
  EXPECT_NEAR(md.variance, 9.0, variance_bound(3 * 81.0, 9.0));
  // About 68.3% within one sigma (binomial standard error about 0.05%).
  std::size_t inside = 0;
  for (double x : hd) inside += std::fabs(x + 1.0) < 3.0;
  EXPECT_NEAR(double(inside) / double(count), 0.6827, 0.003);

  // The next replay: new values, the same distribution.
  poison(f.data(), f.bytes());
  run(exec, stream.get());
  const auto hf2 = download(f.data(), count);
  EXPECT_GT(differences(hf, hf2), count * 99 / 100) << "a replay repeated the values";
  EXPECT_NEAR(moments_of(hf2).mean, 2.0, mean_bound(0.25));

  // An odd count is refused naming the node (normal values come in pairs).
  try {
    exec.rebind("count", 1001ll);
    ADD_FAILURE() << "an odd count was accepted";
  } catch (const cudag::error& e) {
    EXPECT_TRUE(e.node() == "f32" || e.node() == "f64") << e.what();
    EXPECT_NE(std::string(e.what()).find("count = 1001 is odd"), std::string::npos) << e.what();
  }
  (void)cudaGetLastError();
}
