// Analyses on small graphs whose answers are known by hand.
#include <gtest/gtest.h>

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
  EXPECT_EQ(redundant_edges(g), result.redundant_edges);
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
  EXPECT_EQ(result.redundant_edges,
            (edge_list{{"n0", "n" + std::to_string(count - 1)}, {"n10", "n3000"}}));
}

TEST(Analyze, RefusesACycle) {
  const graph_spec g = graph({empty("a", {"b"}), empty("b", {"a"})});
  expect_rejected([&] { (void)analyze(g); }, {"cycle: a -> b -> a"}, {"a", "b"});
}

}  // namespace
}  // namespace cudag
