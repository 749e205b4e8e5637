// Bad-input catalogue, structure: names, edges, cycles, nesting.
#include <memory>
#include <string>
#include <utility>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"

namespace {

using catalogue::refusal;
using catalogue::scale;
using catalogue::strings;

struct scale_graph {
  cudag::builder b{"g"};
  cudag::param_handle<float*> x = b.param<float*>("x");
  cudag::param_handle<int> n = b.param<int>("n");
  cudag::node_ref kernel(std::string name) {
    return b.kernel(std::move(name), CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, n);
  }
};

TEST(Catalogue, CycleNamesThePath) {
  scale_graph g;
  auto n1 = g.kernel("n1"), n8 = g.kernel("n8"), n16 = g.kernel("n16");
  g.b.chain(n1, n8, n16);
  g.b.edge(n16, n8);
  auto e = refusal<cudag::check_error>([&] { cudag::check(g.b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g' has a cycle: n8 -> n16 -> n8 (each node depends on the one before it)");
  EXPECT_EQ(e->nodes(), (strings{"n8", "n16"}));
}

TEST(Catalogue, SelfEdgeIsRefusedWhenAdded) {
  scale_graph g;
  auto loop_back = g.kernel("loop_back");
  auto e = refusal<cudag::error>([&] { g.b.edge(loop_back, loop_back); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': edge loop_back -> loop_back is a cycle of one node");
  EXPECT_EQ(e->node(), "loop_back");
  // The same edge written into a spec is a cycle for check().
  cudag::graph_spec spec = g.b.build();
  spec.nodes[0].deps.push_back("loop_back");
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "graph 'g' has a cycle: loop_back -> loop_back (each node depends on the one before it)");
  EXPECT_EQ(c->nodes(), (strings{"loop_back"}));
}

TEST(Catalogue, UnknownEdgeNodeIsNamed) {
  scale_graph g;
  g.kernel("n10");
  auto e = refusal<cudag::error>([&] { g.b.edge("n10", "n_typo"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': edge n10 -> n_typo names unknown node 'n_typo'");
  EXPECT_EQ(e->node(), "n_typo");
  // In a spec: a dependency on a node the graph does not have.
  cudag::graph_spec spec = g.b.build();
  spec.nodes[0].deps.push_back("n_typo");
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "node 'n10' depends on 'n_typo', which is not a node of graph 'g'");
  EXPECT_EQ(c->nodes(), (strings{"n10", "n_typo"}));
}

TEST(Catalogue, DuplicateNameIsNamed) {
  scale_graph g;
  g.kernel("scale_twice");
  auto e = refusal<cudag::error>([&] { g.kernel("scale_twice"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': duplicate node name 'scale_twice'");
  EXPECT_EQ(e->node(), "scale_twice");
  EXPECT_EQ(g.b.spec().nodes.size(), 1u);  // the refused node was not kept
  // In a spec: two nodes of one name.
  cudag::graph_spec spec = g.b.build();
  spec.nodes.push_back(spec.nodes[0]);
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node name 'scale_twice' is used twice in graph 'g' (nodes #0 and #1); names must be "
            "unique within a graph");
  EXPECT_EQ(c->nodes(), (strings{"scale_twice"}));
}

TEST(Catalogue, EmptyNameIsNamedByPosition) {
  scale_graph g;
  g.kernel("first");
  auto e = refusal<cudag::error>([&] { g.kernel(""); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g': node #1 has an empty name; every node needs a unique name");
  EXPECT_EQ(e->node(), "#1");
  // In a spec.
  cudag::graph_spec spec = g.b.build();
  spec.nodes.push_back(spec.nodes[0]);
  spec.nodes[1].name.clear();
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node #1 of graph 'g' has an empty name; every node needs a unique name");
  EXPECT_EQ(c->nodes(), (strings{"#1"}));
}

TEST(Catalogue, DependencyListedTwiceIsNamed) {
  cudag::builder b("g");
  auto a = b.empty("a");
  auto later = b.empty("b");
  b.edge(a, later);
  b.edge(a, later);  // the builder keeps one edge
  ASSERT_EQ(b.spec().nodes[1].deps, (strings{"a"}));
  cudag::graph_spec spec = b.build();
  spec.nodes[1].deps.push_back("a");
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "node 'b' lists its dependency 'a' twice");
  EXPECT_EQ(c->nodes(), (strings{"a", "b"}));
}

TEST(Catalogue, DependencyOutOfItsGraphIsNamed) {
  cudag::builder b("g");
  auto more = b.condition("more", 1);
  b.empty("prepare");
  cudag::builder body("body");
  body.kernel("step", CUDAG_KERNEL(catalogue::set_flag), cudag::launch(1, 1), more);
  cudag::graph_spec body_spec = body.build();
  body_spec.nodes[0].deps.push_back("prepare");  // a node of the enclosing graph
  b.while_loop("loop", more, std::move(body_spec));
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'loop/step' depends on 'prepare', a node of graph 'g', not of the body of "
            "'loop'; dependencies must stay within one graph (order the enclosing node instead)");
  EXPECT_EQ(c->nodes(), (strings{"loop/step", "prepare"}));
}

TEST(Catalogue, EdgeBetweenTwoBuildersIsRefused) {
  cudag::builder b("g");
  cudag::builder other("other");
  auto first = b.empty("first");
  auto second = other.empty("second");
  auto e = refusal<cudag::error>([&] { b.edge(first, second); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': edge first -> second joins nodes of different graphs");
  EXPECT_EQ(e->node(), "second");
}

TEST(Catalogue, NodeOfABuilderMovedFromIsRefused) {
  cudag::builder b("g");
  auto first = b.empty("first");
  auto second = b.empty("second");
  const cudag::graph_spec spec = std::move(b).build();  // takes the nodes
  b.empty("p");
  b.empty("q");  // new nodes at the old refs' indices
  auto e = refusal<cudag::error>([&] { b.edge(first, second); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g': node #0 was made before this builder's build() && and belongs to the "
            "spec it returned");
  EXPECT_EQ(e->node(), "#0");
  EXPECT_EQ(spec.nodes.size(), 2u);
}

TEST(Catalogue, NodeOfABuilderMovedIntoAnotherIsRefused) {
  cudag::builder b("g");
  auto first = b.empty("first");
  auto second = b.empty("second");
  cudag::builder taken = std::move(b);
  auto e = refusal<cudag::error>([&] { b.edge(first, second); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "node #0 is used after its builder was moved from");
  EXPECT_EQ(taken.spec().nodes.size(), 2u);
}

TEST(Catalogue, UnknownNodeLookupIsNamed) {
  cudag::builder b("g");
  b.empty("first");
  auto e = refusal<cudag::error>([&] { (void)b.node("frist"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': no node named 'frist'");
  EXPECT_EQ(e->node(), "frist");
}

TEST(Catalogue, NestingTooDeepNamesTheEnclosingNode) {
  cudag::graph_spec g;
  {
    cudag::builder leaf("leaf");
    leaf.empty("leaf");
    g = leaf.build();
  }
  std::string path;
  for (int level = 0; level < 65; ++level) {
    cudag::builder b("level");
    b.child("c", std::move(g));
    g = b.build();
    path += level == 0 ? "c" : "/c";
  }
  auto c = refusal<cudag::check_error>([&] { cudag::check(g); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "the child graph of '" + path +
                "' is nested 65 graphs deep; a child graph probably contains itself");
  EXPECT_EQ(c->nodes(), (strings{path}));
}

TEST(Catalogue, ChildWithoutAGraphIsNamed) {
  cudag::builder inner("inner");
  inner.empty("work");
  cudag::builder b("g");
  b.child("stage", inner.build());
  cudag::graph_spec spec = b.build();
  std::get<cudag::child_node>(spec.nodes[0].params).graph = nullptr;
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "child node 'stage' has no graph (null graph pointer)");
  EXPECT_EQ(c->nodes(), (strings{"stage"}));
}

// ------------------------------------------------- programmatic edges --
TEST(Catalogue, ProgrammaticEdgeIntoAKernelThatDoesNotSynchronize) {
  scale_graph g;
  auto write = g.kernel("write"), read = g.kernel("read");
  g.b.edge(write, read, cudag::edge_kind::programmatic);
  auto e = refusal<cudag::check_error>([&] { cudag::check(g.b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "programmatic edge 'write' -> 'read': kernel node 'read' does not synchronize its grid "
            "dependencies, so it may read what 'write' writes before it is written; mark its kernel "
            "with cudag::synchronizes_grid_dependencies() once it calls "
            "cudaGridDependencySynchronize() before those reads");
  EXPECT_EQ(e->nodes(), (strings{"read"}));
}

TEST(Catalogue, ProgrammaticEdgeBetweenOtherKindsThanKernels) {
  scale_graph g;
  auto write = g.kernel("write");
  auto join = g.b.empty("join");
  g.b.edge(write, join, cudag::edge_kind::launch_completion);
  auto e = refusal<cudag::check_error>([&] { cudag::check(g.b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "launch_completion edge 'write' -> 'join': CUDA allows one only from a kernel node into "
            "a kernel node, and 'join' is an empty node");
  EXPECT_EQ(e->nodes(), (strings{"join"}));
}

TEST(Catalogue, DependencyKindsOfAnotherLength) {
  scale_graph g;
  auto a = g.kernel("a"), b = g.kernel("b"), c = g.kernel("c");
  g.b.edge(a, c);
  g.b.edge(b, c);
  cudag::graph_spec spec = g.b.build();
  spec.nodes[2].dependency_kinds = {cudag::edge_kind::full};
  auto e = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "node 'c' lists 1 dependency kinds for its 2 dependencies; give one kind per "
            "dependency, or none (every edge full)");
  EXPECT_EQ(e->nodes(), (strings{"c"}));
}

TEST(Catalogue, AnEdgeAddedAgainAsAnotherKind) {
  scale_graph g;
  auto write = g.kernel("write"), read = g.kernel("read");
  g.b.edge(write, read);
  auto e = refusal<cudag::error>([&] { g.b.edge(write, read, cudag::edge_kind::programmatic); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g': edge write -> read is full and is added again as programmatic");
  EXPECT_EQ(e->node(), "read");
}


}  // namespace
