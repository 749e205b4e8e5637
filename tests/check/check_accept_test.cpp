// One valid spec holding every node kind, accepted with and without bindings.
#include <gtest/gtest.h>

#include <algorithm>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

graph_spec every_kind() {
  auto child = std::make_shared<graph_spec>(
      graph({make_node("inner", kernel({buffer<float*>("scratch"), param<int>("n")}))}, {}, {},
            "inner_graph"));
  captured_node captured{std::make_shared<const capture_function>(
                             [](cudaStream_t, std::span<const void* const>) {}),
                         {param<const float*>("x")}, "library call"};
  const graph_spec loop_body = graph({make_node("step", kernel({condition("keep_going")}))});
  const graph_spec then_body = graph({make_node("then_k", kernel())});
  const graph_spec else_body = graph({empty("nothing")});
  const graph_spec case0 = graph({make_node("c0", memset_of(param<void*>("y")))});
  const graph_spec case1 = graph({make_node("c1", memcpy_node{param<void*>("y"), param<const void*>("x"), 64,
                                                              cudaMemcpyDeviceToDevice})});

  return graph(
      {
          make_node("alloc", alloc("scratch", 4096)),
          make_node("upload", memcpy_node{buffer<void*>("scratch"), param<const void*>("x"), 4096,
                                          cudaMemcpyDefault},
                    {"alloc"}),
          make_node("clear", memset_of(param<void*>("y"))),
          make_node("compute", kernel({buffer<const float*>("scratch", 16), param<float*>("y"),
                                       make_literal(2.0f), param<int>("n")}),
                    {"upload", "clear"}),
          make_node("sub", child_node{child}, {"compute"}),
          make_node("library", captured, {"compute"}),
          make_node("join", empty_node{}, {"sub", "library"}),
          make_node("record", event_record_node{param<cudaEvent_t>("done")}, {"join"}),
          make_node("wait", event_wait_node{param<cudaEvent_t>("done")}, {"record"}),
          make_node("report", host({param<int>("n")}), {"wait"}),
          make_node("loop", conditional(conditional_kind::while_loop, "keep_going", {loop_body}),
                    {"report"}),
          make_node("maybe", conditional(conditional_kind::if_then, "flag", {then_body}), {"loop"}),
          make_node("either", conditional(conditional_kind::if_else, "flag2", {then_body, else_body}),
                    {"loop"}),
          make_node("pick", conditional(conditional_kind::switch_case, "which", {case0, case1}),
                    {"maybe", "either"}),
          make_node("free", free_of("scratch"), {"pick"}),
      },
      {declare<const float*>("x"), declare<float*>("y"), declare<int>("n"),
       declare<cudaEvent_t>("done")},
      {declare_condition("keep_going"), declare_condition("flag"), declare_condition("flag2"),
       declare_condition("which")},
      "every_kind");
}

TEST(CheckAccept, SpecWithEveryNodeKindIsAccepted) {
  const graph_spec g = every_kind();
  // Every alternative of node_params appears at the top level.
  std::vector<bool> seen(std::variant_size_v<node_params>, false);
  for (const node& n : g.nodes) seen[n.params.index()] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), static_cast<long>(seen.size()));

  EXPECT_NO_THROW(check(g));
  // Declared producers first, so Kahn's order taking the first-declared
  // ready node is the declaration order; checked also as a property: a
  // permutation in which every edge goes forward.
  const std::vector<std::size_t> order = topological_order(g);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
  ASSERT_EQ(order.size(), g.nodes.size());
  std::vector<std::size_t> position(g.nodes.size(), g.nodes.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    ASSERT_LT(order[p], g.nodes.size());
    ASSERT_EQ(position[order[p]], g.nodes.size()) << "node " << order[p] << " appears twice";
    position[order[p]] = p;
  }
  for (std::size_t v = 0; v < g.nodes.size(); ++v)
    for (const std::string& d : g.nodes[v].deps) {
      std::size_t u = 0;
      while (u < g.nodes.size() && g.nodes[u].name != d) ++u;
      ASSERT_LT(u, g.nodes.size()) << d;
      EXPECT_LT(position[u], position[v]) << d << " -> " << g.nodes[v].name;
    }
}

TEST(CheckAccept, SpecWithEveryNodeKindAcceptsItsBindings) {
  float x[16] = {};
  float y[16] = {};
  const std::vector<binding> b{bind("x", &x[0]), bind("y", &y[0]), bind("n", 16),
                               bind("done", cudaEvent_t{})};
  EXPECT_NO_THROW(check(every_kind(), b));
}

TEST(CheckAccept, AnalysisOfEveryKindCountsNestedGraphsAsOneNode) {
  const graph_analysis a = analyze(every_kind());
  EXPECT_EQ(a.order.size(), 15u);
  // alloc, upload, compute, sub, join, record, wait, report, loop, maybe, pick, free.
  EXPECT_EQ(a.critical_path, 12u);
}

}  // namespace
}  // namespace cudag
