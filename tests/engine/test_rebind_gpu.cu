// Rebinding parameters of an instantiated graph in place, for every
// updatable node kind, with the effect checked on real data across replays.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/device_scalar.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr float poison = -999.0f;

__global__ void scale_by(float* x, const float* factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= *factor;
}

}  // namespace

TEST(Rebind, KernelPointerScalarAndGridAcrossReplays) {
  CUDAG_REQUIRE_GPU();
  constexpr int max_n = 4096;
  cudag::device_buffer<float> a(max_n), b2(max_n);
  fill(a, poison);
  fill(b2, poison);

  cudag::builder b("iota");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  auto pn = b.param<int>("n");
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch_over(pn, 256), px, ps, pn);
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("start", 1.0f),
                                  cudag::bind("n", 1000)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());

  // New pointer, new scalar, bigger n (the grid grows with it): no rebuild.
  EXPECT_EQ(e.rebind("x", b2.data()), cudag::rebind_path::node_setters);
  e.rebind("start", 100.0f);
  e.rebind("n", max_n);
  EXPECT_EQ(e.rebind("n", max_n), cudag::rebind_path::none);  // same value: nothing to do
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);

  const auto ha = read_back(a);
  const auto hb = read_back(b2);
  for (int i = 0; i < max_n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], i < 1000 ? 1.0f + i : poison) << i;
    ASSERT_FLOAT_EQ(hb[i], 100.0f + i) << i;
  }
  EXPECT_EQ(e.readers_of("x"), std::vector<std::string>{"fill"});
}

TEST(Rebind, BetweenTwoReplaysWithoutHostSync) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 1 << 16;
  cudag::device_buffer<float> first(n), second(n);
  fill(first, poison);
  fill(second, poison);
  cudag::builder b("no_sync");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(n / 256, 256), px, ps, n);
  const cudag::binding binds[] = {cudag::bind("x", first.data()), cudag::bind("start", 3.0f)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  // The first replay may still run: it keeps the values it was launched with.
  e.rebind("x", second.data());
  e.rebind("start", -3.0f);
  e.launch(s.get());
  e.synchronize(s.get());
  const auto h1 = read_back(first);
  const auto h2 = read_back(second);
  for (int i = 0; i < n; i += 97) {
    ASSERT_FLOAT_EQ(h1[i], 3.0f + i) << i;
    ASSERT_FLOAT_EQ(h2[i], -3.0f + i) << i;
  }
}

TEST(Rebind, MemsetMemcpyHostAndEventNodes) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  cudag::device_buffer<unsigned> d1(n), d2(n), copy1(n), copy2(n);
  for (auto* d : {&d1, &d2, &copy1, &copy2}) fill(*d, 0xEEEEEEEEu);
  std::atomic<unsigned> host_saw{0};
  auto ev1 = cudag::make_event();
  auto ev2 = cudag::make_event();

  cudag::builder b("kinds");
  auto pdst = b.param<unsigned*>("dst");
  auto pval = b.param<unsigned>("value");
  auto pcopy = b.param<unsigned*>("copy");
  auto pev = b.param<cudaEvent_t>("event");
  auto ms = b.memset("set", pdst, pval, n);
  auto cp = b.memcpy("copy", pcopy, pdst, n * sizeof(unsigned));
  auto h = b.host("report", [&](unsigned v) { host_saw = v; }, pval);
  auto rec = b.record("done", pev);
  b.chain(ms, cp, h, rec);
  const cudag::binding binds[] = {cudag::bind("dst", d1.data()), cudag::bind("value", 0x11111111u),
                                  cudag::bind("copy", copy1.data()),
                                  cudag::bind("event", ev1.get())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  EXPECT_EQ(host_saw.load(), 0x11111111u);
  EXPECT_EQ(cudaEventQuery(ev1.get()), cudaSuccess);

  const cudag::binding changes[] = {cudag::bind("dst", d2.data()), cudag::bind("value", 0x22222222u),
                                    cudag::bind("copy", copy2.data()),
                                    cudag::bind("event", ev2.get())};
  e.rebind(changes);
  e.launch(s.get());
  e.synchronize(s.get());
  EXPECT_EQ(host_saw.load(), 0x22222222u);
  EXPECT_EQ(cudaEventQuery(ev2.get()), cudaSuccess);
  const auto h1 = read_back(d1), h2 = read_back(d2), c1 = read_back(copy1), c2 = read_back(copy2);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(h1[i], 0x11111111u);
    ASSERT_EQ(c1[i], 0x11111111u);
    ASSERT_EQ(h2[i], 0x22222222u);
    ASSERT_EQ(c2[i], 0x22222222u);
  }
}

TEST(Rebind, CapturedNodeIsRecordedAgain) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 128;
  cudag::device_buffer<float> a(n), c(n);
  fill(a, poison);
  fill(c, poison);
  cudag::builder b("captured");
  auto px = b.param<float*>("x");
  auto pf = b.param<float>("factor");
  b.captured(
      "library", "fill+scale",
      [](cudaStream_t s, float* p, float factor) {
        fill_iota<<<1, n, 0, s>>>(p, 1.0f, n);
        scale<<<1, n, 0, s>>>(p, factor, n);
      },
      px, pf);
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("factor", 2.0f)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.rebind("x", c.data());
  e.rebind("factor", 5.0f);
  e.launch(s.get());
  e.synchronize(s.get());
  const auto ha = read_back(a), hc = read_back(c);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], 2.0f * (1.0f + i));
    ASSERT_FLOAT_EQ(hc[i], 5.0f * (1.0f + i));
  }
}

TEST(Rebind, ParameterReadByManyNodesTakesOneWholeGraphUpdate) {
  CUDAG_REQUIRE_GPU();
  constexpr int nodes = 200, n = 64;
  cudag::device_buffer<float> a(n), c(n);
  fill(a, 1.0f);
  fill(c, 1.0f);
  cudag::builder b("many");
  auto px = b.param<float*>("x");
  cudag::node_ref previous = b.kernel("k0", CUDAG_KERNEL(scale), cudag::launch(1, n), px, 1.01f, n);
  for (int i = 1; i < nodes; ++i) {
    auto k = b.kernel("k" + std::to_string(i), CUDAG_KERNEL(scale), cudag::launch(1, n), px, 1.01f, n);
    b.edge(previous, k);
    previous = k;
  }
  const cudag::binding binds[] = {cudag::bind("x", a.data())};
  auto e = cudag::instantiate(b.build(), binds);
  EXPECT_EQ(e.rebind("x", c.data()), cudag::rebind_path::whole_graph_update);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  const auto ha = read_back(a), hc = read_back(c);
  float expected = 1.0f;
  for (int i = 0; i < nodes; ++i) expected *= 1.01f;
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], 1.0f) << "old buffer touched";
    ASSERT_NEAR(hc[i], expected, 1e-4f);
  }
}

TEST(Rebind, WrongTypeAndUnknownNameAreRefused) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> a(4);
  cudag::builder b("typed");
  auto px = b.param<float*>("x");
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, 4), px, 0.5f, 4);
  const cudag::binding binds[] = {cudag::bind("x", a.data())};
  auto e = cudag::instantiate(b.build(), binds);
  try {
    e.rebind("x", 3.0);
    FAIL();
  } catch (const cudag::error& err) {
    EXPECT_NE(std::string(err.what()).find("declared float*"), std::string::npos) << err.what();
  }
  EXPECT_THROW(e.rebind("nope", 1), cudag::error);
}

TEST(Update, ChangedSpecSameTopologyIsApplied) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> a(n);
  fill(a, poison);
  auto make = [&](float start, float factor) {
    cudag::builder b("updatable");
    auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), a.data(), start, n);
    auto k = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, n), a.data(), factor, n);
    b.edge(f, k);
    return b.build();
  };
  auto e = cudag::instantiate(make(1.0f, 2.0f), {});
  e.update(make(10.0f, 3.0f), {});
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  const auto h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 3.0f * (10.0f + i));
}

TEST(Update, RefusedUpdateNamesTheNodeAndReinstantiateFallsBack) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> a(n);
  fill(a, poison);
  cudag::builder first("g");
  first.kernel("work", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), a.data(), 1.0f, n);
  cudag::builder second("g");  // same name, another node kind: CUDA refuses
  second.memset("work", a.data(), 0x40000000u, n);  // 2.0f

  auto e = cudag::instantiate(first.build(), {});
  try {
    e.update(second.spec(), {});
    FAIL() << "expected the update to be refused";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "work") << err.what();
    EXPECT_NE(std::string(err.what()).find("'work'"), std::string::npos) << err.what();
  }
  auto s = cudag::make_stream();
  e.launch(s.get());  // unchanged after the refusal: still fills
  e.synchronize(s.get());
  EXPECT_TRUE(e.update_or_reinstantiate(second.spec(), {}));
  e.launch(s.get());
  e.synchronize(s.get());
  const auto h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 2.0f);
}

TEST(Rebind, EnableAndDisableNodes) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 32;
  cudag::device_buffer<float> a(n);
  cudag::builder b("toggle");
  auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), a.data(), 1.0f, n);
  auto k = b.kernel("double", CUDAG_KERNEL(scale), cudag::launch(1, n), a.data(), 2.0f, n);
  auto h = b.host("host", [] {});
  b.chain(f, k, h);
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  e.set_enabled("double", false);
  EXPECT_FALSE(e.enabled("double"));
  e.launch(s.get());
  e.synchronize(s.get());
  EXPECT_FLOAT_EQ(read_back(a)[5], 6.0f);
  e.set_enabled("double", true);
  e.launch(s.get());
  e.synchronize(s.get());
  EXPECT_FLOAT_EQ(read_back(a)[5], 12.0f);
  EXPECT_THROW(e.set_enabled("host", false), cudag::error);
  EXPECT_THROW(e.set_enabled("missing", false), cudag::error);
}

TEST(Rebind, DeviceScalarChangesBetweenReplaysInStreamOrder) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> a(n);
  cudag::device_scalar<float> factor(2.0f);
  cudag::builder b("scalar");
  auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), a.data(), 1.0f, n);
  auto k = b.kernel("scale", &scale_by, cudag::launch(1, n), a.data(),
                    static_cast<const float*>(factor.get()), n);
  b.edge(f, k);
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  e.launch(s.get());
  factor.set(7.0f, s.get());
  e.launch(s.get());
  e.synchronize(s.get());
  EXPECT_FLOAT_EQ(read_back(a)[3], 7.0f * 4.0f);
  EXPECT_FLOAT_EQ(factor.read(s.get()), 7.0f);
}

TEST(Rebind, ParameterInsideChildGraphUsesWholeGraphUpdate) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 48;
  cudag::device_buffer<float> a(n), c(n);
  fill(a, poison);
  fill(c, poison);
  cudag::builder outer("outer");
  auto px = outer.param<float*>("x");
  auto pstart = outer.param<float>("start");
  cudag::builder inner("inner");
  inner.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), px, pstart, n);
  outer.child("stage", inner.build());
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("start", 1.0f)};
  auto e = cudag::instantiate(outer.build(), binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  const cudag::binding changes[] = {cudag::bind("x", c.data()), cudag::bind("start", 50.0f)};
  EXPECT_EQ(e.rebind(changes), cudag::rebind_path::whole_graph_update);
  EXPECT_EQ(e.readers_of("x"), std::vector<std::string>{"stage/fill"});
  e.launch(s.get());
  e.synchronize(s.get());
  const auto ha = read_back(a), hc = read_back(c);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], 1.0f + i);
    ASSERT_FLOAT_EQ(hc[i], 50.0f + i);
  }
}
