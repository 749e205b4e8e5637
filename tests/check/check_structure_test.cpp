// Structural rejections (names, dependencies, cycles) and the deterministic
// topological order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <map>
#include <set>
#include <unordered_map>

#include "../../src/check/checked_plan.hpp"
#include "cudag/bindings.hpp"
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

// Past 4096 nodes the library resolves names in two passes (fingerprints of
// every dependency, then lookups) and a graph whose every dependency is
// declared before its dependent skips Kahn's algorithm. The oracle here is
// Kahn's algorithm over a std::set of ready nodes, names through a std::map.
std::vector<std::size_t> lowest_ready_first_by_set(const graph_spec& g) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  std::vector<std::vector<std::size_t>> dependencies(g.nodes.size());
  for (std::size_t v = 0; v < g.nodes.size(); ++v)
    for (const std::string& d : g.nodes[v].deps) dependencies[v].push_back(index.at(d));
  return check_test::lowest_ready_first(dependencies);
}

// Names of four kinds: up to 7 bytes (told by their fingerprint alone),
// exactly 8, longer, and with a NUL byte.
std::string large_graph_name(std::size_t i) {
  std::string digits = std::to_string(i);
  switch (i % 4) {
    case 0: return "n" + digits;
    case 1: return "k" + std::string(7 - std::min<std::size_t>(digits.size(), 7), '0') + digits;
    case 2: return "long_name_" + digits;
    default: return std::string("z\0", 2) + digits;
  }
}

enum class declared { shuffled, in_order, in_order_but_one };

graph_spec large_graph(std::size_t count, declared how, std::uint64_t seed,
                       std::size_t edges_per_node = 3) {
  std::mt19937_64 random(seed);
  std::vector<std::size_t> declared_at(count);
  for (std::size_t i = 0; i < count; ++i) declared_at[i] = i;
  if (how == declared::shuffled) std::shuffle(declared_at.begin(), declared_at.end(), random);
  graph_spec g;
  for (std::size_t i = 0; i < count; ++i) g.nodes.push_back(empty(large_graph_name(i)));
  std::set<std::pair<std::size_t, std::size_t>> taken;
  std::uniform_int_distribution<std::size_t> position(0, count - 1);
  for (std::size_t e = 0; e < edges_per_node * count; ++e) {
    std::size_t a = position(random), b = position(random);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    if (!taken.insert({a, b}).second) continue;
    g.nodes[declared_at[b]].deps.push_back(g.nodes[declared_at[a]].name);
  }
  // One node of many dependencies (past the short lists scanned for
  // repeats), late in the hidden order, named without a NUL byte.
  std::size_t many = count - 1;
  while (declared_at[many] % 4 == 3) --many;
  for (std::size_t a = 0; a < 40; ++a)
    if (taken.insert({a, many}).second)
      g.nodes[declared_at[many]].deps.push_back(g.nodes[declared_at[a]].name);
  if (how == declared::in_order_but_one) {
    // Node 1 waits on a node declared after it (and last).
    g.nodes.push_back(empty("late"));
    g.nodes[1].deps.push_back("late");
  }
  return g;
}

TEST(CheckStructure, LargeGraphsMatchTheOracleDeclaredInAnyOrder) {
  for (const declared how : {declared::shuffled, declared::in_order, declared::in_order_but_one}) {
    // A dense graph (12 edges a node), and one past 2^16 nodes, whose edges
    // are reversed through buckets (csr.hpp).
    for (const auto& [count, edges_per_node] :
         {std::pair<std::size_t, std::size_t>{5000, 3}, {20000, 3}, {5000, 12}, {70000, 3}}) {
      graph_spec g = large_graph(count, how, count + static_cast<std::size_t>(how), edges_per_node);
      SCOPED_TRACE(std::to_string(count) + " nodes, " + std::to_string(edges_per_node) +
                   " edges a node, declared " + std::to_string(static_cast<int>(how)));
      const std::vector<std::size_t> expected = lowest_ready_first_by_set(g);
      ASSERT_EQ(expected.size(), g.nodes.size());
      if (how == declared::in_order) {
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(expected[i], i);
      } else {
        EXPECT_NE(expected[1], 1u);  // node 1 waits for a node declared after it
      }
      std::map<std::string, std::uint32_t> index;
      for (std::size_t i = 0; i < g.nodes.size(); ++i)
        index[g.nodes[i].name] = static_cast<std::uint32_t>(i);
      std::vector<std::uint32_t> expected_deps;
      for (const node& n : g.nodes)
        for (const std::string& d : n.deps) expected_deps.push_back(index.at(d));

      EXPECT_EQ(topological_order(g), expected);
      EXPECT_NO_THROW(check(g));
      const auto plans = check_detail::check_and_plan(g, std::span<const binding>{});
      EXPECT_EQ(plans.at(&g).order, std::vector<std::uint32_t>(expected.begin(), expected.end()));
      EXPECT_EQ(plans.at(&g).deps, expected_deps);
      // Resolved once (as a builder gives it): the same order and plan.
      const resolved_graph r = resolve(g);
      EXPECT_EQ(std::vector<std::uint32_t>(r.dependency_indices().begin(), r.dependency_indices().end()),
                expected_deps);
      EXPECT_EQ(topological_order(r), expected);
      const auto resolved = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &r.rows());
      EXPECT_EQ(resolved.at(&r.spec()).deps, expected_deps);
      EXPECT_EQ(resolved.at(&r.spec()).order, std::vector<std::uint32_t>(expected.begin(), expected.end()));
    }
  }
}

TEST(CheckStructure, LargeGraphsRefuseWithTheSameTexts) {
  for (const declared how : {declared::shuffled, declared::in_order}) {
    const graph_spec base = large_graph(6000, how, 5);
    for (const std::string& ghost : {std::string("n999999"), std::string("k9999999"),
                                     std::string("long_name_999999"), std::string("k0000001x")}) {
      graph_spec g = base;
      g.nodes[3000].deps.push_back(ghost);
      expect_rejected([&] { check(g); },
                      {"node '" + g.nodes[3000].name + "' depends on '" + ghost +
                       "', which is not a node of the top-level graph"},
                      {g.nodes[3000].name, ghost});
      EXPECT_THROW((void)topological_order(g), check_error);
    }
    // A repeated dependency, in a short list and in the long one (names
    // without a NUL byte, which would end what()).
    const auto plain = [](const std::string& name) { return name.find('\0') == std::string::npos; };
    for (const bool long_list : {false, true}) {
      graph_spec g = base;
      std::size_t at = 0;
      std::string repeated;
      for (; at < g.nodes.size(); ++at) {
        const node& n = g.nodes[at];
        if (!plain(n.name) || (n.deps.size() > 16) != long_list) continue;
        const auto dep = std::find_if(n.deps.begin(), n.deps.end(), plain);
        if (dep == n.deps.end()) continue;
        repeated = *dep;
        break;
      }
      ASSERT_LT(at, g.nodes.size());
      g.nodes[at].deps.push_back(repeated);
      expect_rejected([&] { check(g); },
                      {"node '" + g.nodes[at].name + "' lists its dependency '" + repeated +
                       "' twice"},
                      {repeated, g.nodes[at].name});
    }
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
