// Device-side graph launch without a GPU: an exec instantiated for device
// launch is checked first (the node CUDA would refuse is named, at any
// depth), instantiated with CUDA's flag and uploaded; every change a rebind
// or update sends is uploaded again; its device handle travels as a typed
// graph parameter; an exec not instantiated for it has no handle. Both
// front ends. The launches themselves are in test_device_launch_gpu.cu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/device_graph.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

void step(int* data, int amount) { (void)data, (void)amount; }
void decide(cudag::device_graph next, int* counter, int limit) { (void)next, (void)counter, (void)limit; }

using engine_test::dev_x;
using engine_test::lines;
int* const dev_data = reinterpret_cast<int*>(dev_x);

/// step, then decide (which may launch `next` from the device).
cudag::graph_spec stepping(const char* name = "stepping") {
  cudag::builder b(name);
  auto data = b.param<int*>("data");
  auto next = b.param<cudag::device_graph>("next");
  auto s = b.kernel("step", &step, cudag::launch(1, 32), data, 1);
  auto d = b.kernel("decide", &decide, cudag::launch(1, 1), next, data, 8);
  b.edge(s, d);
  return b.build();
}

cudag::instantiate_options for_device() {
  cudag::instantiate_options o;
  o.device_launch = true;
  return o;
}

TEST(DeviceLaunch, InstantiatedWithCudasFlagAndUploadedBeforeAnyLaunch) {
  cudag::native::recorder rec;
  const cudag::binding binds[] = {cudag::bind("data", dev_data), cudag::bind("next", cudag::device_graph{})};
  auto e = cudag::instantiate(stepping(), binds, for_device());
  const std::vector<std::string> calls = rec.calls();
  std::vector<std::string> tail;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].starts_with("instantiate")) tail.assign(calls.begin() + static_cast<std::ptrdiff_t>(i), calls.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"instantiate g1 flags=" +
                                                std::to_string(cudaGraphInstantiateFlagDeviceLaunch) + " -> x1",
                                            "upload x1 stream=null", "stream_synchronize null"}))
      << rec.transcript();
  EXPECT_EQ(e.device_handle().exec, e.native_exec());
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(DeviceLaunch, EveryChangeSentIsUploadedAgain) {
  cudag::native::recorder rec;
  const cudag::binding binds[] = {cudag::bind("data", dev_data), cudag::bind("next", cudag::device_graph{})};
  auto target = cudag::instantiate(stepping("target"), binds, for_device());
  auto e = cudag::instantiate(stepping(), binds, for_device());
  rec.clear();
  e.rebind("next", target.device_handle());
  const std::vector<std::string> calls = rec.calls();
  ASSERT_GE(calls.size(), 3u) << rec.transcript();
  EXPECT_TRUE(calls[calls.size() - 3].starts_with("exec_kernel_node_set_params")) << rec.transcript();
  EXPECT_EQ(calls[calls.size() - 2], "upload x2 stream=null");
  EXPECT_EQ(calls.back(), "stream_synchronize null");
  // A whole-graph update too.
  rec.clear();
  const cudag::binding moved[] = {cudag::bind("data", dev_data + 64), cudag::bind("next", target.device_handle())};
  e.update(stepping(), moved);
  EXPECT_EQ(rec.calls().back(), "stream_synchronize null") << rec.transcript();
  EXPECT_EQ(rec.calls_starting("upload").size(), 1u) << rec.transcript();
  // An exec not for device launch uploads nothing.
  auto plain = cudag::instantiate(stepping("plain"), binds);
  rec.clear();
  plain.rebind("data", dev_data + 32);
  EXPECT_TRUE(rec.calls_starting("upload").empty()) << rec.transcript();
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(DeviceLaunch, AnExecNotForDeviceLaunchHasNoHandle) {
  cudag::native::recorder rec;
  const cudag::binding binds[] = {cudag::bind("data", dev_data), cudag::bind("next", cudag::device_graph{})};
  auto e = cudag::instantiate(stepping(), binds);
  try {
    (void)e.device_handle();
    FAIL() << "a host-only exec gave a device handle";
  } catch (const cudag::error& err) {
    EXPECT_EQ(std::string(err.what()),
              "graph 'stepping' was not instantiated for device launch (instantiate_options::device_launch): "
              "device code cannot launch it");
  }
}

TEST(DeviceLaunch, EachNodeKindCudaRefusesIsRefusedByNameBeforeAnyCudaCall) {
  const auto with = [](auto add) {
    cudag::builder b("g");
    auto data = b.param<int*>("data");
    b.kernel("step", &step, cudag::launch(1, 32), data, 1);
    add(b, data);
    return b.build();
  };
  const struct {
    const char* kind;
    cudag::graph_spec spec;
  } cases[] = {
      {"host", with([](cudag::builder& b, auto) { b.host("bad", [] {}); })},
      {"empty", with([](cudag::builder& b, auto) { b.empty("bad"); })},
      {"event_record", with([](cudag::builder& b, auto) { b.record("bad", b.param<cudaEvent_t>("ev")); })},
      {"event_wait", with([](cudag::builder& b, auto) { b.wait("bad", b.param<cudaEvent_t>("ev")); })},
      {"mem_alloc", with([](cudag::builder& b, auto) {
         const auto tmp = b.alloc<float>("bad", 256);
         b.edge(tmp.node, b.free("free_tmp", tmp.buffer));
       })},
      {"conditional", with([](cudag::builder& b, auto) {
         cudag::builder body("body");
         body.kernel("step", &step, cudag::launch(1, 32), body.param<int*>("data"), 3);
         b.if_then("bad", b.condition("go"), body.build());
       })},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    cudag::native::recorder rec;
    try {
      cudag::check_device_launchable(c.spec);
      ADD_FAILURE() << "accepted";
    } catch (const cudag::check_error& e) {
      EXPECT_EQ(e.node(), "bad");
      EXPECT_EQ(std::string(e.what()), "graph 'g' is instantiated for device launch, and node 'bad' is a " +
                                           std::string(c.kind) +
                                           " node; a device-launchable graph holds only kernel, memcpy, "
                                           "memset and child-graph nodes (CUDA refuses the others)");
    }
    EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  }
  // Nested: named by path; and refused by instantiate itself.
  cudag::builder inner("inner");
  inner.host("bad", [] {});
  cudag::builder outer("outer");
  outer.child("stage", inner.build());
  cudag::native::recorder rec;
  try {
    (void)cudag::instantiate(outer.build(), {}, for_device());
    FAIL() << "a host node in a child was instantiated for device launch";
  } catch (const cudag::check_error& e) {
    EXPECT_EQ(e.node(), "stage/bad");
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  // What CUDA accepts passes: kernels, copies, sets, children of them.
  cudag::builder fine("fine");
  auto x = fine.param<int*>("data");
  fine.kernel("step", &step, cudag::launch(1, 32), x, 1);
  fine.memset("clear", x, 0, 16);
  fine.memcpy("copy", x, x, 16);
  cudag::builder kid("kid");
  kid.kernel("step", &step, cudag::launch(1, 32), kid.param<int*>("data"), 2);
  fine.child("stage", kid.build());
  EXPECT_NO_THROW(cudag::check_device_launchable(fine.build()));
}

TEST(DeviceLaunch, AutoFreeOnLaunchWithDeviceLaunchIsRefused) {
  cudag::native::recorder rec;
  cudag::instantiate_options o = for_device();
  o.auto_free_on_launch = true;
  const cudag::binding binds[] = {cudag::bind("data", dev_data), cudag::bind("next", cudag::device_graph{})};
  try {
    (void)cudag::instantiate(stepping(), binds, o);
    FAIL() << "accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("device launch and auto-free on launch together"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();  // refused before anything is lowered
}

// The DSL: the same check, flag, upload and handle.
namespace dsl = cudag::dsl;
constexpr auto data = dsl::param<"data", int*>;
constexpr auto next = dsl::param<"next", cudag::device_graph>;
constexpr auto dsl_stepping = dsl::graph(dsl::kernel<"step", step>(1, 32, data, 1),
                                         dsl::kernel<"decide", decide>(1, 1, next, data, 8),
                                         dsl::edge<"step", "decide">);
constexpr auto dsl_with_host = dsl::graph(dsl::kernel<"step", step>(1, 32, data, 1),
                                          dsl::host<"bad">([] {}), dsl::edge<"step", "bad">);

TEST(DeviceLaunch, TheDslChecksFlagsUploadsAndHandsOutTheSameHandle) {
  cudag::native::recorder rec;
  auto e = dsl::instantiate_with(dsl_stepping, for_device(), data = dev_data, next = cudag::device_graph{});
  EXPECT_EQ(rec.calls_starting("upload").size(), 1u) << rec.transcript();
  EXPECT_EQ(e.device_handle().exec, e.native_exec());
  auto other = dsl::instantiate_with(dsl_stepping, for_device(), data = dev_data, next = e.device_handle());
  rec.clear();
  (void)other.rebind(next = cudag::device_graph{});
  EXPECT_EQ(rec.calls_starting("upload").size(), 1u) << rec.transcript();
  try {
    (void)dsl::instantiate_with(dsl_with_host, for_device(), data = dev_data);
    FAIL() << "a DSL graph with a host node was instantiated for device launch";
  } catch (const cudag::check_error& err) {
    EXPECT_EQ(err.node(), "bad");
  }
  auto plain = dsl::instantiate(dsl_stepping, data = dev_data, next = cudag::device_graph{});
  EXPECT_THROW((void)plain.device_handle(), cudag::error);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

}  // namespace
