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
  EXPECT_EQ(e.rebind("start", 100.0f), cudag::rebind_path::node_setters);
  EXPECT_EQ(e.rebind("n", max_n), cudag::rebind_path::node_setters);
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
  EXPECT_EQ(e.rebind("x", second.data()), cudag::rebind_path::node_setters);
  EXPECT_EQ(e.rebind("start", -3.0f), cudag::rebind_path::node_setters);
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
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(host_saw.load(), 0x11111111u);

  // Four parameters of four nodes in one call: one exec setter per node.
  // (That the record node then records ev2 is checked by a race in
  // test_events_gpu.cu: an event query cannot tell.)
  const cudag::binding changes[] = {cudag::bind("dst", d2.data()), cudag::bind("value", 0x22222222u),
                                    cudag::bind("copy", copy2.data()),
                                    cudag::bind("event", ev2.get())};
  EXPECT_EQ(e.rebind(changes), cudag::rebind_path::node_setters);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(host_saw.load(), 0x22222222u);
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
  // Re-recorded and set with cudaGraphExecChildGraphNodeSetParams: a per-node setter.
  EXPECT_EQ(e.rebind("x", c.data()), cudag::rebind_path::node_setters);
  EXPECT_EQ(e.rebind("factor", 5.0f), cudag::rebind_path::node_setters);
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
    auto k = b.kernel(std::string("k").append(std::to_string(i)), CUDAG_KERNEL(scale),
                      cudag::launch(1, n), px, 1.01f, n);
    b.edge(previous, k);
    previous = k;
  }
  const cudag::binding binds[] = {cudag::bind("x", a.data())};
  auto e = cudag::instantiate(b.build(), binds);
  // Every node reads x. The automatic rule keeps exec setters (faster on
  // launched graphs, docs/benchmarks.md): the whole-graph path is forced.
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
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

  // Forced through one exec setter per node, back to `a`.
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  fill(a, 1.0f);
  fill(c, 1.0f);
  EXPECT_EQ(e.rebind("x", a.data()), cudag::rebind_path::node_setters);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto ha2 = read_back(a), hc2 = read_back(c);
  for (int i = 0; i < n; ++i) {
    ASSERT_NEAR(ha2[i], expected, 1e-4f);
    ASSERT_FLOAT_EQ(hc2[i], 1.0f) << "old buffer touched";
  }
}

TEST(Rebind, ForcedWholeGraphUpdateKeepsEarlierPerNodeChanges) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> a(n), other(n), other2(n);
  fill(a, poison);
  fill(other, poison);
  fill(other2, poison);
  cudag::builder b("forced");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  auto po = b.param<float*>("other");
  auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), px, ps, n);
  auto g = b.kernel("fill_other", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), po, 7.0f, n);
  b.edge(f, g);
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("start", 1.0f),
                                  cudag::bind("other", other.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  // One reader of two nodes: a per-node setter by the automatic rule; the
  // template graph's "fill" still has start = 1.
  EXPECT_EQ(e.rebind("start", 2.0f), cudag::rebind_path::node_setters);
  // Forced whole-graph update of the other node: applying the template
  // graph must not undo start = 2 on "fill".
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(e.rebind("other", other2.data()), cudag::rebind_path::whole_graph_update);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto ha = read_back(a), ho = read_back(other), ho2 = read_back(other2);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], 2.0f + i) << i;
    ASSERT_FLOAT_EQ(ho[i], poison) << i;
    ASSERT_FLOAT_EQ(ho2[i], 7.0f + i) << i;
  }
  // Back to the automatic rule.
  e.set_rebind_policy(cudag::rebind_policy::automatic);
  EXPECT_EQ(e.rebind("start", 3.0f), cudag::rebind_path::node_setters);
  fill(a, poison);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FLOAT_EQ(read_back(a)[5], 8.0f);
}

TEST(Rebind, GridFollowsTheCountParameterOnBothPaths) {
  CUDAG_REQUIRE_GPU();
  constexpr int max_blocks = 32;
  constexpr unsigned unwritten = 0xEEEEEEEEu;
  cudag::device_buffer<unsigned> slot(max_blocks), seen(1);
  cudag::builder b("grid");
  auto pn = b.param<int>("n");
  b.kernel("mark", CUDAG_KERNEL(mark_blocks), cudag::launch_over(pn, 256), slot.data(),
           seen.data());
  const cudag::binding binds[] = {cudag::bind("n", 1000)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  // The kernel has no bounds guard: the slots written are the blocks launched.
  auto expect_blocks = [&](unsigned blocks) {
    fill(slot, unwritten);
    fill(seen, 0u);
    e.launch(s.get());
    e.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(read_back(seen)[0], blocks);
    const auto h = read_back(slot);
    for (unsigned k = 0; k < max_blocks; ++k)
      ASSERT_EQ(h[k], k < blocks ? k + 1 : unwritten)
          << "slot " << k << " of " << blocks << " blocks";
  };
  ASSERT_NO_FATAL_FAILURE(expect_blocks(4));  // ceil(1000 / 256)
  EXPECT_EQ(e.rebind("n", 100), cudag::rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(1));
  EXPECT_EQ(e.rebind("n", 257), cudag::rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(2));
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(e.rebind("n", 256 * max_blocks), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(max_blocks));
  EXPECT_EQ(e.rebind("n", 512), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(2));
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
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FLOAT_EQ(read_back(a)[4], 2.0f * (1.0f + 4));
  fill(a, poison);
  e.update(make(10.0f, 3.0f), {});
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  auto h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 3.0f * (10.0f + i));
  fill(a, poison);
  EXPECT_FALSE(e.update_or_reinstantiate(make(20.0f, 0.5f), {})) << "same topology: updated";
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 0.5f * (20.0f + i));
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
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto unchanged = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(unchanged[i], 1.0f + i) << i;

  fill(a, poison);
  EXPECT_TRUE(e.update_or_reinstantiate(second.spec(), {}));
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 2.0f);
  ASSERT_NE(e.node_handle("work"), nullptr);
  cudaGraphNodeType type{};
  ASSERT_EQ(cudaGraphNodeGetType(e.node_handle("work"), &type), cudaSuccess);
  EXPECT_EQ(type, cudaGraphNodeTypeMemset) << "the re-instantiated graph's node";
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
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto ha = read_back(a), hc = read_back(c);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha[i], 1.0f + i);
    ASSERT_FLOAT_EQ(hc[i], 50.0f + i);
  }

  // Exec setters cannot reach a node inside a child graph: even with
  // per-node setters forced, the change goes through the template graph.
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  fill(a, poison);
  fill(c, poison);
  EXPECT_EQ(e.rebind("start", 70.0f), cudag::rebind_path::whole_graph_update);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto ha2 = read_back(a), hc2 = read_back(c);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(ha2[i], poison);
    ASSERT_FLOAT_EQ(hc2[i], 70.0f + i);
  }
}
