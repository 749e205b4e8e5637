// Structural rejections (names, dependencies, cycles) and the deterministic
// topological order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <unordered_map>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

// Oracles written here, independent of the library: a valid topological
// order is a permutation of the node indices in which every edge goes
// forward; the deterministic one takes, among the ready nodes, the one
// declared first (found by a plain scan, O(V^2)).
void expect_valid_topological_order(const graph_spec& g, const std::vector<std::size_t>& order) {
  ASSERT_EQ(order.size(), g.nodes.size());
  std::vector<std::size_t> position(g.nodes.size(), g.nodes.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    ASSERT_LT(order[p], g.nodes.size()) << "position " << p;
    ASSERT_EQ(position[order[p]], g.nodes.size()) << "node " << order[p] << " appears twice";
    position[order[p]] = p;
  }
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  for (std::size_t v = 0; v < g.nodes.size(); ++v)
    for (const std::string& d : g.nodes[v].deps)
      EXPECT_LT(position[index.at(d)], position[v]) << "edge " << d << " -> " << g.nodes[v].name;
}

std::string node_name(std::size_t i) {
  std::string name = "n";
  name += std::to_string(i);
  return name;
}

std::vector<std::size_t> lowest_declared_ready_first(const graph_spec& g) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  std::vector<bool> done(g.nodes.size(), false);
  std::vector<std::size_t> order;
  while (order.size() < g.nodes.size()) {
    std::size_t pick = g.nodes.size();
    for (std::size_t v = 0; v < g.nodes.size() && pick == g.nodes.size(); ++v) {
      if (done[v]) continue;
      bool ready = true;
      for (const std::string& d : g.nodes[v].deps) ready = ready && done[index.at(d)];
      if (ready) pick = v;
    }
    if (pick == g.nodes.size()) break;  // a cycle: not produced by the tests below
    done[pick] = true;
    order.push_back(pick);
  }
  return order;
}

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

TEST(CheckStructure, NestingBeyondTheLimitIsRefusedWithoutRecursingThroughIt) {
  graph_spec deep = nested_loops(20000);  // far past what a thread's stack would survive
  try {
    check(deep);
    ADD_FAILURE() << "expected a check_error";
  } catch (const check_error& e) {
    EXPECT_NE(std::string(e.what()).find("is nested 65 graphs deep"), std::string::npos) << e.what();
    EXPECT_EQ(e.node(), loop_path(64)) << e.what();
  }
  dismantle(deep);

  graph_spec at_limit = nested_loops(64);
  EXPECT_NO_THROW(check(at_limit));
  dismantle(at_limit);
}

TEST(CheckStructure, NamesDifferingInOneByteAreDistinctAndEqualOnesAreNot) {
  // Names of every length up to 20 bytes, each paired with copies that
  // differ in one byte (a NUL or 0xFF among them) at every position: the name
  // table compares short names by length and leading word, so every byte of
  // every length must count.
  for (std::size_t length = 1; length <= 20; ++length) {
    std::string base;
    for (std::size_t i = 0; i < length; ++i) base += static_cast<char>('a' + i % 26);
    graph_spec g;
    g.nodes.push_back(empty(base));
    for (std::size_t at = 0; at < length; ++at) {
      for (char replacement : {'\0', '\xff', 'Z'}) {
        std::string other = base;
        other[at] = replacement;
        g.nodes.push_back(empty(other, {base}));
      }
    }
    g.nodes.push_back(empty(base + std::string(1, '\0'), {base}));  // one byte longer
    EXPECT_NO_THROW(check(g)) << "length " << length;
    EXPECT_EQ(topological_order(g).size(), g.nodes.size());
    g.nodes.push_back(empty(base));
    expect_rejected([&] { check(g); }, {"node name '" + base + "' is used twice"}, {base});
  }
}

TEST(CheckStructure, TopologicalOrderTakesLowestDeclaredReadyNode) {
  // Declared out of order: d depends on b and c, b on a, c on nothing.
  const graph_spec g = graph({empty("d", {"b", "c"}), empty("b", {"a"}), empty("c"), empty("a"),
                              empty("e")});
  // Ready at start: c(2), a(3), e(4). Take c, then a, which frees b(1): b < e.
  const std::vector<std::size_t> expected{2, 3, 1, 0, 4};
  EXPECT_EQ(topological_order(g), expected);
  expect_valid_topological_order(g, topological_order(g));
  EXPECT_EQ(lowest_declared_ready_first(g), expected);  // the oracle agrees with the hand count
}

TEST(CheckStructure, TopologicalOrderTieBreakIsDeclarationOrderAmongReadyNodes) {
  // Three independent chains declared interleaved and backwards inside each
  // chain: c2 <- c1 <- c0, b1 <- b0, a0. Ready at start: a0(2), b0(4), c0(5).
  const graph_spec g = graph({empty("c2", {"c1"}), empty("b1", {"b0"}), empty("a0"), empty("c1", {"c0"}),
                              empty("b0"), empty("c0")});
  // a0(2); then b0(4) frees b1(1): take b1(1) before c0(5); then c0, c1(3), c2(0).
  EXPECT_EQ(topological_order(g), (std::vector<std::size_t>{2, 4, 1, 5, 3, 0}));
}

TEST(CheckStructure, TopologicalOrderMatchesIndependentOracleOnRandomDags) {
  std::mt19937 random(2024);
  for (const std::size_t count : {1u, 2u, 17u, 200u, 1000u}) {
    // A random DAG over ranks 0..count-1 (edges from lower to higher rank),
    // nodes declared in shuffled order.
    std::vector<std::size_t> declared_at(count);
    for (std::size_t i = 0; i < count; ++i) declared_at[i] = i;
    std::shuffle(declared_at.begin(), declared_at.end(), random);
    graph_spec g;
    for (std::size_t i = 0; i < count; ++i) g.nodes.push_back(empty(node_name(i)));
    std::set<std::pair<std::size_t, std::size_t>> taken;
    std::uniform_int_distribution<std::size_t> rank(0, count - 1);
    for (std::size_t e = 0; count > 1 && e < 2 * count; ++e) {
      std::size_t a = rank(random), b = rank(random);
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      if (!taken.insert({a, b}).second) continue;
      g.nodes[declared_at[b]].deps.push_back(node_name(declared_at[a]));
    }
    const std::vector<std::size_t> order = topological_order(g);
    SCOPED_TRACE(std::to_string(count) + " nodes");
    expect_valid_topological_order(g, order);
    EXPECT_EQ(order, lowest_declared_ready_first(g));
  }
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
