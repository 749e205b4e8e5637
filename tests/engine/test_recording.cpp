// Lowering, instantiation, rebinding and updates without a GPU: the native
// recorder stands in for CUDA, and each test asserts the exact native calls.
// The same graph written with the DSL and with the builder must record the
// same calls, before and after a rebind: one engine under both front ends.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

// Host functions stand in for kernels: the recorder shows their names.
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }
void sum(const float* x, float a, int n) { (void)x, (void)a, (void)n; }
void set_flag(cudaGraphConditionalHandle h, int limit) { (void)h, (void)limit; }

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;
float* const dev_x2 = engine_test::dev_z;
const cudaEvent_t event_a = reinterpret_cast<cudaEvent_t>(0x7f5a07e00000);

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_kernel(&axpy, "axpy");
  rec.name_kernel(&sum, "sum");
  rec.name_kernel(&set_flag, "set_flag");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  rec.name_pointer(dev_x2, "x2");
  rec.name_pointer(event_a, "event_a");
}

// ------------------------------------------------------- hand-written truth --
TEST(EngineRecording, BuilderGraphLowersToTheExpectedCalls) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    cudag::builder b("saxpy");
    auto x = b.param<float*>("x");
    auto y = b.param<float*>("y");
    auto n = b.param<int>("n");
    auto clear = b.memset("clear_y", y, 0, 1024);
    auto sc = b.kernel("scale", &scale, cudag::launch_over(n, 256), x, 2.0f, n);
    auto ax = b.kernel("axpy", &axpy, cudag::launch_over(n, 256), x, y, 3.0f, n);
    b.edge(clear, ax);
    b.edge(sc, ax);
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_y),
                                    cudag::bind("n", 1000)};
    auto e = cudag::instantiate(b.build(), binds);
    EXPECT_EQ(lines(rec.calls()),
              "graph_create g1 flags=0\n"
              "add_memset_node n1 g1 deps=[] dst=y value=0x0 element=4 width=1024 height=1 pitch=4096\n"
              "add_kernel_node n2 g1 deps=[] scale grid=(4,1,1) block=(256,1,1) shared=0 args=[x, "
              "0x40000000, 0x3e8]\n"
              "add_kernel_node n3 g1 deps=[n1,n2] axpy grid=(4,1,1) block=(256,1,1) shared=0 args=[x, "
              "y, 0x40400000, 0x3e8]\n"
              "instantiate g1 flags=0 -> x1\n");
    rec.clear();
    // Two nodes read x: two exec setters, nothing else.
    EXPECT_EQ(e.rebind("x", dev_x2), cudag::rebind_path::node_setters);
    EXPECT_EQ(lines(rec.calls()),
              "exec_kernel_node_set_params x1 n2 scale grid=(4,1,1) block=(256,1,1) shared=0 "
              "args=[x2, 0x40000000, 0x3e8]\n"
              "exec_kernel_node_set_params x1 n3 axpy grid=(4,1,1) block=(256,1,1) shared=0 "
              "args=[x2, y, 0x40400000, 0x3e8]\n");
    rec.clear();
    // The same value again: no native call at all.
    EXPECT_EQ(e.rebind("x", dev_x2), cudag::rebind_path::none);
    EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
    // A count of zero still launches one block (the kernel's bounds check).
    EXPECT_EQ(e.rebind("n", 0), cudag::rebind_path::node_setters);
    ASSERT_EQ(rec.calls().size(), 2u) << rec.transcript();
    EXPECT_NE(rec.calls()[0].find("grid=(1,1,1)"), std::string::npos) << rec.calls()[0];
    EXPECT_NE(rec.calls()[0].find("args=[x2, 0x40000000, 0x0]"), std::string::npos)
        << rec.calls()[0];
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

// ------------------------------------------------ the DSL and the builder --
using namespace cudag::dsl;
constexpr auto px = param<"x", float*>;
constexpr auto py = param<"y", float*>;
constexpr auto pn = param<"n", int>;
constexpr auto pe = param<"ev", cudaEvent_t>;
constexpr auto pw = param<"ev2", cudaEvent_t>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto more = condition<"more", 1>;

// Every node kind, declared out of topological order. Every node that
// writes x or y is ordered against every other node touching it (no races):
// scale -> axpy -> copy -> report -> stage -> loop -> library.
// clang-format off
constexpr auto every_kind = graph(
    kernel<"axpy", axpy>(blocks_for(pn, 256), 256, px, py, 3.0f, pn),
    memset<"clear_y">(py, 0, 1024),
    kernel<"scale", scale>(blocks_for(pn, 128), 128, px, 2.0f, pn),
    memcpy<"copy">(py, px, 4096),
    host<"report">([](float* v, int count) { (void)v, (void)count; }, px, pn),
    empty<"join">(),
    record<"signal">(pe),
    wait<"await">(pw),
    mem_alloc<"tmp">(tmp, 256),  // the builder names a buffer after its node
    kernel<"use_tmp", scale>(1, 32, tmp, 1.0f, 256),
    mem_free<"free_tmp">(tmp),
    child<"stage">(graph(kernel<"inner", scale>(2, 64, px, 4.0f, pn))),
    while_loop<"loop">(more, graph(kernel<"step", set_flag>(1, 1, more, 8))),
    captured<"library", "a library call">([](cudaStream_t, float* v, int count) { (void)v, (void)count; },
                                          px, pn),
    edges<"clear_y -> axpy -> join", "scale -> axpy", "copy -> report -> join",
          "join -> signal", "await -> tmp -> use_tmp -> free_tmp -> join",
          "stage -> loop", "signal -> loop", "axpy -> copy", "report -> stage", "loop -> library">);
// clang-format on

cudag::graph_spec every_kind_by_builder() {
  cudag::builder b("graph");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto ev = b.param<cudaEvent_t>("ev");
  auto more_c = b.condition("more", 1);
  b.kernel("axpy", &axpy, cudag::launch_over(n, 256), x, y, 3.0f, n);
  b.memset("clear_y", y, 0, 1024);
  b.kernel("scale", &scale, cudag::launch_over(n, 128), x, 2.0f, n);
  b.memcpy("copy", y, x, 4096);
  b.host("report", [](float* v, int count) { (void)v, (void)count; }, x, n);
  b.empty("join");
  b.record("signal", ev);
  b.wait("await", b.param<cudaEvent_t>("ev2"));
  const cudag::buffer_handle<float> tmp_buffer = b.alloc<float>("tmp", 256).buffer;
  b.kernel("use_tmp", &scale, cudag::launch(1, 32), tmp_buffer, 1.0f, 256);
  b.free("free_tmp", tmp_buffer);
  cudag::builder inner("stage");
  inner.kernel("inner", &scale, cudag::launch(2, 64), inner.param<float*>("x"), 4.0f,
               inner.param<int>("n"));
  b.child("stage", inner.build());
  cudag::builder body("loop");
  body.kernel("step", &set_flag, cudag::launch(1, 1), more_c, 8);
  b.while_loop("loop", more_c, body.build());
  b.captured("library", "a library call",
             [](cudaStream_t, float* v, int count) { (void)v, (void)count; }, x, n);
  for (auto [from, to] : std::vector<std::pair<const char*, const char*>>{
           {"clear_y", "axpy"}, {"axpy", "join"}, {"scale", "axpy"}, {"copy", "report"},
           {"report", "join"}, {"join", "signal"}, {"await", "tmp"},
           {"tmp", "use_tmp"}, {"use_tmp", "free_tmp"}, {"free_tmp", "join"},
           {"stage", "loop"}, {"signal", "loop"}, {"axpy", "copy"}, {"report", "stage"},
           {"loop", "library"}})
    b.edge(from, to);
  return b.build();
}

TEST(EngineRecording, DslAndBuilderRecordTheSameCallsForEveryNodeKind) {
  std::string by_dsl, by_builder, dsl_rebind, builder_rebind;
  const cudaEvent_t ev = reinterpret_cast<cudaEvent_t>(0x7f00000);
  {
    cudag::native::recorder rec;
    name_everything(rec);
    rec.name_pointer(ev, "ev");
    auto e = instantiate(every_kind, px = dev_x, py = dev_y, pn = 1000, pe = ev, pw = event_a);
    by_dsl = rec.transcript();
    rec.clear();
    e.rebind(px = dev_x2);
    e.rebind(pn = 0);
    dsl_rebind = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    rec.name_pointer(ev, "ev");
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_y),
                                    cudag::bind("n", 1000), cudag::bind("ev", ev),
                                    cudag::bind("ev2", event_a)};
    auto e = cudag::instantiate(every_kind_by_builder(), binds);
    by_builder = rec.transcript();
    rec.clear();
    e.rebind("x", dev_x2);
    e.rebind("n", 0);
    builder_rebind = rec.transcript();
  }
  EXPECT_EQ(by_dsl, by_builder);
  EXPECT_EQ(dsl_rebind, builder_rebind);
  // What both recorded: every kind's add call, and a rebind of x that
  // reaches into the child graph, so one whole-graph update.
  for (const char* call : {"add_kernel_node", "add_memset_node", "add_memcpy_node", "add_host_node",
                           "add_empty_node", "add_event_record_node", "add_event_wait_node",
                           "add_mem_alloc_node", "add_mem_free_node", "add_child_graph_node",
                           "conditional_handle_create", "stream_begin_capture", "instantiate"})
    EXPECT_NE(by_builder.find(call), std::string::npos) << call << "\n" << by_builder;
  EXPECT_NE(by_builder.find("add_node n14 g1 deps=[n13,n11] conditional while"), std::string::npos)
      << by_builder;
  EXPECT_NE(builder_rebind.find("exec_update x1 from g1"), std::string::npos) << builder_rebind;
  EXPECT_NE(builder_rebind.find("exec_child_graph_node_set_params"), std::string::npos)
      << builder_rebind;
}

// A flat graph: few readers go through exec setters, many through one
// update; the template is refreshed first for nodes changed on the exec only.
constexpr auto flat = graph(kernel<"a", scale>(1, 32, px, 1.0f, pn),
                            kernel<"b", scale>(1, 32, py, 1.0f, pn),
                            host<"h">([](float* v) { (void)v; }, py),
                            captured<"c">([](cudaStream_t, float* v) { (void)v; }, py),
                            chain<"a", "b", "h", "c">);

cudag::graph_spec flat_by_builder() {
  cudag::builder b("flat");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto a = b.kernel("a", &scale, cudag::launch(1, 32), x, 1.0f, n);
  auto bb = b.kernel("b", &scale, cudag::launch(1, 32), y, 1.0f, n);
  auto h = b.host("h", [](float* v) { (void)v; }, y);
  auto c = b.captured("c", "", [](cudaStream_t, float* v) { (void)v; }, y);
  b.chain(a, bb, h, c);
  return b.build();
}

TEST(EngineRecording, StaleTemplateNodesAreRefreshedBeforeAWholeUpdate) {
  std::string by_dsl, by_builder;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = instantiate(flat, px = dev_x, py = dev_y, pn = 8);
    rec.clear();
    EXPECT_EQ(e.rebind(px = dev_x2), cudag::rebind_path::node_setters);
    e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    // a is not among the nodes changed now: only the refresh keeps it.
    EXPECT_EQ(e.rebind(py = dev_x), cudag::rebind_path::whole_graph_update);
    by_dsl = rec.transcript();
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_y),
                                    cudag::bind("n", 8)};
    auto e = cudag::instantiate(flat_by_builder(), binds);
    rec.clear();
    EXPECT_EQ(e.rebind("x", dev_x2), cudag::rebind_path::node_setters);
    e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    EXPECT_EQ(e.rebind("y", dev_x), cudag::rebind_path::whole_graph_update);
    by_builder = rec.transcript();
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
  EXPECT_EQ(by_builder,
            "exec_kernel_node_set_params x1 n1 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[x2, "
            "0x3f800000, 0x8]\n"
            // a was changed on the exec only: the template learns it first
            "kernel_node_set_params n1 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[x2, "
            "0x3f800000, 0x8]\n"
            "kernel_node_set_params n2 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[x, "
            "0x3f800000, 0x8]\n"
            "host_node_set_params n3 callable\n"
            "stream_begin_capture s1 mode=1\n"
            "stream_end_capture s1 -> g3\n"
            "exec_child_graph_node_set_params x1 n4 child=g3\n"
            "graph_destroy g2\n"  // the earlier recording
            "exec_update x1 from g1\n"
            "exec_child_graph_node_set_params x1 n4 child=g3\n");
  EXPECT_EQ(by_dsl, by_builder);
}

TEST(EngineRecording, BothFrontEndsCreateNodesInOneTopologicalOrder) {
  // Ties are broken by declaration order: a, b, c (not a, c, b).
  constexpr auto g = graph(empty<"a">(), empty<"b">(), empty<"c">(), edge<"a", "b">);
  std::string by_dsl, by_builder;
  {
    cudag::native::recorder rec;
    auto e = instantiate(g);
    by_dsl = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    cudag::builder b;
    b.empty("a");
    b.empty("b");
    b.empty("c");
    b.edge("a", "b");
    auto e = cudag::instantiate(b.build(), {});
    by_builder = rec.transcript();
  }
  EXPECT_EQ(by_builder,
            "graph_create g1 flags=0\n"
            "add_empty_node n1 g1 deps=[] \n"
            "add_empty_node n2 g1 deps=[n1] \n"
            "add_empty_node n3 g1 deps=[] \n"
            "instantiate g1 flags=0 -> x1\n");
  EXPECT_EQ(by_dsl, by_builder);
}

TEST(EngineRecording, ZeroItemsLaunchOneBlockInBothFrontEnds) {
  constexpr auto g = graph(kernel<"k", scale>(blocks_for(pn, 256), 256, px, 1.0f, pn));
  cudag::native::recorder rec;
  name_everything(rec);
  {
    auto e = instantiate(g, px = dev_x, pn = 0);
    ASSERT_EQ(rec.calls_starting("add_kernel_node").size(), 1u);
    EXPECT_NE(rec.calls_starting("add_kernel_node")[0].find("grid=(1,1,1)"), std::string::npos)
        << rec.transcript();
  }
  constexpr auto literal = graph(kernel<"k", scale>(blocks_for(0, 256), 256, px, 1.0f, 0));
  rec.clear();
  {
    auto e = instantiate(literal, px = dev_x);
    EXPECT_NE(rec.calls_starting("add_kernel_node")[0].find("grid=(1,1,1)"), std::string::npos)
        << rec.transcript();
  }
}

TEST(EngineRecording, RefusedUpdateNamesTheNodeInBothFrontEnds) {
  constexpr auto g = graph(kernel<"first", scale>(1, 32, px, 1.0f, 1),
                           kernel<"second", scale>(1, 32, px, 1.0f, 1), edge<"first", "second">);
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = instantiate(g, px = dev_x);
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  rec.refuse_next_update(e.node_handle<"second">(), cudaGraphExecUpdateErrorParametersChanged);
  try {
    e.rebind(px = dev_x2);
    FAIL() << "the refused update was not reported";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "second");
    EXPECT_EQ(err.call(), "cudaGraphExecUpdate");
    EXPECT_NE(std::string(err.what()).find("parameters changed"), std::string::npos) << err.what();
  }
}

TEST(EngineRecording, DslRebindOfTwoParametersIsOnePass) {
  constexpr auto g = graph(kernel<"k", axpy>(1, 32, px, py, 1.0f, 1));
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = instantiate(g, px = dev_x, py = dev_y);
  rec.clear();
  // Swapping both pointers: one setter call carrying both new values.
  EXPECT_EQ(e.rebind(px = dev_y, py = dev_x), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 axpy grid=(1,1,1) block=(32,1,1) shared=0 args=[y, x, "
            "0x3f800000, 0x1]\n");
}

TEST(EngineRecording, InstantiateOptionsReachCudaInBothFrontEnds) {
  // The driver does not report every flag back (cudaGraphExecGetFlags omits
  // UseNodePriority), so the flags cudag passes are asserted here.
  const cudaStream_t upload_stream = reinterpret_cast<cudaStream_t>(0x5100000);
  const cudag::instantiate_options options{.auto_free_on_launch = true,
                                           .use_node_priority = true,
                                           .upload = true,
                                           .upload_stream = upload_stream};
  const unsigned expected = cudaGraphInstantiateFlagAutoFreeOnLaunch |
                            cudaGraphInstantiateFlagUseNodePriority |
                            cudaGraphInstantiateFlagUpload;
  const std::string line = "instantiate g1 flags=" + std::to_string(expected) + " -> x1";
  constexpr auto g = graph(kernel<"k", scale>(1, 32, px, 1.0f, 1));
  {
    cudag::native::recorder rec;
    auto e = instantiate_with(g, options, px = dev_x);
    EXPECT_EQ(rec.calls_starting("instantiate"), std::vector<std::string>{line});
  }
  {
    cudag::native::recorder rec;
    cudag::builder b;
    cudag::launch_config config = cudag::launch(1, 32);
    config.priority = -3;
    b.kernel("k", &scale, config, b.param<float*>("x"), 1.0f, 1);
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    auto e = cudag::instantiate(b.build(), binds, options);
    EXPECT_EQ(rec.calls_starting("instantiate"), std::vector<std::string>{line});
    EXPECT_EQ(rec.calls_starting("kernel_node_set_attribute"),
              std::vector<std::string>{"kernel_node_set_attribute n1 attribute=8 priority=-3"});
  }
}

// Items 17-56 are 40 edge items in a row: the DSL keeps sixteen of them on a
// chunk boundary (items 32-47) as one array, with no code, and the nodes
// after the run must still find their storage. Same calls as the builder,
// before and after a rebind.
// clang-format off
constexpr auto edge_runs = graph(
    empty<"e0">(),
    empty<"e1">(),
    empty<"e2">(),
    empty<"e3">(),
    empty<"e4">(),
    empty<"e5">(),
    empty<"e6">(),
    empty<"e7">(),
    empty<"e8">(),
    empty<"e9">(),
    empty<"e10">(),
    empty<"e11">(),
    empty<"e12">(),
    empty<"e13">(),
    empty<"e14">(),
    empty<"e15">(),
    empty<"e16">(),
    edge<"e0", "e1">,
    edge<"e1", "e2">,
    edge<"e2", "e3">,
    edge<"e3", "e4">,
    edge<"e4", "e5">,
    edge<"e5", "e6">,
    edge<"e6", "e7">,
    edge<"e7", "e8">,
    edge<"e8", "e9">,
    edge<"e9", "e10">,
    edge<"e10", "e11">,
    edge<"e11", "e12">,
    edge<"e12", "e13">,
    edge<"e13", "e14">,
    edge<"e14", "e15">,
    edge<"e15", "e16">,
    edge<"e0", "k0">,
    edge<"e1", "k0">,
    edge<"e2", "k0">,
    edge<"e3", "k0">,
    edge<"e4", "k0">,
    edge<"e5", "k0">,
    edge<"e6", "k0">,
    edge<"e7", "k0">,
    edge<"e8", "k0">,
    edge<"e9", "k0">,
    edge<"e10", "k0">,
    edge<"e11", "k0">,
    edge<"e12", "k0">,
    edge<"e13", "k0">,
    edge<"e14", "k0">,
    edge<"e15", "k0">,
    edge<"e16", "k0">,
    edge<"k0", "k1">,
    edge<"k1", "k2">,
    edge<"k2", "k3">,
    edge<"e0", "k1">,
    edge<"e1", "k2">,
    edge<"e2", "k3">,
    edge<"e3", "k3">,
    kernel<"k0", scale>(blocks_for(pn, 256), 256, px, 0.5f, pn),
    kernel<"k1", scale>(blocks_for(pn, 256), 256, px, 1.5f, pn),
    kernel<"k2", scale>(blocks_for(pn, 256), 256, px, 2.5f, pn),
    kernel<"k3", scale>(blocks_for(pn, 256), 256, px, 3.5f, pn));
// clang-format on

TEST(EngineRecording, NodesAfterARunOfEdgeItemsLowerAndRebindAsTheBuildersDo) {
  std::string by_dsl, by_builder;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = instantiate(edge_runs, px = dev_x, pn = 1000);
    (void)e.rebind(px = dev_y, pn = 5000);
    by_dsl = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    cudag::builder b;
    auto x = b.param<float*>("x");
    auto n = b.param<int>("n");
    for (int i = 0; i < 17; ++i) b.empty("e" + std::to_string(i));
    for (int j = 0; j < 4; ++j)
      b.kernel("k" + std::to_string(j),
               cudag::kernel_of(&scale, std::string(cudag::dsl::detail::function_name_of<scale>())),
               cudag::launch_over(n, 256), x, float(j) + 0.5f, n);
    // The DSL's edge items, in their order.
    for (int i = 0; i < 16; ++i) b.edge("e" + std::to_string(i), "e" + std::to_string(i + 1));
    for (int i = 0; i < 17; ++i) b.edge("e" + std::to_string(i), "k0");
    const char* const last[][2] = {{"k0", "k1"}, {"k1", "k2"}, {"k2", "k3"}, {"e0", "k1"},
                                   {"e1", "k2"}, {"e2", "k3"}, {"e3", "k3"}};
    for (const auto& pair : last) b.edge(pair[0], pair[1]);
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1000)};
    auto e = cudag::instantiate(b.build(), binds);
    const cudag::binding rebinds[] = {cudag::bind("x", dev_y), cudag::bind("n", 5000)};
    (void)e.rebind(rebinds);
    by_builder = rec.transcript();
  }
  EXPECT_EQ(by_dsl, by_builder);
  EXPECT_NE(by_builder.find("n21 scale grid=(20,1,1) block=(256,1,1) shared=0 args=[y, 0x40600000, 0x1388]"),
            std::string::npos)
      << by_builder;
}

// Past 8 parameters lowering and rebinding find a parameter by its name's
// hash rather than a short scan: each node still reads its own. The kernels
// only read x (const float*): side by side, they do not race.
TEST(EngineRecording, ManyParametersEachReachTheirNode) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder b("many");
  auto x = b.param<float*>("x");
  std::vector<cudag::binding> binds{cudag::bind("x", dev_x)};
  for (int i = 0; i < 12; ++i) {
    const std::string name = "count_" + std::to_string(i);
    b.kernel("k" + std::to_string(i), &sum, cudag::launch(1, 32), x, 2.0f, b.param<int>(name));
    binds.push_back(cudag::bind(name, 0x100 + i));
  }
  auto e = cudag::instantiate(b.build(), binds);
  std::string expected = "graph_create g1 flags=0\n";
  for (int i = 0; i < 12; ++i) {
    char arg[16];
    std::snprintf(arg, sizeof arg, "0x%x", 0x100 + i);
    expected += "add_kernel_node n" + std::to_string(i + 1) +
                " g1 deps=[] sum grid=(1,1,1) block=(32,1,1) shared=0 args=[x, 0x40000000, " + arg +
                "]\n";
  }
  expected += "instantiate g1 flags=0 -> x1\n";
  EXPECT_EQ(lines(rec.calls()), expected);
  rec.clear();
  EXPECT_EQ(e.rebind("count_10", 0x7777), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n11 sum grid=(1,1,1) block=(32,1,1) shared=0 "
            "args=[x, 0x40000000, 0x7777]\n");
}

}  // namespace
