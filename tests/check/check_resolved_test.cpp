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
    const auto plans = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &r.rows());
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

// Every graph of a spec in the pre-order check() visits them in: a graph,
// then for each of its nodes in declaration order the graphs nested in it (a
// child's graph; a conditional's bodies in order), each followed by its own.
// Written here independently of the library.
void collect_pre_order(const graph_spec& g, std::vector<const graph_spec*>& out) {
  out.push_back(&g);
  for (const node& n : g.nodes) {
    if (const auto* c = std::get_if<child_node>(&n.params)) collect_pre_order(*c->graph, out);
    if (const auto* c = std::get_if<conditional_node>(&n.params))
      for (const graph_spec& body : c->bodies) collect_pre_order(body, out);
  }
}
std::vector<const graph_spec*> pre_order(const graph_spec& g) {
  std::vector<const graph_spec*> out;
  collect_pre_order(g, out);
  return out;
}

/// A top level with a child graph (which holds an if node) and an if_else
/// node, each nested graph declared out of dependency order.
graph_spec nested_spec() {
  graph_spec inner_body = graph({empty("q", {"p"}), empty("p")});
  graph_spec inner = graph({empty("y", {"x"}), empty("x"),
                            make_node("maybe", conditional(conditional_kind::if_then, "go",
                                                           {std::move(inner_body)}),
                                      {"y"})},
                           {}, {condition_decl{"go"}});
  graph_spec then_body = graph({empty("t2", {"t1"}), empty("t1")});
  graph_spec else_body = graph({empty("e1"), empty("e3", {"e1", "e2"}), empty("e2", {"e1"})});
  std::vector<graph_spec> bodies;
  bodies.push_back(std::move(then_body));
  bodies.push_back(std::move(else_body));
  return graph({empty("first"),
                make_node("stage", child_node{std::make_shared<graph_spec>(std::move(inner))}, {"first"}),
                make_node("branch", conditional(conditional_kind::if_else, "pick", std::move(bodies)),
                          {"stage"})},
               {}, {condition_decl{"pick"}});
}

/// Each graph of `r`'s tree has rows, and they, and the plans made from
/// them, are each graph's right indices.
void expect_every_graph_resolved(const resolved_graph& r) {
  const std::vector<const graph_spec*> graphs = pre_order(r.spec());
  ASSERT_EQ(r.rows().graph_count(), graphs.size());
  const auto plans = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &r.rows());
  for (std::size_t f = 0; f < graphs.size(); ++f) {
    ASSERT_TRUE(r.rows().resolved(f)) << "graph " << f;
    const std::span<const std::uint32_t> rows = r.rows().indices(f);
    EXPECT_EQ(std::vector<std::uint32_t>(rows.begin(), rows.end()), right_indices(*graphs[f]))
        << "graph " << f;
    EXPECT_EQ(plans.at(graphs[f]).deps, right_indices(*graphs[f])) << "graph " << f;
  }
}

TEST(CheckResolved, EveryNestedGraphIsResolvedInTheOrderCheckVisitsThem) {
  const graph_spec spec = nested_spec();
  const resolved_graph r = resolve(spec);
  ASSERT_EQ(pre_order(r.spec()).size(), 5u);  // top, stage, maybe's body, then, else
  expect_every_graph_resolved(r);
  // The nested orders are the by-name plans' too.
  const auto by_name = check_detail::check_and_plan(spec, std::span<const binding>{});
  const auto resolved = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &r.rows());
  const std::vector<const graph_spec*> named = pre_order(spec), rows = pre_order(r.spec());
  for (std::size_t f = 0; f < named.size(); ++f)
    EXPECT_EQ(resolved.at(rows[f]).order, by_name.at(named[f]).order) << "graph " << f;
}

TEST(CheckResolved, ResolveRefusesANestedGraphsFaultWithCheckTextAndNodes) {
  std::vector<graph_spec> bad;
  graph_spec unknown = nested_spec();  // in the child graph
  std::get<child_node>(unknown.nodes[1].params).graph =
      std::make_shared<graph_spec>(graph({empty("x"), empty("y", {"ghost"})}));
  bad.push_back(std::move(unknown));
  graph_spec cycle = nested_spec();  // in the else-body
  std::get<conditional_node>(cycle.nodes[2].params).bodies[1].nodes[0].deps = {"e3"};
  bad.push_back(std::move(cycle));
  graph_spec deep = nested_spec();  // in the body nested in the child graph
  auto inner = std::make_shared<graph_spec>(*std::get<child_node>(deep.nodes[1].params).graph);
  std::get<conditional_node>(inner->nodes[2].params).bodies[0].nodes[1].name = "q";
  std::get<child_node>(deep.nodes[1].params).graph = inner;
  bad.push_back(std::move(deep));
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const verdict plain = verdict_of(bad[i]);
    ASSERT_FALSE(plain.error.empty()) << "case " << i;
    ASSERT_NE(plain.nodes.front().find('/'), std::string::npos) << "case " << i << ": " << plain.error;
    try {
      (void)resolve(bad[i]);
      ADD_FAILURE() << "case " << i << " was resolved";
    } catch (const check_error& e) {
      EXPECT_EQ(std::string(e.what()), plain.error) << "case " << i;
      EXPECT_EQ(e.nodes(), plain.nodes) << "case " << i;
    }
  }
}

/// The builder's version of nested_spec(): each nested graph made by a
/// builder of its own, handed on resolved where `resolved` says so.
resolved_graph built_nested(bool child_resolved, bool bodies_resolved) {
  builder inner_body("maybe_body");
  auto q = inner_body.empty("q");
  auto p = inner_body.empty("p");
  inner_body.edge(p, q);
  builder inner("stage");
  auto go = inner.condition("go");
  auto y = inner.empty("y");
  auto x = inner.empty("x");
  inner.edge(x, y);
  auto maybe = bodies_resolved ? inner.if_then("maybe", go, std::move(inner_body).resolve())
                               : inner.if_then("maybe", go, std::move(inner_body).build());
  inner.edge(y, maybe);
  builder then_body("then");
  auto t2 = then_body.empty("t2");  // declared before the node it depends on
  auto t1 = then_body.empty("t1");
  then_body.edge(t1, t2);
  builder else_body("else");
  auto e1 = else_body.empty("e1");
  auto e3 = else_body.empty("e3");
  auto e2 = else_body.empty("e2");
  else_body.edge(e1, e3);
  else_body.edge(e2, e3);
  else_body.edge(e1, e2);
  builder b("top");
  auto pick = b.condition("pick");
  auto first = b.empty("first");
  auto stage = child_resolved ? b.child("stage", std::move(inner).resolve())
                              : b.child("stage", std::move(inner).build());
  auto branch = bodies_resolved
                    ? b.if_else("branch", pick, std::move(then_body).resolve(), std::move(else_body).resolve())
                    : b.if_else("branch", pick, std::move(then_body).build(), std::move(else_body).build());
  b.chain(first, stage, branch);
  return std::move(b).resolve();
}

TEST(CheckResolved, ABuilderKeepsTheRowsOfTheNestedGraphsItIsGivenResolved) {
  expect_every_graph_resolved(built_nested(true, true));
  // Given by name, a nested graph has no rows: it is resolved when checked;
  // the rows of those given resolved stay where check() looks for them.
  for (const bool child_resolved : {false, true}) {
    for (const bool bodies_resolved : {false, true}) {
      const resolved_graph r = built_nested(child_resolved, bodies_resolved);
      const std::vector<const graph_spec*> graphs = pre_order(r.spec());
      ASSERT_EQ(graphs.size(), 5u);
      // top, stage, maybe's body, then, else: which have rows
      const bool expected[] = {true, child_resolved, child_resolved && bodies_resolved, bodies_resolved,
                               bodies_resolved};
      const auto plans = check_detail::check_and_plan(r.spec(), std::span<const binding>{}, &r.rows());
      for (std::size_t f = 0; f < graphs.size(); ++f) {
        EXPECT_EQ(r.rows().resolved(f), expected[f])
            << "graph " << f << " child " << child_resolved << " bodies " << bodies_resolved;
        EXPECT_EQ(plans.at(graphs[f]).deps, right_indices(*graphs[f])) << "graph " << f;
      }
      EXPECT_EQ(verdict_of(r), verdict_of(r.spec()));
    }
  }
}

TEST(CheckResolved, ACycleInABodyABuilderMadeIsRefusedNamingItsPath) {
  builder body("iteration");
  auto a = body.empty("a");
  auto c = body.empty("c");
  body.chain(a, c);
  body.edge(c, a);
  builder b("loop");
  auto go = b.condition("go");
  b.while_loop("loop", go, std::move(body).resolve());
  const resolved_graph r = std::move(b).resolve();
  ASSERT_TRUE(r.rows().resolved(1));
  const verdict v = verdict_of(r);
  EXPECT_EQ(v.error, verdict_of(r.spec()).error);
  EXPECT_NE(v.error.find("loop/a"), std::string::npos) << v.error;
}

TEST(CheckResolved, NoGraphWithRowsHasItsDependencyNamesLookedUp) {
  // Rows and names made to disagree, which only the engine's own access
  // can do: every graph with rows is planned from its rows.
  const graph_spec spec = nested_spec();
  const std::vector<const graph_spec*> named = pre_order(spec);
  detail::resolved_parts parts = detail::resolved_parts::take(resolve(spec));
  parts.spec.nodes[1].deps = {"ghost"};                                       // top level
  auto& else_body = std::get<conditional_node>(parts.spec.nodes[2].params).bodies[1];
  else_body.nodes[1].deps = {"gone", "missing"};                              // a body
  auto inner = std::make_shared<graph_spec>(*std::get<child_node>(parts.spec.nodes[1].params).graph);
  inner->nodes[0].deps = {"nowhere"};                                         // a child graph
  std::get<child_node>(parts.spec.nodes[1].params).graph = inner;
  const auto plans = check_detail::check_and_plan(parts.spec, std::span<const binding>{}, &parts.rows);
  const std::vector<const graph_spec*> changed = pre_order(parts.spec);
  for (std::size_t f = 0; f < changed.size(); ++f)
    EXPECT_EQ(plans.at(changed[f]).deps, right_indices(*named[f])) << "graph " << f;
  // Without the rows, the same spec is refused by name.
  EXPECT_THROW((void)check_detail::check_and_plan(parts.spec, std::span<const binding>{}), check_error);
}

}  // namespace
}  // namespace cudag
