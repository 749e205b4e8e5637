// Many executable graphs of one lowered graph (exec::instance), checked
// without a GPU: the template is instantiated again with the new values set
// on it first, nothing is lowered again; each instance rebinds on its own;
// a whole-graph update through a shared template first sends every node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::lines;
using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::dev_z;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  rec.name_pointer(dev_z, "z");
}

/// clear -> work (reads x, grid from n) -> check (host, reads x)
cudag::graph_spec pipeline(std::vector<const float*>* seen) {
  cudag::builder b("pipeline");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  auto clear = b.memset("clear", x, 0, 64);
  auto work = b.kernel("work", &scale, cudag::launch_over(n, 256), x, 2.0f, n);
  auto report = b.host("report", [seen](float* p) { if (seen) seen->push_back(p); }, x);
  b.chain(clear, work, report);
  return b.build();
}

TEST(ExecInstances, AnInstanceSetsTheTemplateAndInstantiatesItAgainWithoutLowering) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    const cudag::binding first[] = {cudag::bind("x", dev_x), cudag::bind("n", 1000)};
    auto a = cudag::instantiate(pipeline(nullptr), first);
    rec.clear();
    const cudag::binding second[] = {cudag::bind("x", dev_y)};
    auto b = a.instance(second);
    // Every node's values (the new x, the old n) go onto the template, and
    // the template is instantiated again; no graph is created or added to.
    const std::string calls = lines(rec.calls());
    EXPECT_EQ(calls.find("graph_create"), std::string::npos) << calls;
    EXPECT_EQ(calls.find("add_"), std::string::npos) << calls;
    ASSERT_EQ(rec.calls().size(), 4u) << calls;
    EXPECT_EQ(rec.calls()[0],
              "memset_node_set_params n1 dst=y value=0x0 element=4 width=64 height=1 pitch=256");
    EXPECT_EQ(rec.calls()[1],
              "kernel_node_set_params n2 scale grid=(4,1,1) block=(256,1,1) shared=0 args=[y, "
              "0x40000000, 0x3e8]");
    EXPECT_EQ(rec.calls()[2].rfind("host_node_set_params n3", 0), 0u) << rec.calls()[2];
    EXPECT_EQ(rec.calls()[3], "instantiate g1 flags=0 -> x2");
    EXPECT_EQ(b.native_graph(), a.native_graph());
    EXPECT_NE(b.native_exec(), a.native_exec());
    EXPECT_EQ(b.node_handle("work"), a.node_handle("work"));

    // Each rebinds its own exec, by exec setters.
    rec.clear();
    EXPECT_EQ(b.rebind("n", 10), cudag::rebind_path::node_setters);
    EXPECT_EQ(lines(rec.calls()),
              "exec_kernel_node_set_params x2 n2 scale grid=(1,1,1) block=(256,1,1) shared=0 "
              "args=[y, 0x40000000, 0xa]\n");
    rec.clear();
    EXPECT_EQ(a.rebind("x", dev_z), cudag::rebind_path::node_setters);
    const std::string a_calls = lines(rec.calls());
    EXPECT_EQ(a_calls.find("x2"), std::string::npos) << a_calls;
    EXPECT_NE(a_calls.find("exec_kernel_node_set_params x1 n2 scale grid=(4,1,1) block=(256,1,1) "
                           "shared=0 args=[z, 0x40000000, 0x3e8]"),
              std::string::npos)
        << a_calls;

    // A whole-graph update of `a` through the shared template first sends
    // every node with a's own values (the template held b's), then updates.
    rec.clear();
    a.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    EXPECT_EQ(a.rebind("n", 512), cudag::rebind_path::whole_graph_update);
    const std::vector<std::string> whole = rec.calls();
    ASSERT_EQ(whole.size(), 4u) << lines(whole);
    EXPECT_EQ(whole[0],
              "memset_node_set_params n1 dst=z value=0x0 element=4 width=64 height=1 pitch=256");
    EXPECT_EQ(whole[1].rfind("host_node_set_params n3", 0), 0u) << whole[1];
    EXPECT_EQ(whole[2],
              "kernel_node_set_params n2 scale grid=(2,1,1) block=(256,1,1) shared=0 args=[z, "
              "0x40000000, 0x200]");
    EXPECT_EQ(whole[3], "exec_update x1 from g1");

    // The template outlives the first exec: b still rebinds and launches.
    { auto gone = std::move(a); }
    EXPECT_EQ(rec.live_graphs(), 1u);
    rec.clear();
    EXPECT_EQ(b.rebind("x", dev_x), cudag::rebind_path::node_setters);
    b.launch(nullptr);
    EXPECT_EQ(rec.calls().back(), "launch x2 stream=null");
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(ExecInstances, HostNodesOfAnInstanceSeeItsOwnValues) {
  cudag::native::recorder rec;
  std::vector<const float*> seen;
  const cudag::binding first[] = {cudag::bind("x", dev_x), cudag::bind("n", 8)};
  auto a = cudag::instantiate(pipeline(&seen), first);
  const cudag::binding second[] = {cudag::bind("x", dev_y)};
  auto b = a.instance(second);
  // The recorder runs a host node when its exec is launched.
  a.launch(nullptr);
  b.launch(nullptr);
  a.synchronize(nullptr);
  b.synchronize(nullptr);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], dev_x);
  EXPECT_EQ(seen[1], dev_y);
}

TEST(ExecInstances, AGraphWithMemoryNodesIsLoweredAgainForEachInstance) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder b("owned");
  auto n = b.param<int>("n");
  auto [alloc, tmp] = b.alloc<float>("tmp", 256);
  auto work = b.kernel("work", &scale, cudag::launch_over(n, 256), tmp, 2.0f, n);
  auto release = b.free("release", tmp);
  b.chain(alloc, work, release);
  const cudag::binding binds[] = {cudag::bind("n", 256)};
  auto first = cudag::instantiate(b.build(), binds);
  rec.clear();
  const cudag::binding other[] = {cudag::bind("n", 512)};
  auto second = first.instance(other);
  const std::string calls = lines(rec.calls());
  EXPECT_EQ(calls.rfind("graph_create g2", 0), 0u) << calls;
  EXPECT_NE(calls.find("add_mem_alloc_node"), std::string::npos) << calls;
  EXPECT_NE(calls.find("grid=(2,1,1)"), std::string::npos) << "n = 512 reached the new graph\n" << calls;
  EXPECT_NE(second.native_graph(), first.native_graph());
}

TEST(ExecInstances, AnUnknownOrMistypedParameterIsRefusedByName) {
  cudag::native::recorder rec;
  const cudag::binding first[] = {cudag::bind("x", dev_x), cudag::bind("n", 8)};
  auto a = cudag::instantiate(pipeline(nullptr), first);
  const cudag::binding unknown[] = {cudag::bind("w", dev_y)};
  try {
    (void)a.instance(unknown);
    FAIL() << "an unknown parameter was accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("no parameter 'w'"), std::string::npos) << e.what();
  }
  const cudag::binding mistyped[] = {cudag::bind("n", 1.5)};
  EXPECT_THROW((void)a.instance(mistyped), cudag::error);
  EXPECT_EQ(rec.live_execs(), 1u) << "a refused instance leaves no exec behind";
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

}  // namespace
