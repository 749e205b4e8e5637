// Dependency hints (graph_spec::dependency_hints, as the builder's build()
// fills them): check(), topological_order() and the lowering plan give the
// same answers with right hints, wrong hints, stale hints and none, and every
// refusal keeps its exact text and node list.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../src/check/checked_plan.hpp"
#include "cudag/bindings.hpp"
#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

// The right hints, written here independently of the library.
std::vector<std::uint32_t> right_hints(const graph_spec& g) {
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    index.emplace(g.nodes[i].name, static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> hints;
  for (const node& n : g.nodes)
    for (const std::string& d : n.deps) hints.push_back(index.count(d) ? index.at(d) : 0u);
  return hints;
}

// A random DAG declared in shuffled order; names of 1 to 12 bytes, many
// sharing their first 7 bytes (so that a fingerprint alone cannot tell them
// apart), some with NUL bytes.
graph_spec random_graph(std::size_t count, std::size_t edges, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::size_t> declared_at(count);
  for (std::size_t i = 0; i < count; ++i) declared_at[i] = i;
  std::shuffle(declared_at.begin(), declared_at.end(), random);
  graph_spec g;
  g.nodes.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string name = std::to_string(i);
    switch (i % 4) {
      case 0: name = "long_pr" + name; break;           // 8 bytes and more, one 7-byte prefix
      case 1: name = std::string("n\0", 2) + name; break;  // a NUL byte
      case 2: name = "k" + name; break;
      default: break;
    }
    g.nodes[i].name = name;
    g.nodes[i].params = empty_node{};
  }
  std::uniform_int_distribution<std::size_t> position(0, count - 1);
  for (std::size_t e = 0; e < edges; ++e) {
    std::size_t a = position(random), b = position(random);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    auto& deps = g.nodes[declared_at[b]].deps;
    const std::string& dep = g.nodes[declared_at[a]].name;
    if (std::find(deps.begin(), deps.end(), dep) == deps.end()) deps.push_back(dep);
  }
  return g;
}

// What the checker answers about a spec: the order, the plan's dependency
// indices, or the refusal's text and nodes.
struct verdict {
  std::vector<std::size_t> order;
  std::vector<std::uint32_t> plan_deps;
  std::string error;
  std::vector<std::string> nodes;
  std::string order_error;
  bool operator==(const verdict&) const = default;
};

verdict verdict_of(const graph_spec& g) {
  verdict v;
  try {
    check(g);
    const std::span<const binding> none;
    const auto plans = check_detail::check_and_plan(g, none);
    v.plan_deps = plans.at(&g).deps;
  } catch (const check_error& e) {
    v.error = e.what();
    v.nodes = e.nodes();
  }
  try {
    v.order = topological_order(g);
  } catch (const check_error& e) {
    v.order_error = e.what();
  }
  return v;
}

void expect_same_with_any_hints(const graph_spec& g, std::uint64_t seed) {
  graph_spec plain = g;
  plain.dependency_hints.clear();
  const verdict expected = verdict_of(plain);

  graph_spec hinted = plain;
  hinted.dependency_hints = right_hints(plain);
  EXPECT_EQ(verdict_of(hinted), expected) << "right hints, seed " << seed;

  // Wrong hints: each one out of range, another node, or a node whose name
  // shares the dependency's first bytes.
  std::mt19937_64 random(seed);
  graph_spec wrong = hinted;
  const auto count = static_cast<std::uint32_t>(plain.nodes.size());
  for (std::uint32_t& h : wrong.dependency_hints) {
    switch (random() % 4) {
      case 0: h = count + static_cast<std::uint32_t>(random() % 3); break;
      case 1: h = ~0u; break;
      case 2: h = count ? static_cast<std::uint32_t>(random() % count) : 0; break;
      default: h = h + 4 < count ? h + 4 : h; break;  // same kind of name, another node
    }
  }
  EXPECT_EQ(verdict_of(wrong), expected) << "wrong hints, seed " << seed;

  // One too many or too few: ignored.
  graph_spec longer = hinted;
  longer.dependency_hints.push_back(0);
  EXPECT_EQ(verdict_of(longer), expected) << "hints of another size, seed " << seed;
  if (!hinted.dependency_hints.empty()) {
    graph_spec shorter = hinted;
    shorter.dependency_hints.pop_back();
    EXPECT_EQ(verdict_of(shorter), expected) << "hints of another size, seed " << seed;
  }
}

TEST(CheckHints, RandomGraphsGiveTheSameAnswersWithAnyHints) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::size_t count = 2 + seed * 7;
    expect_same_with_any_hints(random_graph(count, count * 3, seed), seed);
  }
}

TEST(CheckHints, LargeGraphTakesThePrefetchingPathAndGivesTheSameAnswers) {
  // Past 4096 nodes resolution runs ahead of itself (prefetching).
  expect_same_with_any_hints(random_graph(20000, 60000, 7), 7);
}

TEST(CheckHints, AHintToANodeOfAnotherNameIsNotTaken) {
  // 'c' depends on "long_prefix_b"; its hint points at "long_prefix_a",
  // which has the same first 7 bytes and length. Taken, the order would run
  // c before b.
  graph_spec g = graph({empty("long_prefix_a"), empty("c", {"long_prefix_b"}),
                        empty("long_prefix_b", {"long_prefix_a"})});
  g.dependency_hints = {0, 0};  // c's dependency hinted at node 0: wrong
  EXPECT_EQ(topological_order(g), (std::vector<std::size_t>{0, 2, 1}));
  const auto plans = check_detail::check_and_plan(g, std::span<const binding>{});
  EXPECT_EQ(plans.at(&g).deps, (std::vector<std::uint32_t>{2, 0}));

  // Short names: "ab" hinted at "ab\0" (and the reverse).
  graph_spec s = graph({empty(std::string("ab\0", 3)), empty("ab"), empty("c", {"ab"}),
                        empty("d", {std::string("ab\0", 3)})});
  s.dependency_hints = {0, 1};  // both wrong
  const auto short_plans = check_detail::check_and_plan(s, std::span<const binding>{});
  EXPECT_EQ(short_plans.at(&s).deps, (std::vector<std::uint32_t>{1, 0}));
}

TEST(CheckHints, RefusalsKeepTheirTextWithHints) {
  std::vector<graph_spec> bad;
  bad.push_back(graph({empty("a"), empty("b", {"a", "ghost"})}));          // unknown
  bad.push_back(graph({empty("a"), empty("b", {"a", "a"})}));              // repeated
  bad.push_back(graph({empty("a", {"b"}), empty("b", {"a"})}));            // cycle
  bad.push_back(graph({empty("a"), empty("b", {"a"}), empty("a")}, {}, {}, "p"));  // duplicate
  bad.push_back(graph({empty("a"), empty("", {"a"})}));                    // empty name
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const verdict plain = verdict_of(bad[i]);
    ASSERT_FALSE(plain.error.empty()) << "case " << i;
    graph_spec hinted = bad[i];
    hinted.dependency_hints = right_hints(bad[i]);
    EXPECT_EQ(verdict_of(hinted), plain) << "case " << i;
    // A hint naming the missing node's neighbour is not taken.
    for (std::uint32_t& h : hinted.dependency_hints) h = 0;
    EXPECT_EQ(verdict_of(hinted), plain) << "case " << i << ", hints all 0";
  }
}

}  // namespace
}  // namespace cudag
