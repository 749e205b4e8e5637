// One set of rules: every shape mistake the DSL refuses at compile time
// (tests/compile_fail/*.cpp) is refused at run time by check() on the same
// graph built with the builder, naming the same node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }
void set_flag(cudaGraphConditionalHandle h) { (void)h; }

/// check(spec) must throw check_error naming each of `nodes`.
void expect_refused_naming(const cudag::graph_spec& spec, std::vector<std::string> nodes) {
  try {
    cudag::check(spec);
    FAIL() << "check() accepted a graph the DSL refuses";
  } catch (const cudag::check_error& e) {
    for (const std::string& node : nodes) {
      EXPECT_NE(std::string(e.what()).find(node), std::string::npos) << e.what();
      bool listed = false;
      for (const std::string& n : e.nodes()) listed = listed || n == node;
      EXPECT_TRUE(listed) << node << " not in the error's node list: " << e.what();
    }
  }
}

struct fixture {
  cudag::builder b{"graph"};
  cudag::param_handle<float*> x = b.param<float*>("x");
  cudag::param_handle<int> n = b.param<int>("n");
  cudag::param_handle<float*> y = b.param<float*>("y");
  cudag::node_ref scale_node(const std::string& name) {
    return b.kernel(name, &scale, cudag::launch(1, 32), x, 2.0f, n);
  }
  /// axpy(x, y) as combine, its kernel marked or not.
  cudag::node_ref combine_node(bool synchronizing) {
    auto k = cudag::kernel_of(&axpy, "axpy");
    if (synchronizing) k = cudag::synchronizes_grid_dependencies(k);
    return b.kernel("combine", k, cudag::launch(1, 32), x, y, 3.0f, n);
  }
};

TEST(RuleTwins, Cycle) {
  fixture f;
  auto n1 = f.scale_node("n1"), n8 = f.scale_node("n8"), n16 = f.scale_node("n16");
  f.b.chain(n1, n8, n16);
  f.b.edge(n16, n8);
  expect_refused_naming(f.b.build(), {"n8", "n16"});
}

TEST(RuleTwins, SelfEdge) {
  fixture f;
  f.scale_node("loop_back");
  cudag::graph_spec spec = f.b.build();
  spec.nodes[0].deps.push_back("loop_back");  // the builder refuses a self edge at once
  expect_refused_naming(spec, {"loop_back"});
}

TEST(RuleTwins, DuplicateNode) {
  fixture f;
  f.scale_node("scale_twice");
  cudag::graph_spec spec = f.b.build();
  spec.nodes.push_back(spec.nodes[0]);  // the builder refuses the second at once
  expect_refused_naming(spec, {"scale_twice"});
}

TEST(RuleTwins, UnknownEdgeNode) {
  fixture f;
  f.scale_node("n10");
  f.scale_node("n11");
  cudag::graph_spec spec = f.b.build();
  spec.nodes[0].deps.push_back("n_typo");  // edges point backwards in a spec: n_typo -> n10
  expect_refused_naming(spec, {"n_typo"});
}

TEST(RuleTwins, EmptyNodeName) {
  fixture f;
  f.b.empty("start");
  cudag::graph_spec spec = f.b.build();
  spec.nodes.push_back(spec.nodes[0]);
  spec.nodes[1].name.clear();
  expect_refused_naming(spec, {"#1"});
}

TEST(RuleTwins, ParameterTwoTypes) {
  cudag::builder b;
  auto data_f = b.param<float*>("data");
  b.memset("clear_f", data_f, 0, 16);
  cudag::builder inner("inner");
  inner.memset("clear_i", inner.param<int*>("data"), 0, 16);
  b.child("stage", inner.build());
  try {  // a parameter, not a node: the message names it
    cudag::check(b.build());
    FAIL() << "check() accepted a parameter declared with two types";
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'data'"), std::string::npos) << e.what();
  }
}

TEST(RuleTwins, BufferBeforeAlloc) {
  fixture f;
  auto alloc = f.b.alloc<float>("tmp", 256);
  auto use = f.b.kernel("use_tmp", &scale, cudag::launch(1, 256), alloc.buffer, 2.0f, 256);
  auto release = f.b.free("free_tmp", alloc.buffer);
  f.b.edge(alloc.node, release);
  (void)use;
  expect_refused_naming(f.b.build(), {"use_tmp"});
}

TEST(RuleTwins, BufferAfterFree) {
  fixture f;
  auto alloc = f.b.alloc<float>("tmp", 256);
  auto use = f.b.kernel("use_tmp", &scale, cudag::launch(1, 256), alloc.buffer, 2.0f, 256);
  auto release = f.b.free("free_tmp", alloc.buffer);
  auto late = f.b.kernel("late", &scale, cudag::launch(1, 256), alloc.buffer, 1.0f, 256);
  f.b.chain(alloc.node, use, release, late);
  expect_refused_naming(f.b.build(), {"late"});
}

TEST(RuleTwins, BufferFreedTwice) {
  fixture f;
  auto alloc = f.b.alloc<float>("tmp", 256);
  auto use = f.b.kernel("use", &scale, cudag::launch(1, 32), alloc.buffer, 1.0f, f.n);
  auto free_a = f.b.free("free_a", alloc.buffer);
  auto free_b = f.b.free("free_b", alloc.buffer);
  f.b.chain(alloc.node, use, free_a);
  f.b.edge(use, free_b);
  expect_refused_naming(f.b.build(), {"free_a", "free_b"});
}

TEST(RuleTwins, FreeNeverAllocated) {
  fixture f;
  auto use = f.scale_node("use");
  auto release = f.b.free("release", cudag::buffer_handle<float>{"tmp", 0});
  f.b.edge(use, release);
  expect_refused_naming(f.b.build(), {"release"});
}

TEST(RuleTwins, BufferNeverAllocated) {
  fixture f;
  f.b.kernel("use", &scale, cudag::launch(1, 32), cudag::buffer_handle<float>{"tmp", 0}, 1.0f, f.n);
  expect_refused_naming(f.b.build(), {"use"});
}

TEST(RuleTwins, SwitchWithoutCases) {
  fixture f;
  auto which = f.b.condition("which");
  f.b.switch_case("pick", which, {});
  expect_refused_naming(f.b.build(), {"pick"});
}

TEST(RuleTwins, ConditionNeverTested) {
  fixture f;
  auto more = f.b.condition("more");
  f.b.kernel("decide", &set_flag, cudag::launch(1, 1), more);
  try {
    cudag::check(f.b.build());
    FAIL() << "check() accepted a condition no conditional node tests";
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("'more'"), std::string::npos) << e.what();
    // The node the DSL's error names, "more (read by node decide)".
    EXPECT_EQ(e.nodes(), std::vector<std::string>{"decide"}) << e.what();
  }
}

TEST(RuleTwins, ConditionTestedTwice) {
  fixture f;
  auto more = f.b.condition("more", 1);
  cudag::builder body("body");
  body.kernel("step", &scale, cudag::launch(1, 32), body.param<float*>("x"), 2.0f,
              body.param<int>("n"));
  auto loop = f.b.while_loop("loop", more, body.build());
  auto again = f.b.while_loop("again", more, body.build());
  f.b.edge(loop, again);
  expect_refused_naming(f.b.build(), {"loop", "again"});
}

TEST(RuleTwins, ConditionTestedTwiceNested) {
  fixture f;
  auto more = f.b.condition("more", 1);
  cudag::builder body("body");
  body.kernel("step", &scale, cudag::launch(1, 32), body.param<float*>("x"), 2.0f,
              body.param<int>("n"));
  cudag::builder nested("nested");
  nested.while_loop("again", more, body.build());
  auto loop = f.b.while_loop("loop", more, body.build());
  auto inner = f.b.child("inner", nested.build());
  f.b.edge(loop, inner);
  expect_refused_naming(f.b.build(), {"loop", "inner/again"});
}

TEST(RuleTwins, HostInWhileBody) {
  fixture f;
  auto more = f.b.condition("more");
  cudag::builder body("body");
  auto body_n = body.param<int>("n");
  auto step = body.kernel("step", &scale, cudag::launch(1, 32), body.param<float*>("x"), 2.0f,
                          body_n);
  auto report = body.host("report", [](int v) { (void)v; }, body_n);
  body.edge(step, report);
  f.b.while_loop("iterate", more, body.build());
  expect_refused_naming(f.b.build(), {"iterate/report"});
}

TEST(RuleTwins, EventInIfBody) {
  fixture f;
  auto flag = f.b.condition("flag");
  cudag::builder inner("inner");
  inner.record("signal", inner.param<cudaEvent_t>("event"));
  cudag::builder body("body");
  body.child("wrapped", inner.build());
  f.b.if_then("maybe", flag, body.build());
  expect_refused_naming(f.b.build(), {"maybe/wrapped/signal"});
}

TEST(RuleTwins, AllocInSwitchBody) {
  fixture f;
  auto which = f.b.condition("which");
  cudag::builder case0("case0");
  case0.kernel("zero", &scale, cudag::launch(1, 32), case0.param<float*>("x"), 0.0f,
               case0.param<int>("n"));
  cudag::builder case1("case1");
  case1.alloc<float>("grab", 64);
  f.b.switch_case("pick", which, {case0.build(), case1.build()});
  expect_refused_naming(f.b.build(), {"pick[1]/grab"});
}

// Typed edges (tests/compile_fail/typed_edge_*, edge_of_two_kinds).
TEST(RuleTwins, TypedEdgeIntoUnsynchronizedKernel) {
  fixture f;
  auto warm = f.scale_node("warm");
  auto combine = f.combine_node(false);
  f.b.edge(warm, combine, cudag::edge_kind::programmatic);
  expect_refused_naming(f.b.build(), {"combine"});
}

TEST(RuleTwins, TypedEdgeFromMemset) {
  fixture f;
  auto clear = f.b.memset("clear_y", f.y, 0, 1024);
  auto combine = f.combine_node(true);
  f.b.edge(clear, combine, cudag::edge_kind::launch_completion);
  expect_refused_naming(f.b.build(), {"combine"});  // check() names the node the edge leads into
}

TEST(RuleTwins, TypedEdgeIntoEmptyNode) {
  fixture f;
  auto warm = f.scale_node("warm");
  auto join = f.b.empty("join");
  f.b.edge(warm, join, cudag::edge_kind::programmatic);
  expect_refused_naming(f.b.build(), {"join"});
}

TEST(RuleTwins, EdgeOfTwoKinds) {
  // The builder refuses the second declaration at once, naming the edge.
  fixture f;
  auto warm = f.scale_node("warm");
  auto combine = f.combine_node(true);
  f.b.edge(warm, combine, cudag::edge_kind::programmatic);
  try {
    f.b.edge(warm, combine);
    FAIL() << "an edge of two kinds was accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("edge warm -> combine is programmatic and is added again as full"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.node(), "combine");
  }
}

}  // namespace
