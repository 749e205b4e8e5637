// The spec exec's public surface beyond launch: node handles (the CUDA node
// of each declared node, of the declared kind, in the exec's own graph),
// native_graph and native_exec, upload, every rebind overload and what each
// returns, and the instantiate options as the executable graph sees them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "graph_memory_support.hpp"
#include "order_check.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr float poison = -4242.0f;

void launch_and_wait(cudag::exec& e, cudaStream_t s) {
  e.launch(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  e.synchronize(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace

TEST(ExecApi, NodeHandlesAreTheNodesOfTheNativeGraph) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> out(n), side(n);
  cudag::device_buffer<unsigned> take_branch(1);
  fill(out, poison);
  fill(side, poison);
  fill(take_branch, 1u);
  auto ev = cudag::make_event();
  std::atomic<int> host_runs{0};

  cudag::builder b("every_kind");
  auto po = b.param<float*>("out");
  auto pe = b.param<cudaEvent_t>("event");
  auto pc = b.param<const unsigned*>("choice");
  auto cond = b.condition("take");
  cudag::builder inner("inner");
  auto ipo = inner.param<float*>("out");
  inner.kernel("inner_double", CUDAG_KERNEL(scale), cudag::launch(1, n), ipo, 2.0f, n);
  cudag::builder body("body");  // uses the enclosing graph's parameter by handle
  body.kernel("times_ten", CUDAG_KERNEL(scale), cudag::launch(1, n), po, 10.0f, n);
  // Declared out of order on purpose; edges by reference and by name.
  auto maybe = b.if_then("maybe", cond, body.build());
  auto [alloc, tmp] = b.alloc<float>("tmp", n);
  auto drain = b.memcpy("drain", po, tmp, n * sizeof(float));
  auto set = b.memset("set_tmp", tmp, 1.5f, n);
  auto work = b.kernel("work", CUDAG_KERNEL(scale), cudag::launch(1, n), tmp, 2.0f, n);
  auto release = b.free("release", tmp);
  auto note = b.host("note", [&] { ++host_runs; });
  auto sub = b.child("sub", inner.build());
  auto lib = b.captured(
      "lib", "fill_iota",
      [](cudaStream_t s, float* p) { fill_iota<<<1, n, 0, s>>>(p, 3.0f, n); }, side.data());
  auto join = b.empty("join");
  auto rec = b.record("rec", pe);
  auto hold = b.wait("hold", pe);
  auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), cond, pc);
  b.chain(alloc, set, work, drain, release);
  b.edge("drain", "sub");
  b.edge(sub, maybe);
  b.edge(decide, maybe);
  b.edge(b.node("maybe"), join);
  b.edge(lib, join);
  join.precede(note, rec);
  b.edge(hold, decide);
  const cudag::graph_spec spec = b.build();

  const cudag::binding binds[] = {
      cudag::bind("out", out.data()), cudag::bind("event", ev.get()),
      cudag::bind("choice", static_cast<const unsigned*>(take_branch.data()))};
  auto e = cudag::instantiate(spec, binds);
  ASSERT_NE(e.native_exec(), nullptr);
  ASSERT_NE(e.native_graph(), nullptr);

  const std::vector<std::pair<std::string, cudaGraphNodeType>> kinds = {
      {"maybe", cudaGraphNodeTypeConditional}, {"tmp", cudaGraphNodeTypeMemAlloc},
      {"drain", cudaGraphNodeTypeMemcpy},      {"set_tmp", cudaGraphNodeTypeMemset},
      {"work", cudaGraphNodeTypeKernel},       {"release", cudaGraphNodeTypeMemFree},
      {"note", cudaGraphNodeTypeHost},         {"sub", cudaGraphNodeTypeGraph},
      {"lib", cudaGraphNodeTypeGraph},         {"join", cudaGraphNodeTypeEmpty},
      {"rec", cudaGraphNodeTypeEventRecord},   {"hold", cudaGraphNodeTypeWaitEvent},
      {"decide", cudaGraphNodeTypeKernel}};
  ASSERT_EQ(kinds.size(), spec.nodes.size());
  std::vector<std::string> names;
  std::vector<cudaGraphNode_t> handles;
  for (const auto& [name, type] : kinds) {
    const cudaGraphNode_t h = e.node_handle(name);
    ASSERT_NE(h, nullptr) << name;
    cudaGraphNodeType actual{};
    CUDAG_EXPECT_CUDA(cudaGraphNodeGetType(h, &actual));
    EXPECT_EQ(actual, type) << name;
    for (const cudaGraphNode_t other : handles) EXPECT_NE(h, other) << name << " shares a handle";
    names.push_back(name);
    handles.push_back(h);
  }
  // The declared edges, by the ids of `kinds`.
  auto id = [&](const char* name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const order_test::edge_list declared = {
      {id("tmp"), id("set_tmp")}, {id("set_tmp"), id("work")}, {id("work"), id("drain")},
      {id("drain"), id("release")}, {id("drain"), id("sub")},  {id("sub"), id("maybe")},
      {id("decide"), id("maybe")}, {id("maybe"), id("join")},  {id("lib"), id("join")},
      {id("join"), id("note")},    {id("join"), id("rec")},    {id("hold"), id("decide")}};
  ASSERT_NO_FATAL_FAILURE(
      order_test::expect_native_order(e.native_graph(), handles, declared, names));

  EXPECT_THROW((void)e.node_handle("missing"), cudag::error);
  EXPECT_THROW((void)e.node_handle("sub/inner_double"), cudag::error) << "not a top-level node";

  auto s = cudag::make_stream();
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  const auto h = read_back(out), hs = read_back(side);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(h[i], 1.5f * 2.0f * 2.0f * 10.0f) << i;  // set, work, sub, maybe
    ASSERT_FLOAT_EQ(hs[i], 3.0f + i) << i;
  }
  EXPECT_EQ(host_runs.load(), 1);
}

TEST(ExecApi, UploadThenLaunchOnAnotherStream) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  cudag::device_buffer<float> a(n);
  fill(a, poison);
  cudag::builder b("uploaded");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), px, ps, n);
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("start", 5.0f)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  e.upload(s1.get());
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(e.replay_count(), 0u) << "an upload is not a replay";
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s2.get()));
  auto h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 5.0f + i) << i;

  // Uploading after a rebind keeps the rebound value.
  EXPECT_EQ(e.rebind("start", 50.0f), cudag::rebind_path::node_setters);
  fill(a, poison);
  e.upload(s2.get());
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s2.get()));
  h = read_back(a);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 50.0f + i) << i;
  EXPECT_EQ(e.replay_count(), 2u);
}

TEST(ExecApi, EveryRebindOverload) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 128;
  cudag::device_buffer<float> a(n), c(n);
  fill(a, poison);
  fill(c, poison);
  cudag::builder b("overloads");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  (void)b.param<int>("unused");  // declared, read by no node
  b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), px, ps, n);
  const cudag::binding binds[] = {cudag::bind("x", a.data()), cudag::bind("start", 1.0f),
                                  cudag::bind("unused", 7)};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  auto expect_filled = [&](const cudag::device_buffer<float>& d, float start) {
    const auto h = read_back(d);
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], start + i) << i;
  };
  auto expect_poisoned = [&](const cudag::device_buffer<float>& d) {
    const auto h = read_back(d);
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], poison) << i;
  };

  // rebind(const binding&)
  EXPECT_EQ(e.rebind(cudag::bind("start", 2.0f)), cudag::rebind_path::node_setters);
  EXPECT_EQ(e.rebind(cudag::bind("start", 2.0f)), cudag::rebind_path::none) << "same value";
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_filled(a, 2.0f));

  // rebind_bytes(name, type, bytes, size)
  const float three = 3.0f;
  EXPECT_EQ(e.rebind_bytes("start", cudag::type_of<float>(), &three, sizeof three),
            cudag::rebind_path::node_setters);
  fill(a, poison);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_filled(a, 3.0f));

  // rebind(span<const binding>): two parameters of the same node in one call.
  const cudag::binding both[] = {cudag::bind("x", c.data()), cudag::bind("start", 9.0f)};
  EXPECT_EQ(e.rebind(both), cudag::rebind_path::node_setters);
  fill(a, poison);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_filled(c, 9.0f));
  ASSERT_NO_FATAL_FAILURE(expect_poisoned(a));

  // A parameter no node reads: nothing to update.
  EXPECT_EQ(e.rebind("unused", 8), cudag::rebind_path::none);
  EXPECT_EQ(e.rebind(std::span<const cudag::binding>{}), cudag::rebind_path::none);

  // Refused: wrong size, wrong type. The exec keeps computing the old values.
  const double wide = 4.0;
  EXPECT_THROW(e.rebind_bytes("start", cudag::type_of<float>(), &wide, sizeof wide), cudag::error);
  EXPECT_THROW(e.rebind(cudag::bind("start", 4.0)), cudag::error);
  EXPECT_THROW(e.rebind(cudag::bind("nope", 4.0f)), cudag::error);
  fill(c, poison);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_filled(c, 9.0f));
  ASSERT_NO_FATAL_FAILURE(expect_poisoned(a));
}

TEST(ExecApi, InstantiateOptionsReachTheExecutableGraph) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 64;
  cudag::device_buffer<float> out(n);
  int least = 0, greatest = 0;
  CUDAG_EXPECT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));

  auto make = [&] {
    cudag::builder b("options");
    auto po = b.param<float*>("out");
    // Allocated and never freed by the graph: only auto-free-on-launch
    // lets the graph be launched again.
    auto [alloc, tmp] = b.alloc<float>("tmp", n);
    cudag::launch_config config = cudag::launch(1, n);
    config.priority = greatest;
    auto f = b.kernel("fill", CUDAG_KERNEL(fill_iota), config, tmp, 2.0f, n);
    auto cp = b.memcpy("copy_out", po, tmp, n * sizeof(float));
    b.chain(alloc, f, cp);
    return b.build();
  };
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto s = cudag::make_stream(), upload_stream = cudag::make_stream();

  {
    auto plain = cudag::instantiate(make(), binds);
    unsigned long long flags = ~0ull;
    CUDAG_EXPECT_CUDA(cudaGraphExecGetFlags(plain.native_exec(), &flags));
    EXPECT_EQ(flags, 0ull);
  }

  cudag::instantiate_options options;
  options.auto_free_on_launch = true;
  options.use_node_priority = true;
  options.upload = true;
  options.upload_stream = upload_stream.get();
  auto e = cudag::instantiate(make(), binds, options);
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(upload_stream.get()));
  unsigned long long flags = 0;
  CUDAG_EXPECT_CUDA(cudaGraphExecGetFlags(e.native_exec(), &flags));
  EXPECT_NE(flags & cudaGraphInstantiateFlagAutoFreeOnLaunch, 0ull) << flags;
  // The driver leaves UseNodePriority out of cudaGraphExecGetFlags (H100, CUDA 13.0,
  // driver 580): engine_recording asserts the flag reaches instantiation.
  if (greatest != least) {
    cudaLaunchAttributeValue value{};
    CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(e.node_handle("fill"),
                                                      cudaLaunchAttributePriority, &value));
    EXPECT_EQ(value.priority, greatest);
  }
  for (int i = 0; i < 3; ++i) {
    fill(out, poison);
    ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get())) << "launch " << i;
    const auto h = read_back(out);
    for (int k = 0; k < n; ++k) ASSERT_FLOAT_EQ(h[k], 2.0f + k) << k;
  }
  // Auto-free frees a launch's allocation at the next launch: the last one's
  // is the program's to free (compute-sanitizer's leak check counts it).
  ASSERT_NO_THROW(cudag::testing::free_graph_allocation(e.buffer_address("tmp")));
}

// A graph-owned buffer left allocated after the launch (no free node) is
// read back through its address on the exec; with auto-free-on-launch the
// next launch frees and reallocates it at the same address.
TEST(ExecApi, GraphOwnedBufferIsReadBackByItsAddress) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  cudag::unique_stream s = cudag::make_stream();
  cudag::builder inner("inner");
  auto [scratch_node, scratch] = inner.alloc<float>("scratch", n);
  auto iota_inner = inner.kernel("iota", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), scratch, 100.0f, n);
  inner.edge(scratch_node, iota_inner);

  cudag::builder b("results");
  auto [alloc, result] = b.alloc<float>("result", n);
  auto iota = b.kernel("iota", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), result, 1.0f, n);
  auto twice = b.kernel("twice", CUDAG_KERNEL(scale), cudag::launch(1, n / 2), result + n / 2, 2.0f, n / 2);
  auto stage = b.child("stage", inner.build());
  b.chain(alloc, iota, twice, stage);
  cudag::instantiate_options options;
  options.auto_free_on_launch = true;
  auto e = cudag::instantiate(b.build(), {}, options);

  float* address = e.buffer(result);
  ASSERT_NE(address, nullptr);
  EXPECT_EQ(e.buffer(result + 8), address + 8);
  float* nested = static_cast<float*>(e.buffer_address("stage/scratch"));
  for (int round = 0; round < 2; ++round) {
    if (round > 0) {  // still allocated from the last launch: poison it (NaN)
      CUDAG_EXPECT_CUDA(cudaMemset(address, 0xFF, n * sizeof(float)));
      CUDAG_EXPECT_CUDA(cudaMemset(nested, 0xFF, n * sizeof(float)));
      // The launch stream does not wait for the legacy stream's memsets.
      CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());
    }
    ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get())) << "round " << round;
    std::vector<float> host(n, poison), inner_host(n, poison);
    CUDAG_EXPECT_CUDA(cudaMemcpy(host.data(), address, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDAG_EXPECT_CUDA(cudaMemcpy(inner_host.data(), nested, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; ++k) {
      const float expected = (1.0f + k) * (k >= n / 2 ? 2.0f : 1.0f);
      ASSERT_FLOAT_EQ(host[k], expected) << "round " << round << " element " << k;
      ASSERT_FLOAT_EQ(inner_host[k], 100.0f + k) << "round " << round << " element " << k;
    }
    EXPECT_EQ(e.buffer(result), address) << "the address is fixed for the exec's life";
  }
  // The last launch's allocations are the program's to free.
  ASSERT_NO_THROW(cudag::testing::free_graph_allocation(address));
  ASSERT_NO_THROW(cudag::testing::free_graph_allocation(nested));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// Instances of one lowered graph: each launches with its own buffers and
// size; rebinding one, by setters or by a whole-graph update through the
// shared template, leaves the other's values alone.
TEST(ExecApi, InstancesOfOneGraphRunWithTheirOwnValues) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 512;
  cudag::unique_stream s = cudag::make_stream();
  cudag::device_buffer<float> a(n), b(n), c(n);
  std::atomic<int> host_a{0}, host_b{0};
  cudag::builder g("instances");
  auto x = g.param<float*>("x");
  auto count = g.param<int>("n");
  auto start = g.param<float>("start");
  auto counter = g.param<std::atomic<int>*>("counter");
  auto iota = g.kernel("iota", CUDAG_KERNEL(fill_iota), cudag::launch_over(count, 128), x, start, count);
  auto twice = g.kernel("twice", CUDAG_KERNEL(scale), cudag::launch_over(count, 128), x, 2.0f, count);
  auto note = g.host("note", [](std::atomic<int>* c) { ++*c; }, counter);
  g.chain(iota, twice, note);
  const cudag::binding first[] = {cudag::bind("x", a.data()), cudag::bind("n", n),
                                  cudag::bind("start", 1.0f), cudag::bind("counter", &host_a)};
  auto ea = cudag::instantiate(g.build(), first);
  const cudag::binding second[] = {cudag::bind("x", b.data()), cudag::bind("n", n / 2),
                                   cudag::bind("counter", &host_b)};
  auto eb = ea.instance(second);
  ASSERT_EQ(eb.native_graph(), ea.native_graph());

  auto expect = [&](const cudag::device_buffer<float>& d, int written, float from, const char* what) {
    const auto h = read_back(d);
    for (int k = 0; k < n; ++k) {
      const float want = k < written ? 2.0f * (from + k) : poison;
      ASSERT_FLOAT_EQ(h[k], want) << what << " element " << k;
    }
  };
  fill(a, poison);
  fill(b, poison);
  fill(c, poison);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(ea, s.get()));
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(eb, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect(a, n, 1.0f, "instance a"));
  ASSERT_NO_FATAL_FAILURE(expect(b, n / 2, 1.0f, "instance b"));
  EXPECT_EQ(host_a.load(), 1);
  EXPECT_EQ(host_b.load(), 1);

  // b by setters, a by a whole-graph update through the shared template.
  EXPECT_EQ(eb.rebind("x", c.data()), cudag::rebind_path::node_setters);
  ea.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(ea.rebind("start", 10.0f), cudag::rebind_path::whole_graph_update);
  fill(a, poison);
  fill(b, poison);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(eb, s.get()));
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(ea, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect(c, n / 2, 1.0f, "instance b after its rebind"));
  ASSERT_NO_FATAL_FAILURE(expect(b, 0, 1.0f, "b's old buffer, left alone"));
  ASSERT_NO_FATAL_FAILURE(expect(a, n, 10.0f, "instance a after its whole update"));
  EXPECT_EQ(host_a.load(), 2);
  EXPECT_EQ(host_b.load(), 2);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// A spec with a WHILE loop added in place to a stream capture, between
// work captured before it and after it: the loop runs its rounds and the
// three stages run in stream order, every replay.
TEST(ExecApi, SpecWithAConditionalAddedToAStreamCapture) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  constexpr int rounds = 5;
  cudag::unique_stream s = cudag::make_stream();
  cudag::device_buffer<float> x(n);
  cudag::device_buffer<int> counter(1);
  cudag::builder loop_body("loop_body");
  cudag::builder b("middle");
  auto px = b.param<float*>("x");
  auto pc = b.param<int*>("counter");
  auto more = b.condition("more", 1);
  loop_body.kernel("count", CUDAG_KERNEL(count_and_continue), cudag::launch(1, 1), more, pc, rounds);
  auto twice = b.kernel("twice", CUDAG_KERNEL(scale), cudag::launch(1, n), px, 2.0f, n);
  auto loop = b.while_loop("loop", more, loop_body.build());
  b.edge(twice, loop);
  const cudag::binding binds[] = {cudag::bind("x", x.data()), cudag::bind("counter", counter.data())};

  cudaGraph_t raw = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  fill_iota<<<1, n, 0, s.get()>>>(x.data(), 1.0f, n);
  std::optional<cudag::graph_in_capture> inserted;
  try {
    inserted.emplace(cudag::add_to_capture(s.get(), b.build(), binds));
  } catch (...) {
    (void)cudaStreamEndCapture(s.get(), &raw);
    if (raw) (void)cudaGraphDestroy(raw);
    throw;
  }
  scale<<<1, n, 0, s.get()>>>(x.data(), 3.0f, n);
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &raw), cudaSuccess);
  cudag::unique_graph captured(raw);
  size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(captured.get(), nullptr, &count), cudaSuccess);
  EXPECT_EQ(count, 4u) << "iota, twice, loop, times three";
  cudag::unique_graph_exec e = cudag::instantiate_native(captured.get(), {});
  for (int replay = 0; replay < 2; ++replay) {
    fill(x, poison);
    fill(counter, 0);
    ASSERT_EQ(cudaGraphLaunch(e.get(), s.get()), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
    const auto h = read_back(x);
    for (int k = 0; k < n; ++k) ASSERT_FLOAT_EQ(h[k], 6.0f * (1.0f + k)) << "replay " << replay << " element " << k;
    EXPECT_EQ(read_back(counter)[0], rounds) << "replay " << replay;
  }
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

// A buffer one graph allocates and leaves allocated, read and freed by a
// second graph as an external buffer: the data reach the second graph's
// reader, and a rebind of the freed address is refused naming the free node.
TEST(ExecApi, ExternalBufferFromAnotherGraphIsReadAndFreed) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 256;
  cudag::unique_stream s = cudag::make_stream();
  cudag::device_buffer<float> out(n);
  fill(out, poison);

  cudag::builder producer("producer");
  auto [alloc, shared] = producer.alloc<float>("shared", n);
  auto iota = producer.kernel("iota", CUDAG_KERNEL(fill_iota), cudag::launch(1, n), shared, 5.0f, n);
  producer.edge(alloc, iota);
  auto ep = cudag::instantiate(producer.build(), {});
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(ep, s.get()));
  float* staging = ep.buffer(shared);  // still allocated: no free node in the producer

  cudag::builder b("consumer");
  auto ext = b.external_buffer<float>("staging");
  auto dst = b.param<float*>("out");
  auto twice = b.kernel("twice", CUDAG_KERNEL(scale), cudag::launch(1, n), ext, 2.0f, n);
  auto drain = b.memcpy("drain", dst, ext, n * sizeof(float));
  auto release = b.free("release", ext);
  b.chain(twice, drain, release);
  const cudag::binding binds[] = {cudag::bind("staging", staging), cudag::bind("out", out.data())};
  auto e = cudag::instantiate(b.build(), binds);
  ASSERT_NO_FATAL_FAILURE(launch_and_wait(e, s.get()));
  const auto h = read_back(out);
  for (int k = 0; k < n; ++k) ASSERT_FLOAT_EQ(h[k], 2.0f * (5.0f + k)) << k;
  try {
    (void)e.rebind("staging", out.data());
    FAIL() << "the freed external buffer was rebound";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "release");
  }
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}
