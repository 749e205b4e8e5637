// Footprint without a GPU: node counts with nested nodes, the estimate by a
// model, the peak of graph-owned buffers for chains and parallel branches,
// measure() calibrating against the recorder's memory model, and the seam
// lines it records.
#include <gtest/gtest.h>

#include <string>

#include "cudag/builder.hpp"
#include "cudag/footprint.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_recorder.hpp"
#include "engine/recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::lines;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

cudag::footprint_model flat_model(std::size_t fixed, std::size_t per_node) {
  cudag::footprint_model m;
  m.fixed_bytes = fixed;
  m.bytes_per_node.fill(per_node);
  return m;
}

/// inner: two empties; stage: a kernel and child 'inner'; top: a kernel,
/// child 'stage', an if/else with one memset in each body.
cudag::graph_spec nested() {
  cudag::builder inner("inner");
  auto a = inner.empty("a");
  auto b = inner.empty("b");
  inner.chain(a, b);

  cudag::builder stage("stage");
  auto x = stage.param<float*>("x");
  auto k = stage.kernel("k", &scale, cudag::launch_config{}, x, 1.0f, 4);
  auto c = stage.child("inner", inner.build());
  stage.chain(k, c);

  cudag::builder then_body("then");
  then_body.memset("clear", then_body.param<float*>("x"), 0, 16);
  cudag::builder else_body("else");
  else_body.memset("clear", else_body.param<float*>("x"), 0, 16);

  cudag::builder top("top");
  auto tx = top.param<float*>("x");
  auto cond = top.condition("go");
  auto first = top.kernel("first", &scale, cudag::launch_config{}, tx, 2.0f, 4);
  auto s = top.child("stage", stage.build());
  auto branch = top.if_else("branch", cond, then_body.build(), else_body.build());
  top.chain(first, s, branch);
  return top.build();
}

TEST(Footprint, CountsNestedNodesOfEveryKind) {
  const cudag::graph_spec spec = nested();
  const cudag::footprint f = cudag::estimate_footprint(spec, flat_model(1000, 10));
  EXPECT_EQ(f.nodes, spec.total_nodes());
  EXPECT_EQ(f.nodes, 9u);  // first, stage{k, inner{a, b}}, branch{clear | clear}
  EXPECT_EQ(f.count(cudag::node_kind::kernel), 2u);
  EXPECT_EQ(f.count(cudag::node_kind::child), 2u);
  EXPECT_EQ(f.count(cudag::node_kind::empty), 2u);
  EXPECT_EQ(f.count(cudag::node_kind::memset), 2u);
  EXPECT_EQ(f.count(cudag::node_kind::conditional), 1u);
  EXPECT_EQ(f.graphs, 5u);  // top, stage, inner, then, else
  EXPECT_EQ(f.exec_bytes, 1000u + 9u * 10u);
  EXPECT_FALSE(f.model_measured);
}

TEST(Footprint, TheEstimateWeighsEachKindByTheModel) {
  cudag::footprint_model m = flat_model(500, 0);
  m.bytes_per_node[static_cast<std::size_t>(cudag::node_kind::kernel)] = 3000;
  m.bytes_per_node[static_cast<std::size_t>(cudag::node_kind::empty)] = 7;
  m.bytes_per_node[static_cast<std::size_t>(cudag::node_kind::conditional)] = 100000;
  const cudag::footprint f = cudag::estimate_footprint(nested(), m);
  EXPECT_EQ(f.exec_bytes, 500u + 2u * 3000u + 2u * 7u + 100000u);
  const std::string text = f.summary("top");
  EXPECT_NE(text.find("graph 'top': 9 nodes (kernel 2, memset 2, child 2, empty 2, conditional 1)"),
            std::string::npos)
      << text;
}

TEST(Footprint, TheDefaultModelSaysItIsNotMeasured) {
  const cudag::footprint_model m = cudag::footprint_model::default_model();
  EXPECT_FALSE(m.measured);
  EXPECT_GT(m.per_node(cudag::node_kind::kernel), 0u);
  EXPECT_GT(m.fixed_bytes, 0u);
  const std::string table = m.table();
  EXPECT_NE(table.find("default model: not measured"), std::string::npos) << table;
  EXPECT_NE(table.find("kernel"), std::string::npos) << table;
  // A 200-kernel chain comes out near the 0.6 MiB a raw exec takes on an H100.
  cudag::builder b("chain");
  auto x = b.param<float*>("x");
  cudag::node_ref last = b.kernel("k0", &scale, cudag::launch_config{}, x, 1.0f, 1);
  for (int i = 1; i < 200; ++i) {
    auto k = b.kernel("k" + std::to_string(i), &scale, cudag::launch_config{}, x, 1.0f, 1);
    b.edge(last, k);
    last = k;
  }
  const std::size_t bytes = cudag::estimate_footprint(b.build()).exec_bytes;
  EXPECT_GT(bytes, 500u * 1024u);
  EXPECT_LT(bytes, 750u * 1024u);
}

// ---------------------------------------------------------- allocation peak --
TEST(Footprint, ABufferChainPeaksAtItsLargestBuffer) {
  // a(100) -> free a -> b(300) -> free b -> c(200) -> free c
  cudag::builder g("chain");
  auto a = g.alloc<char>("a", 100);
  auto fa = g.free("free_a", a.buffer);
  auto b = g.alloc<char>("b", 300);
  auto fb = g.free("free_b", b.buffer);
  auto c = g.alloc<char>("c", 200);
  auto fc = g.free("free_c", c.buffer);
  g.chain(a.node, fa, b.node, fb, c.node, fc);
  const cudag::footprint f = cudag::estimate_footprint(g.build());
  EXPECT_EQ(f.allocation_peak_bytes, 300u);
  EXPECT_EQ(f.allocation_total_bytes, 600u);
}

TEST(Footprint, ParallelBranchesAddUp) {
  // Two independent branches, each alloc -> kernel -> free: both can be live.
  cudag::builder g("parallel");
  auto a = g.alloc<float>("a", 100);
  auto b = g.alloc<float>("b", 50);
  auto ka = g.kernel("ka", &scale, cudag::launch_config{}, a.buffer, 1.0f, 100);
  auto kb = g.kernel("kb", &scale, cudag::launch_config{}, b.buffer, 1.0f, 50);
  auto fa = g.free("free_a", a.buffer);
  auto fb = g.free("free_b", b.buffer);
  g.chain(a.node, ka, fa);
  g.chain(b.node, kb, fb);
  const cudag::footprint f = cudag::estimate_footprint(g.build());
  EXPECT_EQ(f.allocation_peak_bytes, 600u);
  EXPECT_EQ(f.allocation_total_bytes, 600u);
}

TEST(Footprint, APathFromAFreeToAnAllocLetsThemShare) {
  // a(5) -> free a -> join -> c(20); b(10) in parallel with all of it:
  // b with c (30) is the peak, not a + b + c (35) nor a + b (15).
  cudag::builder g("mixed");
  auto a = g.alloc<char>("a", 5);
  auto fa = g.free("free_a", a.buffer);
  auto join = g.empty("join");
  auto c = g.alloc<char>("c", 20);
  auto fc = g.free("free_c", c.buffer);
  g.chain(a.node, fa, join, c.node, fc);
  auto b = g.alloc<char>("b", 10);
  auto fb = g.free("free_b", b.buffer);
  g.chain(b.node, fb);
  EXPECT_EQ(cudag::estimate_footprint(g.build()).allocation_peak_bytes, 30u);
}

TEST(Footprint, TheLargestAntichainIsNotTheGreedyOne) {
  // x(10) and y(10) parallel, both freed before big(15); z(12) after x's
  // free only, parallel to y. Live sets: {x, y} 20, {y, z} 22, {big} 15,
  // {z, big}? no: big waits for y's free, z's free does not precede big,
  // so {z, big} = 27 is possible.
  cudag::builder g("antichain");
  auto x = g.alloc<char>("x", 10);
  auto fx = g.free("free_x", x.buffer);
  auto y = g.alloc<char>("y", 10);
  auto fy = g.free("free_y", y.buffer);
  auto z = g.alloc<char>("z", 12);
  auto fz = g.free("free_z", z.buffer);
  auto big = g.alloc<char>("big", 15);
  auto fbig = g.free("free_big", big.buffer);
  g.chain(x.node, fx, z.node, fz);
  g.chain(y.node, fy);
  big.node.after(fx, fy);
  g.chain(big.node, fbig);
  EXPECT_EQ(cudag::estimate_footprint(g.build()).allocation_peak_bytes, 27u);
  // With z's free before big, {z, big} is gone: {y, z} = 22 is the peak.
  cudag::builder h("antichain2");
  auto x2 = h.alloc<char>("x", 10);
  auto fx2 = h.free("free_x", x2.buffer);
  auto y2 = h.alloc<char>("y", 10);
  auto fy2 = h.free("free_y", y2.buffer);
  auto z2 = h.alloc<char>("z", 12);
  auto fz2 = h.free("free_z", z2.buffer);
  auto big2 = h.alloc<char>("big", 15);
  auto fbig2 = h.free("free_big", big2.buffer);
  h.chain(x2.node, fx2, z2.node, fz2);
  h.chain(y2.node, fy2);
  big2.node.after(fz2, fy2);
  h.chain(big2.node, fbig2);
  EXPECT_EQ(cudag::estimate_footprint(h.build()).allocation_peak_bytes, 22u);
}

TEST(Footprint, AnUnfreedBufferStaysLiveToTheEnd) {
  // keep(40) is never freed: it overlaps a later a(30) -> free a.
  cudag::builder g("unfreed");
  auto keep = g.alloc<char>("keep", 40);
  auto a = g.alloc<char>("a", 30);
  auto fa = g.free("free_a", a.buffer);
  g.chain(keep.node, a.node, fa);
  EXPECT_EQ(cudag::estimate_footprint(g.build()).allocation_peak_bytes, 70u);
}

TEST(Footprint, AChildGraphsBuffersCountAsOneBlockOfItsPeak) {
  // child: t1(64) -> free -> t2(32) -> free: its peak 64, freed inside.
  cudag::builder inner("inner");
  auto t1 = inner.alloc<char>("t1", 64);
  auto f1 = inner.free("free_t1", t1.buffer);
  auto t2 = inner.alloc<char>("t2", 32);
  auto f2 = inner.free("free_t2", t2.buffer);
  inner.chain(t1.node, f1, t2.node, f2);
  // top: a(100) -> child -> free a; b(8) after the child.
  cudag::builder top("top");
  auto a = top.alloc<char>("a", 100);
  auto c = top.child("stage", inner.build());
  auto fa = top.free("free_a", a.buffer);
  auto b = top.alloc<char>("b", 8);
  auto fb = top.free("free_b", b.buffer);
  top.chain(a.node, c, fa);
  top.chain(c, b.node, fb);
  const cudag::footprint f = cudag::estimate_footprint(top.build());
  EXPECT_EQ(f.allocation_total_bytes, 204u);
  // a with the child's 64 (164), or a with b (108): 164.
  EXPECT_EQ(f.allocation_peak_bytes, 164u);
}

// ------------------------------------------------------------- measuring --
TEST(FootprintMeasure, RecoversTheRecordersModelForEveryKind) {
  cudag::native::recorder rec;
  rec.set_exec_memory(50000, 1);
  rec.set_node_memory("add_kernel_node", 2000);
  rec.set_node_memory("add_memset_node", 300);
  rec.set_node_memory("add_memcpy_node", 400);
  rec.set_node_memory("add_host_node", 500);
  rec.set_node_memory("add_empty_node", 60);
  rec.set_node_memory("add_node", 700);  // moved children and conditionals
  rec.set_node_memory("add_event_record_node", 800);
  rec.set_node_memory("add_event_wait_node", 900);
  rec.set_node_memory("add_mem_alloc_node", 110);
  rec.set_node_memory("add_mem_free_node", 90);
  cudag::footprint_model::measure_options o;
  o.nodes = 64;
  o.kernel = reinterpret_cast<const void*>(&scale);
  const cudag::footprint_model m = cudag::footprint_model::measure(0, o);
  using cudag::node_kind;
  EXPECT_TRUE(m.measured);
  EXPECT_EQ(m.device, 0);
  EXPECT_EQ(m.nodes_measured, 64u);
  EXPECT_EQ(m.fixed_bytes, 50000u);
  EXPECT_EQ(m.per_node(node_kind::kernel), 2000u);
  EXPECT_EQ(m.per_node(node_kind::memset), 300u);
  EXPECT_EQ(m.per_node(node_kind::memcpy), 400u);
  EXPECT_EQ(m.per_node(node_kind::host), 500u);
  EXPECT_EQ(m.per_node(node_kind::empty), 60u);
  EXPECT_EQ(m.per_node(node_kind::child), 700u);
  EXPECT_EQ(m.per_node(node_kind::captured), 700u);
  EXPECT_EQ(m.per_node(node_kind::conditional), 700u);
  EXPECT_EQ(m.per_node(node_kind::event_record), 800u);
  EXPECT_EQ(m.per_node(node_kind::event_wait), 900u);
  EXPECT_EQ(m.per_node(node_kind::mem_alloc), 100u);  // a pair, halved
  EXPECT_EQ(m.per_node(node_kind::mem_free), 100u);
  EXPECT_EQ(m.granularity_bytes, 50000u);  // the empty graph: the smallest drop
  // Everything it made went again, graph memory trimmed after each graph.
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_EQ(rec.exec_memory_in_use(), 0u);
  EXPECT_EQ(rec.graph_memory_reserved(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << rec.misuse().front();
  EXPECT_NE(m.table().find("measured on device 0"), std::string::npos) << m.table();
}

TEST(FootprintMeasure, RecordsItsSeamCalls) {
  cudag::native::recorder rec;
  rec.set_exec_memory(1000, 10);
  cudag::footprint_model::measure_options o;
  o.nodes = 2;
  o.kernel = reinterpret_cast<const void*>(&scale);
  (void)cudag::footprint_model::measure(0, o);
  const std::string calls = lines(rec.calls());
  EXPECT_EQ(rec.calls_starting("event_create").size(), 1u) << calls;
  EXPECT_EQ(rec.calls_starting("event_destroy").size(), 1u) << calls;
  // 11 graphs: empty, each of 9 kinds but captured (as child), alloc/free pairs.
  EXPECT_EQ(rec.calls_starting("instantiate").size(), 11u) << calls;
  EXPECT_EQ(rec.calls_starting("upload").size(), 11u) << calls;
  EXPECT_EQ(rec.calls_starting("mem_get_info").size(), 22u) << calls;
  // One trim after each graph, and one when the kept graphs are gone.
  EXPECT_EQ(rec.calls_starting("device_graph_mem_trim device=0").size(), 12u) << calls;
  EXPECT_EQ(rec.calls_starting("device_get_graph_mem_attribute device=0 reserved_current").size(),
            22u)
      << calls;
  // The memset graph: its buffer's 4096 bytes mapped by the upload, read as reserved.
  EXPECT_NE(calls.find("device_get_graph_mem_attribute device=0 reserved_current -> 4096"),
            std::string::npos)
      << calls;
  EXPECT_NE(calls.find("device_graph_mem_trim device=0 -> released=4096"), std::string::npos)
      << calls;
}

TEST(FootprintMeasure, AFailingCallThrowsNamingItAndLeaksNothing) {
  cudag::native::recorder rec;
  rec.fail_next("mem_get_info", cudaErrorUnknown);
  cudag::footprint_model::measure_options o;
  o.nodes = 4;
  o.kernel = reinterpret_cast<const void*>(&scale);
  try {
    (void)cudag::footprint_model::measure(0, o);
    ADD_FAILURE() << "no throw";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.call(), "cudaMemGetInfo");
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_EQ(rec.calls_starting("event_destroy").size(), 1u);
}

TEST(FootprintMeasure, InstantiateAndMeasureReadsTheDropAndTheGraphMemory) {
  cudag::native::recorder rec;
  rec.set_exec_memory(1000, 100);
  cudag::builder b("measured");
  auto x = b.param<float*>("x");
  auto buf = b.alloc<float>("scratch", 1024);
  auto k = b.kernel("k", &scale, cudag::launch_config{}, buf.buffer, 1.0f, 1024);
  auto f = b.free("free_scratch", buf.buffer);
  auto k2 = b.kernel("k2", &scale, cudag::launch_config{}, x, 1.0f, 1024);
  b.chain(buf.node, k, f, k2);
  auto stream = cudag::make_stream();
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  {
    auto [e, used] = cudag::instantiate_and_measure(b.build(), binds, stream.get());
    EXPECT_EQ(used.device_bytes, 1000u + 4u * 100u + 4096u);
    EXPECT_EQ(used.graph_reserved_bytes, 4096u);
    EXPECT_EQ(used.exec_bytes(), 1400u);
    EXPECT_EQ(used.graph_after.reserved_bytes, 4096u);
    EXPECT_EQ(used.graph_after.used_bytes, 4096u);
    EXPECT_EQ(cudag::graph_memory(0).used_bytes, 4096u);
  }
  // Destroyed: the exec's memory is back, its graph memory reserved until a trim.
  EXPECT_EQ(rec.exec_memory_in_use(), 0u);
  EXPECT_EQ(cudag::graph_memory(0).reserved_bytes, 4096u);
  EXPECT_EQ(cudag::graph_memory(0).used_bytes, 0u);
  ASSERT_EQ(cudaSuccess, cudag::native::api().device_graph_mem_trim(0));
  EXPECT_EQ(cudag::graph_memory(0).reserved_bytes, 0u);
  EXPECT_EQ(cudag::device_memory_free(), std::size_t{80} << 30);
}

}  // namespace
