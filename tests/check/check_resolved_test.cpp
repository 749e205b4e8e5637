// The resolved graph (resolve(), builder::resolve()): check(),
// topological_order() and the lowering plan give the same answers for a
// spec and for its resolved graph, on random graphs small and large (past
// 4096 nodes names are resolved ahead of themselves); resolve() refuses
// exactly what check() refuses about structure, with the same text and
// nodes; and a cycle, which a builder can make, is refused from the
// resolved graph naming it.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../src/check/checked_plan.hpp"
#include "cudag/bindings.hpp"
#include "cudag/builder.hpp"
#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

// The right indices, written here independently of the library.
std::vector<std::uint32_t> right_indices(const graph_spec& g) {
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    index.emplace(g.nodes[i].name, static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> indices;
  for (const node& n : g.nodes)
    for (const std::string& d : n.deps) indices.push_back(index.at(d));
  return indices;
}

// A random DAG declared in shuffled order; names of 1 to 12 bytes, many
// sharing their first 7 bytes, some with NUL bytes.
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

// What the checker answers about a spec or a resolved graph: the order, the
// plan's dependency indices, or the refusal's text and nodes.
struct verdict {
  std::vector<std::size_t> order;
  std::vector<std::uint32_t> plan_deps;
  std::vector<std::uint32_t> plan_order;
  std::string error;
  std::vector<std::string> nodes;
  std::string order_error;
  bool operator==(const verdict&) const = default;
};

verdict verdict_of(const graph_spec& g) {
  verdict v;
  try {
    check(g);
    const auto plans = check_detail::check_and_plan(g, std::span<const binding>{});
    v.plan_deps = plans.at(&g).deps;
    v.plan_order = plans.at(&g).order;
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

verdict verdict_of(const resolved_graph& r) {
  verdict v;
  try {
    check(r);
    const check_detail::resolved_dependencies rows{r.dependency_begin(), r.dependency_indices()};
    const auto plans = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &rows);
    v.plan_deps = plans.at(&r.spec()).deps;
    v.plan_order = plans.at(&r.spec()).order;
  } catch (const check_error& e) {
    v.error = e.what();
    v.nodes = e.nodes();
  }
  try {
    v.order = topological_order(r);
  } catch (const check_error& e) {
    v.order_error = e.what();
  }
  return v;
}

void expect_same_when_resolved(const graph_spec& g, std::uint64_t seed) {
  const verdict expected = verdict_of(g);
  ASSERT_TRUE(expected.error.empty()) << expected.error;
  const resolved_graph r = resolve(g);
  EXPECT_EQ(std::vector<std::uint32_t>(r.dependency_indices().begin(), r.dependency_indices().end()),
            right_indices(g))
      << "seed " << seed;
  EXPECT_EQ(verdict_of(r), expected) << "seed " << seed;
}

TEST(CheckResolved, RandomGraphsGiveTheSameAnswersResolved) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::size_t count = 2 + seed * 7;
    expect_same_when_resolved(random_graph(count, count * 3, seed), seed);
  }
}

TEST(CheckResolved, LargeGraphTakesThePrefetchingPathAndGivesTheSameAnswers) {
  expect_same_when_resolved(random_graph(20000, 60000, 7), 7);
}

TEST(CheckResolved, NamesThatShareTheirFirstBytesResolveToTheirOwnNodes) {
  // 'c' depends on "long_prefix_b", which has the same first 7 bytes and
  // length as "long_prefix_a"; "ab" and "ab\0" differ by a NUL byte.
  const graph_spec g = graph({empty("long_prefix_a"), empty("c", {"long_prefix_b"}),
                              empty("long_prefix_b", {"long_prefix_a"})});
  const resolved_graph r = resolve(g);
  EXPECT_EQ(r.dependencies(1)[0], 2u);
  EXPECT_EQ(topological_order(r), (std::vector<std::size_t>{0, 2, 1}));
  const graph_spec s = graph({empty(std::string("ab\0", 3)), empty("ab"), empty("c", {"ab"}),
                              empty("d", {std::string("ab\0", 3)})});
  const resolved_graph rs = resolve(s);
  EXPECT_EQ(rs.dependencies(2)[0], 1u);
  EXPECT_EQ(rs.dependencies(3)[0], 0u);
}

TEST(CheckResolved, ResolveRefusesWhatCheckRefusesWithTheSameText) {
  std::vector<graph_spec> bad;
  bad.push_back(graph({empty("a"), empty("b", {"a", "ghost"})}));          // unknown
  bad.push_back(graph({empty("a"), empty("b", {"a", "a"})}));              // repeated
  bad.push_back(graph({empty("a", {"b"}), empty("b", {"a"})}));            // cycle
  bad.push_back(graph({empty("a"), empty("b", {"a"}), empty("a")}, {}, {}, "p"));  // duplicate
  bad.push_back(graph({empty("a"), empty("", {"a"})}));                    // empty name
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const verdict plain = verdict_of(bad[i]);
    ASSERT_FALSE(plain.error.empty()) << "case " << i;
    try {
      (void)resolve(bad[i]);
      ADD_FAILURE() << "case " << i << " was resolved";
    } catch (const check_error& e) {
      EXPECT_EQ(std::string(e.what()), plain.error) << "case " << i;
      EXPECT_EQ(e.nodes(), plain.nodes) << "case " << i;
    }
  }
}

TEST(CheckResolved, ACycleABuilderMadeIsRefusedNamingIt) {
  builder b("loop");
  auto a = b.empty("a");
  auto c = b.empty("c");
  auto d = b.empty("d");
  b.chain(a, c, d);
  b.edge(d, c);
  const resolved_graph r = b.resolve();
  const verdict by_name = verdict_of(b.build());
  ASSERT_EQ(by_name.error, "graph 'loop' has a cycle: c -> d -> c (each node depends on the one before it)");
  EXPECT_EQ(verdict_of(r), by_name);
  EXPECT_EQ(verdict_of(r).order_error, by_name.error);
}

TEST(CheckResolved, NestedGraphsAreCheckedByNameInsideAResolvedOne) {
  // The stage of the design: a child graph's names are resolved when it is
  // checked, so its faults are found from the resolved top level too.
  graph_spec inner = graph({empty("x"), empty("y", {"ghost"})});
  graph_spec top = graph({empty("first"), make_node("stage", child_node{std::make_shared<graph_spec>(inner)}, {"first"})});
  const resolved_graph r = resolve(top);
  try {
    check(r);
    FAIL() << "the child's unknown dependency was not found";
  } catch (const check_error& e) {
    EXPECT_EQ(std::string(e.what()), verdict_of(top).error);
    EXPECT_EQ(e.nodes(), (std::vector<std::string>{"stage/y", "stage/ghost"}));
  }
}

}  // namespace
}  // namespace cudag
