// What a CUDA graph keeps alive by itself (cudag/retained.hpp), without a
// GPU: lower() hands the objects its graph points at (host-node callables,
// a kernel's module, a captured node's library) to the CUDA graph as one
// user object; an exec instantiated from that graph outlives the spec, the
// lowered_graph and its `owned`, and runs; the objects are released only
// after the last graph and exec holding them are gone, on the program's
// thread. A failure to retain names the call and the graph, and leaks
// nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/native_api.hpp"
#include "cudag/native_recorder.hpp"
#include "cudag/retained.hpp"
#include "recorder_support.hpp"

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

using engine_test::dev_x;
using engine_test::lines;

/// What the graph's nodes point at, seen from outside: each is alive while
/// its weak pointer is.
struct watched {
  std::weak_ptr<const void> module;
  std::weak_ptr<int> host_state;
  std::weak_ptr<int> library;
  [[nodiscard]] bool all_alive() const {
    return !module.expired() && !host_state.expired() && !library.expired();
  }
  [[nodiscard]] bool none_alive() const {
    return module.expired() && host_state.expired() && library.expired();
  }
};

/// A kernel from a "module" (keep_alive), a host node adding its argument to
/// a counter it owns, and a captured node holding a "library handle".
cudag::graph_spec pointing_graph(watched& w) {
  auto module = std::make_shared<int>(7);
  w.module = module;
  auto counter = std::make_shared<int>(0);
  w.host_state = counter;
  auto library = std::make_shared<int>(11);
  w.library = library;
  cudag::builder b("pointing");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  const cudag::kernel_ref<void(float*, float, int)> k{reinterpret_cast<const void*>(&scale), "scale",
                                                      module};
  auto kernel = b.kernel("k", k, cudag::launch(4, 64), x, 2.0f, n);
  auto host = b.host("h", [counter](int v) { *counter += v; }, n);
  auto lib = b.captured("lib", "a library call", [library](cudaStream_t, float*) { (void)*library; }, x);
  b.chain(kernel, host, lib);
  return b.build();
}

TEST(RetainedObjects, AnExecInstantiatedFromALoweredGraphOutlivesEverythingCudagMade) {
  cudag::native::recorder rec;
  watched w;
  cudag::unique_graph_exec exec;
  {
    cudag::graph_spec spec = pointing_graph(w);
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 5)};
    cudag::lowered_graph lowered = cudag::lower(spec, binds);
    EXPECT_EQ(rec.calls_starting("user_object_create"),
              std::vector<std::string>{"user_object_create refs=1 flags=1 -> u1"});
    EXPECT_EQ(rec.calls_starting("graph_retain_user_object"),
              std::vector<std::string>{"graph_retain_user_object g1 u1 count=1 move"});
    exec = cudag::instantiate_native(lowered.graph.get(), {});
  }  // the spec, the lowered graph (its CUDA graph too) and `owned`: gone
  EXPECT_EQ(rec.live_graphs(), 0u);
  ASSERT_TRUE(w.all_alive()) << "the exec's host callable, module or library died with cudag's objects";
  // The exec runs its host node: the callable and its counter are alive.
  cudag::unique_stream s = cudag::make_stream();
  ASSERT_EQ(cudag::native::api().launch(exec.get(), s.get()), cudaSuccess);
  ASSERT_EQ(cudag::native::api().launch(exec.get(), s.get()), cudaSuccess);
  {
    const auto counter = std::static_pointer_cast<const int>(w.host_state.lock());
    ASSERT_TRUE(counter);
    EXPECT_EQ(*counter, 10);  // 5, twice
  }
  // The last holder goes (destroyed by the caller, not by cudag): CUDA
  // calls the destructor, which only queues.
  ASSERT_EQ(cudag::native::api().exec_destroy(exec.release()), cudaSuccess);
  EXPECT_EQ(rec.live_user_objects(), 0u);
  EXPECT_TRUE(w.all_alive()) << "released on CUDA's thread";
  EXPECT_EQ(cudag::release_retained_objects(), 1u);
  EXPECT_TRUE(w.none_alive());
  EXPECT_EQ(cudag::release_retained_objects(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(RetainedObjects, TheGraphAndEachExecHoldTheirOwnReference) {
  cudag::native::recorder rec;
  watched w;
  cudag::graph_spec spec = pointing_graph(w);
  const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1)};
  cudag::lowered_graph lowered = cudag::lower(spec, binds);
  lowered.owned.clear();
  spec = {};
  cudag::unique_graph_exec first = cudag::instantiate_native(lowered.graph.get(), {});
  cudag::unique_graph_exec second = cudag::instantiate_native(lowered.graph.get(), {});
  lowered.graph.reset();
  first.reset();
  EXPECT_TRUE(w.all_alive());
  // cudag's handles release what the last one held as they destroy it.
  second.reset();
  EXPECT_TRUE(w.none_alive());
  EXPECT_EQ(cudag::release_retained_objects(), 0u);
}

TEST(RetainedObjects, AGraphThatPointsAtNothingMakesNoUserObject) {
  cudag::native::recorder rec;
  cudag::builder b("plain");
  auto x = b.param<float*>("x");
  b.kernel("k", &scale, cudag::launch(4, 64), x, 2.0f, 256);
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  const cudag::lowered_graph lowered = cudag::lower(b.build(), binds);
  EXPECT_TRUE(rec.calls_starting("user_object_create").empty()) << rec.transcript();
  EXPECT_FALSE(lowered.owned.empty());  // what lowering used (values, failures) stays the caller's
}

TEST(RetainedObjects, AFailureToRetainNamesTheCallAndTheGraphAndLeaksNothing) {
  for (const char* call : {"user_object_create", "graph_retain_user_object"}) {
    SCOPED_TRACE(call);
    cudag::native::recorder rec;
    watched w;
    {
      const cudag::graph_spec spec = pointing_graph(w);
      const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1)};
      rec.fail_next(call, cudaErrorMemoryAllocation);
      try {
        (void)cudag::lower(spec, binds);
        ADD_FAILURE() << "the failure was not reported";
      } catch (const cudag::error& e) {
        EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
        EXPECT_EQ(e.call(), std::string(call) == "user_object_create" ? "cudaUserObjectCreate"
                                                                       : "cudaGraphRetainUserObject");
        EXPECT_NE(std::string(e.what()).find("pointing"), std::string::npos) << e.what();
      }
    }
    (void)cudag::release_retained_objects();
    EXPECT_TRUE(w.none_alive());
    EXPECT_EQ(rec.live_graphs(), 0u);
    EXPECT_EQ(rec.live_user_objects(), 0u);
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
}

TEST(RetainedObjects, AddToCaptureHandsThemToTheCapturedGraph) {
  cudag::native::recorder rec;
  watched w;
  const cudag::graph_spec spec = pointing_graph(w);
  const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 1)};
  cudag::unique_stream s = cudag::make_stream();
  cudaGraph_t captured = nullptr;
  ASSERT_EQ(cudag::native::api().stream_begin_capture(s.get(), cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const cudag::graph_in_capture added = cudag::add_to_capture(s.get(), spec, binds);
    (void)added;
  }
  ASSERT_EQ(cudag::native::api().stream_end_capture(s.get(), &captured), cudaSuccess);
  EXPECT_EQ(rec.calls_starting("graph_retain_user_object").size(), 1u) << rec.transcript();
  EXPECT_TRUE(w.all_alive());
  ASSERT_EQ(cudag::native::api().graph_destroy(captured), cudaSuccess);
  EXPECT_EQ(cudag::release_retained_objects(), 1u);
  EXPECT_TRUE(w.all_alive()) << "the spec still holds them";
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

}  // namespace
