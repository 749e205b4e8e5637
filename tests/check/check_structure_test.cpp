// Structural rejections (names, dependencies, cycles) and the deterministic
// topological order.
#include <gtest/gtest.h>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

TEST(CheckStructure, EmptyNameIsRefused) {
  const graph_spec g = graph({empty("a"), empty("")});
  expect_rejected([&] { check(g); }, {"node #1", "empty name"}, {"#1"});
}

TEST(CheckStructure, DuplicateNameIsRefused) {
  const graph_spec g = graph({empty("a"), empty("b"), empty("a")}, {}, {}, "pipeline");
  expect_rejected([&] { check(g); }, {"'a' is used twice", "graph 'pipeline'", "#0", "#2"},
                  {"a"});
}

TEST(CheckStructure, DependencyOnUnknownNodeIsRefused) {
  const graph_spec g = graph({empty("a"), empty("b", {"a", "ghost"})});
  expect_rejected([&] { check(g); }, {"node 'b' depends on 'ghost'", "not a node of"},
                  {"b", "ghost"});
}

TEST(CheckStructure, RepeatedDependencyIsRefused) {
  const graph_spec g = graph({empty("a"), empty("b", {"a", "a"})});
  expect_rejected([&] { check(g); }, {"'b' lists its dependency 'a' twice"}, {"a", "b"});
}

TEST(CheckStructure, CycleIsPrintedAsPath) {
  // a -> b -> c -> a, plus an unrelated root.
  const graph_spec g =
      graph({empty("root"), empty("a", {"c", "root"}), empty("b", {"a"}), empty("c", {"b"})});
  expect_rejected([&] { check(g); }, {"has a cycle: a -> b -> c -> a"}, {"a", "b", "c"});
  expect_rejected([&] { (void)topological_order(g); }, {"a -> b -> c -> a"}, {"a", "b", "c"});
}

TEST(CheckStructure, SelfDependencyIsACycle) {
  const graph_spec g = graph({empty("a", {"a"})});
  expect_rejected([&] { check(g); }, {"cycle: a -> a"}, {"a"});
}

TEST(CheckStructure, CycleInsideChildGraphIsNamedByPath) {
  auto inner = std::make_shared<graph_spec>(graph({empty("x", {"y"}), empty("y", {"x"})}));
  const graph_spec g = graph({make_node("sub", child_node{inner})});
  expect_rejected([&] { check(g); }, {"child graph of 'sub'", "sub/x -> sub/y -> sub/x"},
                  {"sub/x", "sub/y"});
}

TEST(CheckStructure, UnknownDependencyInBodyIsNamedByPath) {
  const graph_spec body = graph({empty("k", {"nowhere"})});
  const graph_spec g = graph({make_node("loop", conditional(conditional_kind::while_loop, "go", {body}))},
                             {}, {declare_condition("go")});
  expect_rejected([&] { check(g); }, {"'loop/k' depends on 'nowhere'", "body of 'loop'"},
                  {"loop/k", "loop/nowhere"});
}

TEST(CheckStructure, DependencyOnNodeOfEnclosingGraphIsRefused) {
  auto inner = std::make_shared<graph_spec>(graph({empty("x", {"start"})}));
  const graph_spec g = graph({empty("start"), make_node("sub", child_node{inner}, {"start"})});
  expect_rejected([&] { check(g); },
                  {"node 'sub/x' depends on 'start', a node of the top-level graph",
                   "not of the child graph of 'sub'", "within one graph"},
                  {"sub/x", "start"});
}

TEST(CheckStructure, ChildGraphContainingItselfIsRefused) {
  auto looped = std::make_shared<graph_spec>();
  looped->nodes.push_back(make_node("again", child_node{looped}));
  try {
    check(*looped);
    ADD_FAILURE() << "expected a check_error";
  } catch (const check_error& e) {
    EXPECT_NE(std::string(e.what()).find("graphs deep; a child graph probably contains itself"),
              std::string::npos)
        << e.what();
    ASSERT_EQ(e.nodes().size(), 1u);
    EXPECT_EQ(e.nodes().front().rfind("again/again/again", 0), 0u) << e.nodes().front();
  }
  looped->nodes.clear();  // break the ownership cycle
}

TEST(CheckStructure, TopologicalOrderTakesLowestDeclaredReadyNode) {
  // Declared out of order: d depends on b and c, b on a, c on nothing.
  const graph_spec g = graph({empty("d", {"b", "c"}), empty("b", {"a"}), empty("c"), empty("a"),
                              empty("e")});
  // Ready at start: c(2), a(3), e(4). Take c, then a, which frees b(1): b < e.
  const std::vector<std::size_t> expected{2, 3, 1, 0, 4};
  EXPECT_EQ(topological_order(g), expected);
  EXPECT_EQ(topological_order(g), topological_order(g));
}

TEST(CheckStructure, TopologicalOrderOfIndependentNodesIsDeclarationOrder) {
  const graph_spec g = graph({empty("z"), empty("y"), empty("x")});
  EXPECT_EQ(topological_order(g), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(CheckStructure, EmptyGraphIsAccepted) {
  const graph_spec g;
  EXPECT_NO_THROW(check(g));
  EXPECT_TRUE(topological_order(g).empty());
}

}  // namespace
}  // namespace cudag
