// Analyses on small graphs whose answers are known by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <unordered_map>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

using edge_list = std::vector<std::pair<std::string, std::string>>;

graph_spec diamond() {
  return graph({empty("a"), empty("b", {"a"}), empty("c", {"a"}), empty("d", {"b", "c"})});
}

TEST(Analyze, Diamond) {
  const graph_analysis result = analyze(diamond());
  EXPECT_EQ(result.critical_path, 3u);
  EXPECT_EQ(result.width, 2u);
  EXPECT_EQ(result.order, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(result.redundant_edges.empty());
}

TEST(Analyze, DiamondPlusShortcutHasOneRedundantEdge) {
  graph_spec g = diamond();
  g.nodes[3].deps.push_back("a");
  const graph_analysis result = analyze(g);
  EXPECT_EQ(result.critical_path, 3u);
  EXPECT_EQ(result.width, 2u);
  EXPECT_EQ(result.redundant_edges, (edge_list{{"a", "d"}}));
  EXPECT_EQ(redundant_edges(g), (edge_list{{"a", "d"}}));
}

TEST(Analyze, WithoutRedundantEdgesOption) {
  graph_spec g = diamond();
  g.nodes[3].deps.push_back("a");
  const graph_analysis result = analyze(g, {.redundant_edges = false});
  EXPECT_EQ(result.critical_path, 3u);
  EXPECT_TRUE(result.redundant_edges.empty());
}

TEST(Analyze, ChainWithEveryShortcut) {
  // n0 -> n1 -> n2 -> n3 plus all longer edges: only the chain is needed.
  graph_spec g = graph({empty("n0"), empty("n1", {"n0"}), empty("n2", {"n1", "n0"}),
                        empty("n3", {"n0", "n2", "n1"})});
  const graph_analysis result = analyze(g);
  EXPECT_EQ(result.critical_path, 4u);
  EXPECT_EQ(result.width, 1u);
  EXPECT_EQ(result.redundant_edges, (edge_list{{"n0", "n2"}, {"n0", "n3"}, {"n1", "n3"}}));
}

TEST(Analyze, IndependentNodes) {
  const graph_analysis result = analyze(graph({empty("x"), empty("y"), empty("z")}));
  EXPECT_EQ(result.critical_path, 1u);
  EXPECT_EQ(result.width, 3u);
}

TEST(Analyze, EmptyGraph) {
  const graph_analysis result = analyze(graph_spec{});
  EXPECT_EQ(result.critical_path, 0u);
  EXPECT_EQ(result.width, 0u);
  EXPECT_TRUE(result.order.empty());
}

TEST(Analyze, RedundantEdgesAcrossBitsetBlocks) {
  // A chain long enough to span several 2048-rank blocks, declared in reverse,
  // with a shortcut from the first to the last node and one skipping a block.
  const std::size_t count = 5000;
  graph_spec g;
  for (std::size_t i = count; i-- > 0;) {
    std::vector<std::string> deps;
    if (i > 0) deps.push_back("n" + std::to_string(i - 1));
    if (i == count - 1) deps.push_back("n0");
    if (i == 3000) deps.push_back("n10");
    g.nodes.push_back(empty("n" + std::to_string(i), std::move(deps)));
  }
  const graph_analysis result = analyze(g);
  EXPECT_EQ(result.critical_path, count);
  EXPECT_EQ(result.width, 1u);
  // Node n(i) is declared at index count-1-i: the order runs backwards
  // through the declarations.
  ASSERT_EQ(result.order.size(), count);
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(result.order[i], count - 1 - i) << "position " << i;
  EXPECT_EQ(result.redundant_edges,
            (edge_list{{"n0", "n" + std::to_string(count - 1)}, {"n10", "n3000"}}));
}

// Brute force: an edge is redundant when its target stays reachable from its
// source with that one edge removed, along a path whose first edge is full.
edge_list redundant_by_brute_force(const graph_spec& g) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].name] = i;
  std::vector<std::vector<std::size_t>> successors(g.nodes.size());
  std::vector<std::vector<std::size_t>> full_successors(g.nodes.size());
  for (std::size_t v = 0; v < g.nodes.size(); ++v)
    for (std::size_t k = 0; k < g.nodes[v].deps.size(); ++k) {
      const std::size_t u = index[g.nodes[v].deps[k]];
      successors[u].push_back(v);
      if (g.nodes[v].dependency_kind(k) == edge_kind::full) full_successors[u].push_back(v);
    }
  edge_list result;
  for (std::size_t v = 0; v < g.nodes.size(); ++v) {
    for (const std::string& d : g.nodes[v].deps) {
      const std::size_t u = index[d];
      std::vector<bool> seen(g.nodes.size(), false);
      std::vector<std::size_t> stack;
      for (std::size_t w : full_successors[u])
        if (w != v) stack.push_back(w);
      bool reached = false;
      while (!stack.empty() && !reached) {
        const std::size_t w = stack.back();
        stack.pop_back();
        if (seen[w]) continue;
        seen[w] = true;
        reached = w == v;
        for (std::size_t x : successors[w]) stack.push_back(x);
      }
      if (reached) result.emplace_back(d, g.nodes[v].name);
    }
  }
  return result;
}

TEST(Analyze, RedundantEdgesMatchBruteForceOnRandomDags) {
  // 3000 nodes span two bitset blocks; nodes are declared in shuffled order.
  std::mt19937 random(12345);
  for (const std::size_t count : {40u, 3000u}) {
    std::vector<std::size_t> declared_at(count);
    for (std::size_t i = 0; i < count; ++i) declared_at[i] = i;
    std::shuffle(declared_at.begin(), declared_at.end(), random);
    graph_spec g;
    for (std::size_t i = 0; i < count; ++i) g.nodes.push_back(empty("n" + std::to_string(i)));
    std::set<std::pair<std::size_t, std::size_t>> taken;
    std::uniform_int_distribution<std::size_t> position(0, count - 1);
    // Mostly short edges (as in pipelines) plus some long ones.
    while (taken.size() < 3 * count) {
      std::size_t a = position(random);
      std::size_t b = taken.size() % 4 == 0 ? position(random) : a + 1 + position(random) % 50;
      if (b >= count || a == b) continue;
      if (a > b) std::swap(a, b);
      if (!taken.insert({a, b}).second) continue;
      g.nodes[declared_at[b]].deps.push_back("n" + std::to_string(declared_at[a]));
    }
    const edge_list expected = redundant_by_brute_force(g);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(redundant_edges(g), expected) << count << " nodes";
  }
}

// The diamond a -> {b, c} -> d with the shortcut a -> d, each edge of the
// kind given (by dependent and dependency).
graph_spec diamond_with_shortcut(edge_kind ab, edge_kind ac, edge_kind bd, edge_kind ad) {
  graph_spec g = graph({empty("a"), empty("b", {"a"}), empty("c", {"a"}), empty("d", {"b", "c", "a"})});
  g.nodes[1].dependency_kinds = {ab};
  g.nodes[2].dependency_kinds = {ac};
  g.nodes[3].dependency_kinds = {bd, edge_kind::full, ad};
  return g;
}

TEST(Analyze, AFullEdgeIsImpliedOnlyByAPathThatStartsWithAFullEdge) {
  using enum edge_kind;
  // a -> b is programmatic, but a -> c -> d is full: a -> d is implied.
  EXPECT_EQ(redundant_edges(diamond_with_shortcut(programmatic, full, full, full)),
            (edge_list{{"a", "d"}}));
  // Both paths start with a typed edge: d could start before a completes
  // without the shortcut, which is kept.
  EXPECT_TRUE(redundant_edges(diamond_with_shortcut(programmatic, launch_completion, full, full)).empty());
  // A typed edge later on the path does not matter: d starts after b
  // started, b after a completed.
  EXPECT_EQ(redundant_edges(diamond_with_shortcut(full, programmatic, programmatic, full)),
            (edge_list{{"a", "d"}}));
  EXPECT_EQ(analyze(diamond_with_shortcut(programmatic, launch_completion, full, full)).redundant_edges,
            edge_list{});
}

TEST(Analyze, ATypedEdgeBesideAPathThatStartsWithAFullEdgeIsReported) {
  using enum edge_kind;
  // d starts after a completed anyway: the early launch the shortcut
  // allows never happens.
  EXPECT_EQ(redundant_edges(diamond_with_shortcut(full, full, full, programmatic)),
            (edge_list{{"a", "d"}}));
  EXPECT_EQ(redundant_edges(diamond_with_shortcut(programmatic, full, full, launch_completion)),
            (edge_list{{"a", "d"}}));
  // Beside paths that start with typed edges it is not implied: d waits in
  // cudaGridDependencySynchronize() only for its own upstream kernels.
  EXPECT_TRUE(
      redundant_edges(diamond_with_shortcut(programmatic, programmatic, full, programmatic)).empty());
}

TEST(Analyze, RedundantEdgesOfRandomKindsMatchBruteForce) {
  // As above, with about one edge in three programmatic or launch-completion.
  std::mt19937 random(2468);
  for (const std::size_t count : {40u, 3000u}) {
    graph_spec g;
    for (std::size_t i = 0; i < count; ++i) g.nodes.push_back(empty("n" + std::to_string(i)));
    std::set<std::pair<std::size_t, std::size_t>> taken;
    std::uniform_int_distribution<std::size_t> position(0, count - 1);
    std::uniform_int_distribution<int> kind(0, 5);
    while (taken.size() < 3 * count) {
      std::size_t a = position(random);
      std::size_t b = taken.size() % 4 == 0 ? position(random) : a + 1 + position(random) % 50;
      if (b >= count || a == b) continue;
      if (a > b) std::swap(a, b);
      if (!taken.insert({a, b}).second) continue;
      node& n = g.nodes[b];
      n.deps.push_back("n" + std::to_string(a));
      n.dependency_kinds.resize(n.deps.size() - 1, edge_kind::full);
      const int k = kind(random);
      n.dependency_kinds.push_back(k == 0 ? edge_kind::programmatic
                                   : k == 1 ? edge_kind::launch_completion
                                            : edge_kind::full);
    }
    const edge_list expected = redundant_by_brute_force(g);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(redundant_edges(g), expected) << count << " nodes";
  }
}

TEST(Analyze, RefusesACycle) {
  const graph_spec g = graph({empty("a", {"b"}), empty("b", {"a"})});
  expect_rejected([&] { (void)analyze(g); }, {"cycle: a -> b -> a"}, {"a", "b"});
}

}  // namespace
}  // namespace cudag
