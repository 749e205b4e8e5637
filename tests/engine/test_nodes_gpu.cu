// Every node kind lowered, instantiated, launched, with its effect checked.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "graph_memory_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr float poison = -12345.0f;

void launch_and_wait(cudag::exec& e, cudaStream_t s) {
  e.launch(s);
  e.synchronize(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

TEST(EngineNodes, KernelChainComputesScaledAxpy) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 1000;
  cudag::device_buffer<float> x(n), y(n);
  upload(y, std::vector<float>(n, poison));

  cudag::builder b("saxpy");
  auto px = b.param<float*>("x");
  auto py = b.param<float*>("y");
  auto pn = b.param<int>("n");
  auto fx = b.kernel("fill_x", CUDAG_KERNEL(fill_iota), cudag::launch_over(pn, 128), px, 1.0f, pn);
  auto fy = b.kernel("fill_y", CUDAG_KERNEL(fill_iota), cudag::launch_over(pn, 128), py, 10.0f, pn);
  auto sc = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch_over(pn, 128), px, 2.0f, pn);
  auto ax = b.kernel("axpy", CUDAG_KERNEL(axpy), cudag::launch_over(pn, 128), px, py, 3.0f, pn);
  b.chain(fx, sc, ax);
  b.edge(fy, ax);

  const cudag::binding binds[] = {cudag::bind("x", x.data()), cudag::bind("y", y.data()),
                                  cudag::bind("n", n)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  launch_and_wait(e, s.get());
  const auto hy = read_back(y);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(hy[i], 3.0f * 2.0f * (1.0f + i) + (10.0f + i)) << i;
  EXPECT_EQ(e.replay_count(), 1u);
}

TEST(EngineNodes, MemsetOfEachElementSizeAnd2D) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<std::uint8_t> bytes(64);
  cudag::device_buffer<std::uint16_t> halves(64);
  cudag::device_buffer<std::uint32_t> words(64);
  constexpr std::size_t pitch = 32, width = 8, height = 4;
  cudag::device_buffer<std::uint32_t> plane(pitch / 4 * height);
  upload(bytes, std::vector<std::uint8_t>(64, 0xEE));
  upload(halves, std::vector<std::uint16_t>(64, 0xEEEE));
  upload(words, std::vector<std::uint32_t>(64, 0xEEEEEEEE));
  upload(plane, std::vector<std::uint32_t>(pitch / 4 * height, 0xEEEEEEEE));

  cudag::builder b("memsets");
  b.memset("bytes", bytes.data(), std::uint8_t{0x5A}, 40);
  b.memset("halves", halves.data(), std::uint16_t{0x1234}, 40);
  b.memset("words", words.data(), 0xCAFEF00Du, 40);
  b.memset_2d("plane", plane.data(), pitch, 0x01020304u, width / 2, height);
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  launch_and_wait(e, s.get());

  const auto hb = read_back(bytes);
  const auto hh = read_back(halves);
  const auto hw = read_back(words);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(hb[i], i < 40 ? 0x5A : 0xEE) << i;
    EXPECT_EQ(hh[i], i < 40 ? 0x1234 : 0xEEEE) << i;
    EXPECT_EQ(hw[i], i < 40 ? 0xCAFEF00Du : 0xEEEEEEEEu) << i;
  }
  const auto hp = read_back(plane);
  for (std::size_t row = 0; row < height; ++row)
    for (std::size_t col = 0; col < pitch / 4; ++col)
      EXPECT_EQ(hp[row * pitch / 4 + col], col < width / 2 ? 0x01020304u : 0xEEEEEEEEu)
          << row << "," << col;
}

TEST(EngineNodes, MemcpyOfEveryDirection) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  std::vector<float> source(n), sink(n, poison);
  std::iota(source.begin(), source.end(), 7.0f);
  cudag::device_buffer<float> a(n), c(n);
  upload(a, std::vector<float>(n, poison));
  upload(c, std::vector<float>(n, poison));

  cudag::builder b("copies");
  auto h2d = b.memcpy("h2d", a.data(), source.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  auto d2d = b.memcpy("d2d", c.data(), a.data(), n * sizeof(float), cudaMemcpyDeviceToDevice);
  auto sc = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, n), c.data(), 2.0f, n);
  auto d2h = b.memcpy("d2h", sink.data(), c.data(), n * sizeof(float));  // cudaMemcpyDefault
  b.chain(h2d, d2d, sc, d2h);
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  launch_and_wait(e, s.get());
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(sink[i], 2.0f * (7.0f + i)) << i;
}

TEST(EngineNodes, HostNodeRunsAfterItsDependencies) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> value(1);
  int host_copy = -1;
  std::atomic<int> seen{-1};
  std::atomic<int> runs{0};

  cudag::builder b("host");
  auto w = b.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), value.data(), 4242);
  auto cp = b.memcpy("to_host", &host_copy, value.data(), sizeof(int), cudaMemcpyDeviceToHost);
  auto h = b.host(
      "observe",
      [&](const int* copy, int bias) {
        seen = *copy + bias;
        ++runs;
      },
      static_cast<const int*>(&host_copy), 8);
  b.chain(w, cp, h);
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  for (int i = 0; i < 3; ++i) launch_and_wait(e, s.get());
  EXPECT_EQ(seen.load(), 4250);
  EXPECT_EQ(runs.load(), 3);
}

TEST(EngineNodes, HostNodeExceptionIsRethrownWithTheNodeName) {
  CUDAG_REQUIRE_GPU();
  cudag::builder b("throwing");
  b.host("explode", [] { throw std::runtime_error("bad input 17"); });
  auto e = cudag::instantiate(b.build(), {});
  auto s = cudag::make_stream();
  e.launch(s.get());
  try {
    e.synchronize(s.get());
    FAIL() << "expected the host node's exception";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "explode");
    EXPECT_NE(std::string(err.what()).find("bad input 17"), std::string::npos) << err.what();
  }
  // The exec stays usable: the failure was consumed, the next replay runs.
  e.launch(s.get());
  EXPECT_THROW(e.synchronize(s.get()), cudag::error);
}

TEST(EngineNodes, ChildGraphAndEmptyNode) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> x(n);
  upload(x, std::vector<float>(n, poison));

  cudag::builder inner("inner");
  auto px = inner.param<float*>("x");
  auto f = inner.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), px, 5.0f, n);
  auto sc = inner.kernel("triple", CUDAG_KERNEL(scale), cudag::launch(1, n), px, 3.0f, n);
  inner.edge(f, sc);

  cudag::builder outer("outer");
  auto ox = outer.param<float*>("x");
  auto start = outer.empty("start");
  auto child = outer.child("stage", inner.build());
  auto after = outer.kernel("halve", CUDAG_KERNEL(scale), cudag::launch(1, n), ox, 0.5f, n);
  outer.chain(start, child, after);
  const cudag::binding binds[] = {cudag::bind("x", x.data())};
  auto e = cudag::instantiate(outer.build(), binds);
  auto s = cudag::make_stream();
  launch_and_wait(e, s.get());
  const auto hx = read_back(x);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(hx[i], 1.5f * (5.0f + i)) << i;
}

TEST(EngineNodes, EventRecordAndWaitAcrossTwoGraphsOnTwoStreams) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> slot(1);
  cudag::device_buffer<int> observed(1);
  upload(slot, std::vector<int>{-1});
  upload(observed, std::vector<int>{-1});
  auto ready = cudag::make_event();

  // The producer is slow (30 ms): a consumer that did not wait would copy
  // the -1 (test_events_gpu.cu checks record and wait one at a time).
  cudag::builder producer("producer");
  auto spin = producer.kernel("write", CUDAG_KERNEL(spin_then_write), cudag::launch(1, 1),
                              slot.data(), 77, 30);
  auto rec = producer.record("ready", ready.get());
  producer.edge(spin, rec);

  cudag::builder consumer("consumer");
  auto wt = consumer.wait("wait_ready", ready.get());
  auto copy = consumer.memcpy("copy", observed.data(), slot.data(), sizeof(int));
  consumer.edge(wt, copy);

  auto p = cudag::instantiate(producer.build(), {});
  auto c = cudag::instantiate(consumer.build(), {});
  auto s1 = cudag::make_stream();
  auto s2 = cudag::make_stream();
  p.launch(s1.get());
  c.launch(s2.get());
  c.synchronize(s2.get());
  p.synchronize(s1.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(read_back(observed)[0], 77);
}

TEST(EngineNodes, AllocKernelFreeReplayedManyTimes) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 512;
  cudag::device_buffer<float> out(n);
  upload(out, std::vector<float>(n, poison));

  cudag::builder b("scratch");
  auto po = b.param<float*>("out");
  auto [alloc, tmp] = b.alloc<float>("tmp", n);
  auto fill = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(4, 128), tmp, 3.0f, n);
  auto sc = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(4, 128), tmp, 2.0f, n);
  auto copy = b.memcpy("copy_out", po, tmp, n * sizeof(float));
  auto release = b.free("free_tmp", tmp);
  b.chain(alloc, fill, sc, copy, release);
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (int i = 0; i < 50; ++i) e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto h = read_back(out);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 2.0f * (3.0f + i)) << i;
  EXPECT_EQ(e.replay_count(), 50u);
}

TEST(EngineNodes, CapturedWorkBecomesAChildGraph) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 128;
  cudag::device_buffer<float> x(n);
  upload(x, std::vector<float>(n, poison));
  cudag::builder b("captured");
  auto px = b.param<float*>("x");
  b.captured(
      "library_calls", "fill+scale",
      [](cudaStream_t s, float* p) {
        fill_iota<<<1, n, 0, s>>>(p, 1.0f, n);
        scale<<<1, n, 0, s>>>(p, 4.0f, n);
      },
      px);
  const cudag::binding binds[] = {cudag::bind("x", x.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  launch_and_wait(e, s.get());
  const auto h = read_back(x);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 4.0f * (1.0f + i)) << i;
}

TEST(EngineNodes, UnboundParameterIsRefusedBeforeAnyCudaCall) {
  CUDAG_REQUIRE_GPU();
  cudag::builder b("unbound");
  auto px = b.param<float*>("x");
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, 1), px, 1.0f, 1);
  try {
    (void)cudag::instantiate(b.build(), {});
    FAIL() << "expected an error for the unbound parameter";
  } catch (const cudag::error& err) {
    EXPECT_NE(std::string(err.what()).find("'x'"), std::string::npos) << err.what();
  }
}

TEST(EngineNodes, ChildWithAllocAndFreeGoesInByOwnershipMove) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 96;
  cudag::device_buffer<float> out(n);
  upload(out, std::vector<float>(n, poison));
  cudag::builder outer("outer");
  auto po = outer.param<float*>("out");
  cudag::builder inner("scratch_user");
  auto [alloc, tmp] = inner.alloc<float>("tmp", n);
  auto f = inner.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), tmp, 9.0f, n);
  auto cp = inner.memcpy("copy_out", po, tmp, n * sizeof(float));
  auto fr = inner.free("free_tmp", tmp);
  inner.chain(alloc, f, cp, fr);
  outer.child("stage", inner.build());
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto e = cudag::instantiate(outer.build(), binds);
  auto s = cudag::make_stream();
  for (int i = 0; i < 5; ++i) e.launch(s.get());
  e.synchronize(s.get());
  const auto h = read_back(out);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 9.0f + i) << i;
}

TEST(EngineNodes, InstantiateOptionsAndDriverPicture) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> out(n);
  upload(out, std::vector<float>(n, poison));
  cudag::builder b("options");
  auto po = b.param<float*>("out");
  // Allocated and never freed by the graph: auto-free-on-launch frees it
  // before the next launch, so replays do not fail with an allocation error.
  auto [alloc, tmp] = b.alloc<float>("tmp", n);
  cudag::launch_config config = cudag::launch(1, n);
  config.priority = 1;
  auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), config, tmp, 2.0f, n);
  auto cp = b.memcpy("copy_out", po, tmp, n * sizeof(float));
  b.chain(alloc, f, cp);
  auto s = cudag::make_stream();
  cudag::instantiate_options options;
  options.auto_free_on_launch = true;
  options.use_node_priority = true;
  options.upload = true;
  options.upload_stream = s.get();
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto e = cudag::instantiate(b.build(), binds, options);
  for (int i = 0; i < 3; ++i) e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FLOAT_EQ(read_back(out)[10], 12.0f);
  ASSERT_NO_THROW(cudag::testing::free_graph_allocation(e.buffer(tmp)));  // the last launch's, ours to free
  const std::string dot = e.driver_dot();
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("MEM_ALLOC"), std::string::npos) << dot.substr(0, 400);
}

// Library calls captured into a conditional body: the IF body runs them
// when a kernel sets the condition from data, and skips them otherwise.
TEST(EngineNodes, CapturedWorkFillsAConditionalBody) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 128;
  cudag::device_buffer<float> x(n);
  cudag::device_buffer<unsigned> take(1);
  cudag::builder body("body");
  cudag::builder b("guarded");
  auto px = b.param<float*>("x");
  auto pt = b.param<const unsigned*>("take");
  auto when = b.condition("when");
  body.captured(
      "library_calls", "fill+scale",
      [](cudaStream_t s, float* p) {
        fill_iota<<<1, n, 0, s>>>(p, 1.0f, n);
        scale<<<1, n, 0, s>>>(p, 4.0f, n);
      },
      px);
  auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), when, pt);
  auto guarded = b.if_then("guarded", when, body.build());
  b.edge(decide, guarded);
  const cudag::binding binds[] = {cudag::bind("x", x.data()), cudag::bind("take", take.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (const unsigned taken : {1u, 0u}) {
    upload(x, std::vector<float>(n, poison));
    upload(take, std::vector<unsigned>{taken});
    launch_and_wait(e, s.get());
    const auto h = read_back(x);
    for (int i = 0; i < n; ++i)
      ASSERT_FLOAT_EQ(h[i], taken ? 4.0f * (1.0f + i) : poison) << "taken " << taken << " element " << i;
  }
}
