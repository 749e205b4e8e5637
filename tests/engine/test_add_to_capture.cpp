// A spec added in place to a stream capture in progress (add_to_capture),
// checked without a GPU: its roots follow what the stream captured so far,
// the stream's later work follows its leaves, conditional nodes are added
// as they are, and a failure takes back what was added.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_nodes.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::lines;
using engine_test::dev_x;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void step(cudaGraphConditionalHandle h, int* counter) { (void)h, (void)counter; }

// Above 4 GiB, as device addresses are: a pointer copied in part shows.
int* const dev_counter = reinterpret_cast<int*>(0x7f5a07300000);

/// first -> loop (while: body `again`), and `side` on its own.
cudag::graph_spec looping(const std::string& name) {
  cudag::builder b(name);
  auto x = b.param<float*>("x");
  auto keep_going = b.condition("keep_going", 1);
  cudag::builder loop_body("loop_body");
  loop_body.kernel("again", &step, cudag::launch(1, 1), keep_going, dev_counter);
  auto first = b.kernel("first", &scale, cudag::launch(1, 64), x, 2.0f, 64);
  auto loop = b.while_loop("loop", keep_going, loop_body.build());
  b.empty("side");
  b.edge(first, loop);
  return b.build();
}

TEST(AddToCapture, TheSpecJoinsTheCaptureBetweenWhatCameBeforeAndWhatComesAfter) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_kernel(&step, "step");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_counter, "counter");
  {
    cudag::unique_stream s = cudag::make_stream();
    cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    rec.clear();
    cudag::graph_in_capture one = cudag::add_to_capture(s.get(), looping("one"), binds);
    cudag::graph_in_capture two = cudag::add_to_capture(s.get(), looping("two"), binds);
    cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
    const std::vector<std::string> calls = rec.calls();
    const std::string text = lines(calls);
    if (std::getenv("CUDAG_SHOW_CALLS")) std::printf("%s", text.c_str());
    // The first spec starts from an empty capture; its leaves (loop, side)
    // become the stream's dependencies, and the second spec's roots (first,
    // side) follow them.
    EXPECT_NE(text.find("stream_get_capture_info s1 -> g1 deps=[]\n"), std::string::npos) << text;
    EXPECT_NE(text.find("stream_update_capture_dependencies s1 set [n2,n4]\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("stream_get_capture_info s1 -> g1 deps=[n2,n4]\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("add_kernel_node n5 g1 deps=[n2,n4] scale"), std::string::npos) << text;
    EXPECT_NE(text.find("add_empty_node n8 g1 deps=[n2,n4]"), std::string::npos) << text;
    EXPECT_NE(text.find("stream_update_capture_dependencies s1 set [n6,n8]\n"), std::string::npos)
        << text;
    // The conditional node is added to the capture's graph as it is.
    EXPECT_NE(text.find("add_node n2 g1 deps=[n1] conditional while"), std::string::npos) << text;
    EXPECT_EQ(calls.back(), "stream_end_capture s1 -> g1");
    ASSERT_EQ(one.nodes.size(), 3u);
    EXPECT_EQ(one.nodes[0].first, "first");
    EXPECT_EQ(one.nodes[1].first, "loop");
    EXPECT_EQ(one.nodes[2].first, "side");
    EXPECT_EQ(two.nodes.size(), 3u);
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

/// produce -> consume (programmatic), consume -> drain (full), produce ->
/// drain (launch completion).
cudag::graph_spec launched_early(const std::string& name) {
  cudag::builder b(name);
  auto x = b.param<float*>("x");
  const auto marked = cudag::synchronizes_grid_dependencies(cudag::kernel_of(&scale, "scale"));
  auto produce = b.kernel("produce", &scale, cudag::launch(1, 64), x, 1.0f, 64);
  auto consume = b.kernel("consume", marked, cudag::launch(1, 64), x, 2.0f, 64);
  auto drain = b.kernel("drain", marked, cudag::launch(1, 64), x, 3.0f, 64);
  b.edge(produce, consume, cudag::edge_kind::programmatic);
  b.edge(consume, drain);
  b.edge(produce, drain, cudag::edge_kind::launch_completion);
  return b.build();
}

TEST(AddToCapture, TypedEdgesInsideTheSpecKeepTheirEdgeData) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  {
    cudag::unique_stream s = cudag::make_stream();
    cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    // Work captured before: the spec's root follows it through a full edge.
    cudag::graph_in_capture before = cudag::add_to_capture(s.get(), looping("before"), binds);
    rec.clear();
    cudag::graph_in_capture early = cudag::add_to_capture(s.get(), launched_early("early"), binds);
    cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
    const std::string text = lines(rec.calls());
    if (std::getenv("CUDAG_SHOW_CALLS")) std::printf("%s", text.c_str());
    EXPECT_NE(text.find("add_kernel_node n5 g1 deps=[n2,n4] scale"), std::string::npos) << text;
    EXPECT_NE(text.find("add_node n6 g1 deps=[n5:programmatic] scale"), std::string::npos) << text;
    EXPECT_NE(text.find("add_node n7 g1 deps=[n6,n5:launch_completion] scale"), std::string::npos)
        << text;
    // The stream's later work follows the spec's leaf through a full edge.
    EXPECT_NE(text.find("stream_update_capture_dependencies s1 set [n7]\n"), std::string::npos)
        << text;
    const std::string state = rec.graph_state(captured.get());
    EXPECT_NE(state.find("add_node deps=[3:programmatic] scale"), std::string::npos) << state;
    EXPECT_NE(state.find("add_node deps=[4,3:launch_completion] scale"), std::string::npos) << state;
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
}

TEST(AddToCapture, ACaptureWhoseDependenciesAreTypedIsReadWithTheirEdgeData) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  {
    cudag::unique_stream s = cudag::make_stream();
    cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    cudag::graph_in_capture before = cudag::add_to_capture(s.get(), launched_early("before"), binds);
    // What a library leaves after a kernel captured with programmatic
    // stream serialization: the capture's dependency is programmatic.
    cudaGraphNode_t last = before.nodes.back().second;
    const cudaGraphEdgeData programmatic = cudag::native::edge_data_of(cudag::edge_kind::programmatic);
    ASSERT_EQ(cudag::native::api().stream_update_capture_dependencies(s.get(), &last, &programmatic, 1,
                                                                      cudaStreamSetCaptureDependencies),
              cudaSuccess);
    // A query without edge data is refused, as CUDA 13 refuses it.
    cudaStreamCaptureStatus status{};
    const cudaGraphNode_t* deps = nullptr;
    std::size_t count = 0;
    EXPECT_EQ(cudag::native::api().stream_get_capture_info(s.get(), &status, nullptr, nullptr, &deps, nullptr,
                                                           &count),
              cudaErrorLossyQuery);
    rec.clear();
    cudag::graph_in_capture after = cudag::add_to_capture(s.get(), looping("after"), binds);
    cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
    const std::string text = lines(rec.calls());
    EXPECT_NE(text.find("stream_get_capture_info s1 -> g1 deps=[n3:programmatic]\n"), std::string::npos) << text;
    // The spec's roots follow it through full edges: they wait for all of it.
    EXPECT_NE(text.find("add_kernel_node n4 g1 deps=[n3] scale"), std::string::npos) << text;
    EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  }
}

TEST(AddToCapture, AStreamThatIsNotCapturingIsRefusedNamingTheGraph) {
  cudag::native::recorder rec;
  cudag::unique_stream s = cudag::make_stream();
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  try {
    (void)cudag::add_to_capture(s.get(), looping("late"), binds);
    FAIL() << "a stream that is not capturing was accepted";
  } catch (const cudag::error& e) {
    EXPECT_STREQ(e.what(), "graph 'late': the stream is not capturing (begin a capture on it first)");
    EXPECT_EQ(e.code(), cudaErrorIllegalState);
  }
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(AddToCapture, AFailureTakesBackWhatWasAddedAndLeavesTheCaptureAsItWas) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  cudag::unique_stream s = cudag::make_stream();
  cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
  cudag::builder b("partial");
  auto x = b.param<float*>("x");
  auto a = b.kernel("a", &scale, cudag::launch(1, 64), x, 1.0f, 64);
  auto c = b.kernel("c", &scale, cudag::launch(1, 64), x, 3.0f, 64);
  b.edge(a, c);
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  rec.clear();
  rec.fail_call(2, cudaErrorMemoryAllocation);  // info, add a, then add c fails
  try {
    (void)cudag::add_to_capture(s.get(), b.build(), binds);
    FAIL() << "the injected failure was not reported";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "c");
  }
  const std::vector<std::string> calls = rec.calls();
  ASSERT_EQ(calls.size(), 4u) << lines(calls);
  EXPECT_EQ(calls[3], "graph_destroy_node n1");
  EXPECT_EQ(lines(rec.calls_starting("stream_update_capture_dependencies")), "");
  cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(AddToCapture, HostNodesOfTheSpecRunWhenTheCapturedGraphRuns) {
  cudag::native::recorder rec;
  int seen = 0;
  cudag::builder b("reporting");
  auto v = b.param<int>("v");
  b.host("report", [&seen](int value) { seen = value; }, v);
  const cudag::binding binds[] = {cudag::bind("v", 42)};
  cudag::unique_stream s = cudag::make_stream();
  cudag::native::begin_capture(s.get(), cudaStreamCaptureModeThreadLocal, "test");
  cudag::graph_in_capture inserted = cudag::add_to_capture(s.get(), b.build(), binds);
  cudag::unique_graph captured = cudag::native::end_capture(s.get(), "test");
  cudag::unique_graph_exec e = cudag::instantiate_native(captured.get(), {});
  ASSERT_EQ(cudag::native::api().launch(e.get(), s.get()), cudaSuccess);
  EXPECT_EQ(seen, 42);
  EXPECT_FALSE(inserted.host_failures->failed());
}

}  // namespace
