// A refused rebind, reshape or update changes nothing, in both front ends: whether
// it is refused before anything is sent (a shape CUDA cannot launch, a
// captured node that cannot be recorded again) or by CUDA half way (a
// refused whole-graph update), the exec keeps running what it ran, the host
// callables it runs stay alive, and the same call may be tried again and
// sends it. Asserted as the native calls the recorder saw.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void grid_kernel(int n, int m) { (void)n, (void)m; }
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&grid_kernel, "grid_kernel");
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
}

/// One kernel whose `first` and `second` launch dimensions follow n and m.
cudag::exec two_rule_exec(cudag::launch_dim first, cudag::launch_dim second, int n, int m) {
  cudag::builder b("g");
  auto pn = b.param<int>("n");
  auto pm = b.param<int>("m");
  b.kernel("a", &grid_kernel, cudag::launch(dim3(1), dim3(1)).follow(first, pn).follow(second, pm),
           pn, pm);
  const cudag::binding binds[] = {cudag::bind("n", n), cudag::bind("m", m)};
  return cudag::instantiate(b.build(), binds);
}

TEST(RefusedRebind, AReshapeRefusedByItsSecondValueKeepsTheFirstOut) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = two_rule_exec(cudag::launch_dim::grid_x, cudag::launch_dim::grid_y, 1, 1);
  rec.clear();
  // grid.y may not exceed 65535: the reshape is refused whole.
  EXPECT_THROW(e.reshape(cudag::bind("n", 7), cudag::bind("m", 100000)), cudag::error);
  EXPECT_EQ(lines(rec.calls()), "");
  // n = 7 was not kept: asking for it again sends it.
  EXPECT_EQ(e.reshape(cudag::bind("n", 7), cudag::bind("m", 1)), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 grid_kernel grid=(7,1,1) block=(1,1,1) shared=0 "
            "args=[0x7, 0x1]\n");
  rec.clear();
  EXPECT_EQ(e.rebind("m", 2), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 grid_kernel grid=(7,2,1) block=(1,1,1) shared=0 "
            "args=[0x7, 0x2]\n");
}

TEST(RefusedRebind, AReshapeIsJudgedByTheShapeAskedForWhateverTheOrderOfItsValues) {
  cudag::native::recorder rec;
  name_everything(rec);
  // From a 32x32 block to 64x16 (1024 threads, allowed), either way round:
  // 64x32 on the way would be over the limit.
  auto e = two_rule_exec(cudag::launch_dim::block_x, cudag::launch_dim::block_y, 32, 32);
  rec.clear();
  EXPECT_EQ(e.reshape(cudag::bind("n", 64), cudag::bind("m", 16)), cudag::rebind_path::node_setters);
  auto f = two_rule_exec(cudag::launch_dim::block_x, cudag::launch_dim::block_y, 32, 32);
  EXPECT_EQ(f.reshape(cudag::bind("m", 16), cudag::bind("n", 64)), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls_starting("exec_kernel_node_set_params")),
            "exec_kernel_node_set_params x1 n1 grid_kernel grid=(1,1,1) block=(64,16,1) shared=0 "
            "args=[0x40, 0x10]\n"
            "exec_kernel_node_set_params x2 n2 grid_kernel grid=(1,1,1) block=(64,16,1) shared=0 "
            "args=[0x40, 0x10]\n");
  // The same in one rebind of both parameters.
  rec.clear();
  EXPECT_EQ(e.rebind(std::vector{cudag::bind("n", 16), cudag::bind("m", 64)}),
            cudag::rebind_path::node_setters);
  EXPECT_NE(rec.transcript().find("block=(16,64,1)"), std::string::npos) << rec.transcript();
}

TEST(RefusedRebind, ACapturedReaderInAChildGraphRefusesBeforeAnythingIsSent) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder inner("inner");
  inner.captured("library", "a library call", [](cudaStream_t, float* v) { (void)v; },
                 inner.param<float*>("x"));
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto top = b.kernel("top", &scale, cudag::launch(1, 32), x, 1.0f, 1);
  b.child("stage", inner.build()).after(top);  // both touch x: in turn
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  auto e = cudag::instantiate(b.build(), binds);
  rec.clear();
  for (int attempt = 0; attempt < 2; ++attempt) {  // refused again: nothing was kept
    try {
      e.rebind("x", dev_y);
      FAIL() << "a captured node in a child graph was rebound in place";
    } catch (const cudag::error& err) {
      EXPECT_EQ(err.node(), "stage/library");
      EXPECT_NE(std::string(err.what()).find("cannot be re-recorded in place"), std::string::npos)
          << err.what();
    }
    EXPECT_EQ(lines(rec.calls()), "") << "attempt " << attempt;
  }
}

TEST(RefusedRebind, AnUpdateCudaRefusesLeavesTheOldValuesAndMayBeTriedAgain) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto first = b.kernel("first", &scale, cudag::launch(1, 32), x, 1.0f, 1);
  b.kernel("second", &scale, cudag::launch(1, 32), x, 2.0f, 2).after(first);  // both write x
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  auto e = cudag::instantiate(b.build(), binds);
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  rec.clear();
  rec.refuse_next_update(e.node_handle("second"), cudaGraphExecUpdateErrorParametersChanged);
  EXPECT_THROW(e.rebind("x", dev_y), cudag::error);
  // The exec never took y; the template did, and is marked for a refresh.
  // The old values are sent to the exec again (no change for CUDA).
  EXPECT_EQ(rec.calls_starting("exec_kernel_node_set_params").size(), 2u) << rec.transcript();
  for (const std::string& line : rec.calls_starting("exec_kernel_node_set_params"))
    EXPECT_NE(line.find("args=[x,"), std::string::npos) << line;
  rec.clear();
  EXPECT_EQ(e.rebind("x", dev_y), cudag::rebind_path::whole_graph_update);
  EXPECT_EQ(lines(rec.calls()),
            "kernel_node_set_params n1 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[y, "
            "0x3f800000, 0x1]\n"
            "kernel_node_set_params n2 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[y, "
            "0x40000000, 0x2]\n"
            "exec_update x1 from g1\n");
}

TEST(RefusedRebind, TheHostCallableARefusedUpdateLeavesRunningStaysAlive) {
  cudag::native::recorder rec;
  std::vector<int> seen;
  cudag::builder b("g");
  auto y = b.param<int>("y");
  b.host("h", [&seen](int v) { seen.push_back(v); }, y);
  const cudag::binding binds[] = {cudag::bind("y", 1)};
  auto e = cudag::instantiate(b.build(), binds);
  cudaStream_t s = nullptr;
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  e.rebind("y", 2);  // the exec runs a callable holding 2
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  rec.refuse_next_update(e.node_handle("h"), cudaGraphExecUpdateErrorNotSupported);
  EXPECT_THROW(e.rebind("y", 3), cudag::error);
  e.synchronize(s);  // releases what rebinds retired: not what the exec still runs
  e.launch(s);
  EXPECT_EQ(seen, std::vector<int>{2});
  // Again, and the old value cannot even be sent back: the exec runs the
  // callable it had, which must outlive the synchronize.
  rec.refuse_next_update(e.node_handle("h"), cudaGraphExecUpdateErrorNotSupported);
  rec.fail_next("exec_host_node_set_params", cudaErrorUnknown);
  EXPECT_THROW(e.rebind("y", 3), cudag::error);
  e.synchronize(s);
  e.launch(s);
  EXPECT_EQ(seen, (std::vector<int>{2, 2}));
  EXPECT_EQ(e.rebind("y", 3), cudag::rebind_path::whole_graph_update);
  e.launch(s);
  e.synchronize(s);
  EXPECT_EQ(seen, (std::vector<int>{2, 2, 3}));
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

/// Two kernels updating x in turn; the second's literal and priority as given.
cudag::graph_spec two_kernels(float second_literal, int second_priority = 0) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto first = b.kernel("first", &scale, cudag::launch(1, 32), x, 1.0f, 1);
  auto config = cudag::launch(1, 32);
  config.priority = second_priority;
  b.kernel("second", &scale, config, x, second_literal, 2).after(first);
  return b.build();
}

TEST(RefusedRebind, AnUpdateCudaRefusesLeavesTheOldSpecAndMayBeTriedAgain) {
  cudag::native::recorder rec;
  name_everything(rec);
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  auto e = cudag::instantiate(two_kernels(2.0f), binds);
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  rec.refuse_next_update(e.node_handle("second"), cudaGraphExecUpdateErrorParametersChanged);
  EXPECT_THROW(e.update(two_kernels(3.0f), binds), cudag::error);
  // The exec's record is the old spec again: its literal, sent back to the
  // exec (which never changed) and marked for the template.
  const auto& second = std::get<cudag::kernel_node>(e.spec().nodes[1].params);
  EXPECT_EQ(second.args[1], cudag::make_literal(2.0f));
  rec.clear();
  e.update(two_kernels(3.0f), binds);
  EXPECT_EQ(lines(rec.calls()),
            "kernel_node_set_params n2 scale grid=(1,1,1) block=(32,1,1) shared=0 args=[x, "
            "0x40400000, 0x2]\n"
            "exec_update x1 from g1\n");
}

TEST(RefusedRebind, AnUpdateThatChangesAPriorityIsRefusedRatherThanDropped) {
  cudag::native::recorder rec;
  name_everything(rec);
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  auto e = cudag::instantiate(two_kernels(2.0f), binds);
  try {
    e.update(two_kernels(2.0f, 2), binds);
    FAIL() << "a priority change was dropped";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "second");
    EXPECT_NE(std::string(err.what()).find("kernel node 'second' changes its priority (0 -> 2)"),
              std::string::npos)
        << err.what();
  }
  rec.clear();
  EXPECT_TRUE(e.update_or_reinstantiate(two_kernels(2.0f, 2), binds));
  EXPECT_EQ(rec.calls_starting("kernel_node_set_attribute").size(), 1u) << rec.transcript();
}

// One meaning for host nodes in both front ends: a launch runs the values it
// was launched with. A rebind while it is pending (its callable taken, not
// yet run) changes what later launches see, never what it sees; on either
// rebind path.
constexpr cudag::rebind_policy both_paths[] = {cudag::rebind_policy::node_setters,
                                               cudag::rebind_policy::whole_graph_update};

TEST(HostNodes, APendingLaunchOfTheBuildersGraphSeesTheValuesItWasLaunchedWith) {
  for (const cudag::rebind_policy policy : both_paths) {
    cudag::native::recorder rec;
    std::vector<int> seen;
    cudag::builder b("g");
    b.host("h", [&seen](int v) { seen.push_back(v); }, b.param<int>("y"));
    const cudag::binding binds[] = {cudag::bind("y", 1)};
    auto e = cudag::instantiate(b.resolve(), binds);
    e.set_rebind_policy(policy);
    const cudaHostNodeParams pending = rec.host_call_of(e.native_exec(), e.node_handle("h"));
    ASSERT_NE(pending.fn, nullptr);
    e.rebind("y", 2);
    pending.fn(pending.userData);  // the launch made before the rebind runs now
    e.launch(nullptr);
    e.synchronize(nullptr);
    EXPECT_EQ(seen, (std::vector<int>{1, 2})) << "policy " << int(policy);
  }
}

using namespace cudag::dsl;
constexpr auto px = param<"x", float*>;
constexpr auto py_int = param<"y", int>;

std::vector<int>* dsl_host_seen = nullptr;  // a constexpr graph's callable holds no capture

TEST(HostNodes, APendingLaunchOfTheDslGraphSeesTheValuesItWasLaunchedWith) {
  constexpr auto g = graph(host<"h">([](int v) { dsl_host_seen->push_back(v); }, py_int));
  for (const cudag::rebind_policy policy : both_paths) {
    cudag::native::recorder rec;
    std::vector<int> seen;
    dsl_host_seen = &seen;
    auto e = instantiate(g, py_int = 1);
    e.set_rebind_policy(policy);
    const cudaHostNodeParams pending = rec.host_call_of(e.native_exec(), e.node_handle<"h">());
    ASSERT_NE(pending.fn, nullptr);
    e.rebind(py_int = 2);
    pending.fn(pending.userData);
    e.launch(nullptr);
    e.synchronize(nullptr);
    EXPECT_EQ(seen, (std::vector<int>{1, 2})) << "policy " << int(policy);
  }
  dsl_host_seen = nullptr;
}

TEST(RefusedRebind, ADslUpdateCudaRefusesMayBeTriedAgain) {
  constexpr auto g = graph(kernel<"first", scale>(1, 32, px, 1.0f, 1),
                           kernel<"second", scale>(1, 32, px, 2.0f, 2), edge<"first", "second">);
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = instantiate(g, px = dev_x);
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  rec.clear();
  rec.refuse_next_update(e.node_handle<"second">(), cudaGraphExecUpdateErrorParametersChanged);
  EXPECT_THROW(e.rebind(px = dev_y), cudag::error);
  for (const std::string& line : rec.calls_starting("exec_kernel_node_set_params"))
    EXPECT_NE(line.find("args=[x,"), std::string::npos) << line;
  rec.clear();
  EXPECT_EQ(e.rebind(px = dev_y), cudag::rebind_path::whole_graph_update);
  EXPECT_EQ(rec.calls_starting("kernel_node_set_params").size(), 2u) << rec.transcript();
  EXPECT_NE(rec.transcript().find("exec_update x1 from g1"), std::string::npos)
      << rec.transcript();
}

}  // namespace
