// A spec run without a graph: every node kind as stream work, in lowering's
// order, through the seam; what cannot run without a graph is refused by
// name; and the payoff measurement runs all three ways.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/eager.hpp"
#include "cudag/error.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void decide(cudaGraphConditionalHandle h) { (void)h; }
// Above 4 GiB, as device addresses are: a pointer copied in part shows.
const cudaEvent_t ready = reinterpret_cast<cudaEvent_t>(0x7f5a07e00000);

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&scale, "scale");
  rec.name_kernel(&decide, "decide");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  rec.name_pointer(ready, "ready");
}

TEST(Eager, EveryKindRunsAsStreamWorkInLoweringOrder) {
  cudag::native::recorder rec;
  name_everything(rec);
  int host_saw = 0;
  cudag::builder inner("inner");
  auto ix = inner.param<float*>("x");
  inner.kernel("twice", &scale, cudag::launch(dim3(2), dim3(64)), ix, 2.0f, 128);

  cudag::builder b("every_kind");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto tmp = b.alloc<float>("tmp", 256);
  auto fill = b.memset("fill", tmp.buffer, 0x3f800000u, 256);
  auto copy = b.memcpy("copy", y, tmp.buffer, 256 * sizeof(float), cudaMemcpyDeviceToDevice);
  auto k = b.kernel("scale", &scale, cudag::launch_over(n, 128), x, 3.0f, n);
  auto record = b.record("record", ready);
  auto wait = b.wait("wait", ready);
  auto host = b.host("report", [&host_saw](int v) { host_saw = v; }, n);
  auto child = b.child("stage", inner.build());
  auto nothing = b.empty("join");
  auto release = b.free("release", tmp.buffer);
  b.edge(tmp.node, fill);
  b.edge(fill, copy);
  b.edge(copy, release);
  b.edge(k, record);
  b.edge(record, wait);
  b.edge(wait, host);
  b.edge(host, child);
  b.edge(child, nothing);
  b.edge(release, nothing);
  const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_y),
                                  cudag::bind("n", 300)};
  {
    cudag::eager_run run = cudag::run_eagerly(b.build(), binds, nullptr);
    run.synchronize();
  }
  EXPECT_EQ(host_saw, 300);
  // Kahn's order, the first declared among ready nodes: what a graph of
  // this spec would create, one after the other on the stream.
  EXPECT_EQ(lines(rec.calls()),
            "malloc_async bytes=1024 stream=null -> stream_mem1\n"
            "memset_2d_async stream=null dst=stream_mem1 value=0x3f800000 element=4 width=256 "
            "height=1 pitch=1024\n"
            "memcpy_3d_async stream=null dst=y src=stream_mem1 extent=1024x1x1 pitch=1024/1024 "
            "kind=3\n"
            "launch_kernel stream=null scale grid=(3,1,1) block=(128,1,1) shared=0 args=[x, "
            "0x40400000, 0x12c]\n"
            "event_record ready stream=null\n"
            "stream_wait_event stream=null ready flags=0\n"
            "launch_host_func stream=null\n"
            "launch_kernel stream=null scale grid=(2,1,1) block=(64,1,1) shared=0 args=[x, "
            "0x40000000, 0x80]\n"
            "free_async stream_mem1 stream=null\n"
            "stream_synchronize null\n")
      << rec.transcript();
  EXPECT_EQ(rec.live_stream_allocations(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(Eager, ABufferNoFreeNodeFreesGoesBackAfterTheRun) {
  cudag::native::recorder rec;
  cudag::builder b("keeps");
  auto tmp = b.alloc<float>("tmp", 64);
  b.memset("fill", tmp.buffer, 0u, 64).after(tmp.node);
  { cudag::run_eagerly(b.build(), {}, nullptr).synchronize(); }
  EXPECT_EQ(rec.live_stream_allocations(), 0u) << rec.transcript();
  EXPECT_EQ(rec.calls_starting("free_async").size(), 1u) << rec.transcript();
}

TEST(Eager, ConditionalsCannotRunWithoutAGraphAndSaySo) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder body("body");
  body.empty("nothing");
  cudag::builder b("loop");
  auto again = b.condition("again", 1);
  auto tmp = b.alloc<float>("tmp", 64);
  auto set = b.kernel("decide", &decide, cudag::launch(dim3(1), dim3(1)), again);
  auto loop = b.while_loop("loop", again, body.build());
  b.edge(tmp.node, set);
  b.edge(set, loop);
  try {
    (void)cudag::run_eagerly(b.build(), {}, nullptr);
    FAIL() << "expected a refusal";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "decide");
    EXPECT_EQ(std::string(e.what()),
              "node 'decide' reads condition 'again', which exists only in a graph: it cannot run "
              "without one");
  }
  // The allocation made before the refusal went back.
  EXPECT_EQ(rec.live_stream_allocations(), 0u) << rec.transcript();
}

TEST(Eager, PayoffMeasuresEveryShapeThreeWays) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder b("family");
  auto x = b.param<float*>("x");
  auto batch = b.param<int>("batch");
  b.kernel("scale", &scale,
           cudag::launch(dim3(1), dim3(128)).follow(cudag::launch_dim::grid_x, batch), x, 1.0f,
           batch);
  const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("batch", 1)};
  const std::vector<std::vector<cudag::binding>> shapes = {{cudag::bind("batch", 8)},
                                                           {cudag::bind("batch", 64)}};
  const cudag::payoff_report report = cudag::measure_payoff(b.build(), binds, shapes, nullptr, 3);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].shape, "batch=8");
  EXPECT_EQ(report.rows[1].shape, "batch=64");
  // Eager runs launched the kernel at each shape's grid; the shared exec was reshaped to it.
  EXPECT_EQ(rec.calls_starting("launch_kernel stream=null scale grid=(64,1,1)").size(), 3u)
      << rec.transcript();
  EXPECT_FALSE(rec.calls_starting("exec_kernel_node_set_params").empty()) << rec.transcript();
  const std::string text = report.text();
  EXPECT_NE(text.find("| batch=64 |"), std::string::npos) << text;
  EXPECT_EQ(rec.live_execs(), 0u);
}

}  // namespace
