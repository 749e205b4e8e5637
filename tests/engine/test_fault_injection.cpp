// Every native call of lowering, instantiation and rebinding made to fail in
// turn, through the recorder: each failure is a cudag::error naming the CUDA
// call, nothing leaks (graphs, executable graphs, streams), no handle is
// misused, and an exec whose rebind failed still launches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void set_flag(cudaGraphConditionalHandle h, int limit) { (void)h, (void)limit; }

using engine_test::dev_x;
float* const dev_x2 = engine_test::dev_z;
const cudaEvent_t event_a = reinterpret_cast<cudaEvent_t>(0x7f5a07e00000);

cudag::graph_spec every_kind() {
  cudag::builder b("faults");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  auto more = b.condition("more", 1);
  auto k = b.kernel("k", &scale, cudag::launch_over(n, 128), x, 2.0f, n);
  auto m = b.memset("clear", x, 0, 64);
  auto c = b.memcpy("copy", x, x, 64);
  auto h = b.host("report", [](float* v) { (void)v; }, x);
  auto r = b.record("signal", event_a);
  auto w = b.wait("await", event_a);
  auto a = b.alloc<float>("tmp", 16);
  auto u = b.kernel("use", &scale, cudag::launch(1, 16), a.buffer, 1.0f, 16);
  auto f = b.free("release", a.buffer);
  cudag::builder inner("inner");
  inner.kernel("inner_k", &scale, cudag::launch(1, 32), inner.param<float*>("x"), 3.0f, 5);
  auto ch = b.child("stage", inner.build());
  cudag::builder body("body");
  body.kernel("step", &set_flag, cudag::launch(1, 1), more, 4);
  auto loop = b.while_loop("loop", more, body.build());
  auto cap = b.captured("library", "", [](cudaStream_t, float* v) { (void)v; }, x);
  b.chain(m, k, c, h, r);
  b.chain(w, a.node, u, f);
  b.chain(ch, loop, cap);
  b.edge(h, ch);  // the child and the library call touch x too: after the first chain
  return b.build();
}

TEST(EngineFaultInjection, EveryFailingCallIsReportedAndNothingLeaks) {
  std::vector<std::string> clean_run;
  {
    cudag::native::recorder rec;
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1000)};
    auto e = cudag::instantiate(every_kind(), binds);
    e.set_rebind_policy(cudag::rebind_policy::node_setters);
    e.rebind("n", 7);
    e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    e.rebind("x", dev_x2);
    e.launch(nullptr);
    clean_run = rec.calls();
    ASSERT_EQ(clean_run.size(), rec.call_count());
  }
  ASSERT_GT(clean_run.size(), 30u);
  for (std::size_t k = 0; k < clean_run.size(); ++k) {
    // Destroying never fails for a live handle, and destructors ignore it.
    if (clean_run[k].find("_destroy ") != std::string::npos) continue;
    cudag::native::recorder rec;
    rec.fail_call(k, cudaErrorMemoryAllocation);
    std::string failed_call;
    {
      const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1000)};
      try {
        auto e = cudag::instantiate(every_kind(), binds);
        try {
          e.set_rebind_policy(cudag::rebind_policy::node_setters);
          e.rebind("n", 7);
          e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
          e.rebind("x", dev_x2);
        } catch (const cudag::error& err) {
          failed_call = err.call();
          EXPECT_EQ(err.code(), cudaErrorMemoryAllocation) << err.what();
          if (failed_call != "cudaGraphExecUpdate") {  // a whole-graph failure names no node
            EXPECT_FALSE(err.node().empty()) << "call " << k << ": " << err.what();
          }
        }
        if (failed_call.empty()) {
          try {
            e.launch(nullptr);
          } catch (const cudag::error& err) {
            failed_call = err.call();
          }
        } else {
          e.launch(nullptr);  // an exec whose rebind failed still launches
        }
      } catch (const cudag::error& err) {
        failed_call = err.call();
        EXPECT_EQ(err.code(), cudaErrorMemoryAllocation) << err.what();
      }
    }
    EXPECT_FALSE(failed_call.empty()) << "call " << k << " failed but nothing said which";
    EXPECT_EQ(rec.live_graphs(), 0u) << "call " << k << " (" << failed_call << ")\n"
                                     << rec.transcript();
    EXPECT_EQ(rec.live_execs(), 0u) << "call " << k << " (" << failed_call << ")";
    EXPECT_EQ(rec.live_streams(), 0u) << "call " << k << " (" << failed_call << ")";
    EXPECT_TRUE(rec.misuse().empty()) << "call " << k << ": " << rec.misuse().front();
    if (HasFailure()) break;  // one readable report, not hundreds
  }
}

}  // namespace
