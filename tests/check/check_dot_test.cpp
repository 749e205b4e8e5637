// DOT pictures: nodes, kinds, key parameters, clusters, edges, escaping.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cudag/dot.hpp"
#include "dot_text.hpp"
#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;
using dot_text::longest_quoted;
using dot_text::valid_utf8;

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

graph_spec pictured() {
  const graph_spec body = graph({make_node("step", kernel({condition("go")})),
                                 empty("after_step", {"step"})});
  return graph({make_node("alloc", alloc("tmp", 4096)),
                make_node("scale", kernel({buffer<float*>("tmp"), param<int>("n")}), {"alloc"}),
                make_node("loop", conditional(conditional_kind::while_loop, "go", {body}), {"scale"}),
                make_node("free", free_of("tmp"), {"loop"})},
               {declare<int>("n")}, {declare_condition("go")}, "pictured");
}

TEST(Dot, HasNodesKindsAndKeyParameters) {
  const std::string dot = to_dot(pictured());
  EXPECT_EQ(dot.rfind("digraph \"pictured\" {", 0), 0u) << dot;
  EXPECT_NE(dot.find("\"scale\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("reads: buffer tmp, param n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"alloc\\nmem_alloc\\nbuffer tmp, 4096 B\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"free\\nmem_free\\nbuffer tmp\""), std::string::npos) << dot;
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_EQ(count_of(dot, "{"), count_of(dot, "}"));
}

TEST(Dot, ConditionalBodyIsACluster) {
  const std::string dot = to_dot(pictured());
  EXPECT_NE(dot.find("subgraph cluster_n2 {"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"loop\\nwhile (go)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"step\\nkernel"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"after_step\\nempty\""), std::string::npos) << dot;
  // The body's nodes sit between the cluster's opening and the edge into the loop.
  const auto cluster = dot.find("subgraph cluster_n2 {");
  EXPECT_LT(cluster, dot.find("\"step\\nkernel"));
}

TEST(Dot, EdgesUseClusterBordersForNestedGraphs) {
  const std::string dot = to_dot(pictured());
  // Ids in declaration order: alloc n0, scale n1, loop n2 (step n3, after_step n4), free n5;
  // a cluster's entry is its header node, its exit an invisible point.
  EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> n2 [lhead=cluster_n2];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n2_exit -> n5 [ltail=cluster_n2];"), std::string::npos) << dot;
  // Header into the body, body's sink to the exit point.
  EXPECT_NE(dot.find("n2 -> n3 [style=dashed"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n4 -> n2_exit [style=invis];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n3 -> n4;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("compound=true"), std::string::npos);
}

TEST(Dot, NumberedBodiesAndChildGraphsAreClusters) {
  auto child = std::make_shared<graph_spec>(graph({empty("inside")}, {}, {}, "helper"));
  const graph_spec g = graph(
      {make_node("sub", child_node{child}),
       make_node("branch", conditional(conditional_kind::if_else, "c",
                                       {graph({empty("yes")}), graph({empty("no")})}),
                 {"sub"})},
      {}, {declare_condition("c")});
  const std::string dot = to_dot(g);
  EXPECT_NE(dot.find("subgraph cluster_n0 {"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"sub\\nchild graph helper\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_n2_b0 {"), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_n2_b1 {"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"then\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"else\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0_exit -> n2 [ltail=cluster_n0, lhead=cluster_n2];"), std::string::npos)
      << dot;
  // The header stays in its own cluster, outside the bodies' clusters.
  const auto header = dot.find("n2 [label=\"branch\\nif_else (c)\"");
  EXPECT_LT(header, dot.find("subgraph cluster_n2_b0 {")) << dot;
}

TEST(Dot, NamesAreEscaped) {
  const graph_spec g = graph({empty("say \"hi\""), empty("back\\slash", {"say \"hi\""})});
  const std::string dot = to_dot(g);
  EXPECT_NE(dot.find("label=\"say \\\"hi\\\"\\nempty\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"back\\\\slash\\nempty\""), std::string::npos) << dot;
  EXPECT_EQ(dot.find("say \"hi\""), std::string::npos) << "an unescaped quote: " << dot;
}

TEST(Dot, UnknownDependencyIsDrawnAsMissing) {
  const graph_spec g = graph({empty("a", {"ghost"})});
  const std::string dot = to_dot(g);
  EXPECT_NE(dot.find("\"ghost\\n(missing)\""), std::string::npos) << dot;
}

TEST(Dot, WriteDotAndRenderSvg) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cudag_dot_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dot_path = (dir / "pictured.dot").string();
  const std::string svg_path = (dir / "pictured.svg").string();
  write_dot(pictured(), dot_path);
  std::ifstream in(dot_path);
  std::stringstream text;
  text << in.rdbuf();
  // The whole file, written out by hand (not compared with to_dot(), which
  // write_dot may share its mistakes with).
  const std::string expected =
      "digraph \"pictured\" {\n"
      "  graph [compound=true, fontname=\"Helvetica\", fontsize=11];\n"
      "  node [fontname=\"Helvetica\", fontsize=10, style=\"rounded,filled\"];\n"
      "  edge [color=\"#444444\"];\n"
      "  n0 [label=\"alloc\\nmem_alloc\\nbuffer tmp, 4096 B\", shape=box, fillcolor=\"#d1e7dd\"];\n"
      "  n1 [label=\"scale\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\\nreads: buffer tmp, "
      "param n\", shape=box, fillcolor=\"#cfe2ff\"];\n"
      "  subgraph cluster_n2 {\n"
      "    label=\"loop\";\n"
      "    style=\"rounded,dashed\"; color=\"#666666\";\n"
      "    n2 [label=\"loop\\nwhile (go)\", shape=box, fillcolor=\"#eeeeee\"];\n"
      "    n2_exit [shape=point, style=invis, width=0, height=0, label=\"\"];\n"
      "    n3 [label=\"step\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\\nreads: condition "
      "go\", shape=box, fillcolor=\"#cfe2ff\"];\n"
      "    n4 [label=\"after_step\\nempty\", shape=box, fillcolor=\"#ffffff\"];\n"
      "    n3 -> n4;\n"
      "    n2 -> n3 [style=dashed, arrowhead=none];\n"
      "    n4 -> n2_exit [style=invis];\n"
      "  }\n"
      "  n5 [label=\"free\\nmem_free\\nbuffer tmp\", shape=box, fillcolor=\"#d1e7dd\"];\n"
      "  n0 -> n1;\n"
      "  n1 -> n2 [lhead=cluster_n2];\n"
      "  n2_exit -> n5 [ltail=cluster_n2];\n"
      "}\n";
  EXPECT_EQ(text.str(), expected);

  const bool rendered = render_svg(dot_path, svg_path);
  const bool graphviz_installed = std::system("command -v dot >/dev/null 2>&1") == 0;
  EXPECT_EQ(rendered, graphviz_installed);
  if (rendered) {
    std::ifstream svg(svg_path);
    std::stringstream svg_text;
    svg_text << svg.rdbuf();
    EXPECT_NE(svg_text.str().find("<svg"), std::string::npos);
  }
  EXPECT_FALSE(render_svg((dir / "does_not_exist.dot").string(), svg_path + ".2"));
  std::filesystem::remove_all(dir);
}

TEST(Dot, NestingBeyondTheLimitIsRefusedNamingTheNode) {
  graph_spec deep = nested_loops(20000);
  try {
    (void)to_dot(deep);
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 64 deep"), std::string::npos) << e.what();
    EXPECT_EQ(e.node(), loop_path(64));
  }
  dismantle(deep);

  graph_spec at_limit = nested_loops(64);  // as deep as check() accepts: drawn
  const std::string dot = to_dot(at_limit);
  EXPECT_EQ(count_of(dot, "subgraph cluster_"), 64u);
  dismantle(at_limit);
}

TEST(Dot, ChildGraphContainingItselfIsRefused) {
  auto looped = std::make_shared<graph_spec>();
  looped->nodes.push_back(make_node("again", child_node{looped}));
  const graph_spec g = graph({empty("start"), make_node("outer", child_node{looped}, {"start"})});
  try {
    (void)to_dot(g);
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("the child graph of 'outer/again' contains itself"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.node(), "outer/again");
  }
  looped->nodes.clear();  // break the ownership cycle
}

TEST(Dot, HostileNamesGiveValidDot) {
  using namespace std::string_literals;
  const std::string long_name(20000, 'L');
  const std::string with_nul = "nul\0inside"s;
  const std::string bad_utf8 = "bad\xff\xfe\xc3(\xed\xa0\x80)\xf4\x90\x80\x80\xe2\x82"s;
  const std::string controls = "ctl\x01\x1b[31m\x7f\ttab"s;
  const std::string good_utf8 = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"s;
  kernel_node k = kernel({param<int>(long_name), buffer<float*>(bad_utf8)});
  k.function_name = with_nul + long_name;
  auto inner = std::make_shared<graph_spec>(graph({empty(good_utf8), empty(long_name, {good_utf8})},
                                                  {}, {}, bad_utf8 + long_name));
  graph_spec g = graph({empty(long_name), empty(with_nul, {long_name}),
                        make_node(bad_utf8, std::move(k), {with_nul, "ghost" + with_nul + long_name}),
                        make_node(controls, child_node{inner}, {bad_utf8}),
                        make_node(good_utf8, alloc(long_name + bad_utf8), {controls})},
                       {}, {}, with_nul + long_name);
  const std::string dot = to_dot(g);
  EXPECT_EQ(dot.find('\0'), std::string::npos);
  EXPECT_TRUE(valid_utf8(dot));
  EXPECT_LT(longest_quoted(dot), 16384u);
  EXPECT_NE(dot.find("nul\\\\x00inside"), std::string::npos) << "NUL shown as \\x00";
  EXPECT_NE(dot.find("bad\\\\xFF\\\\xFE"), std::string::npos);
  EXPECT_NE(dot.find(good_utf8), std::string::npos) << "valid UTF-8 is kept as it is";
  EXPECT_NE(dot.find("... (20000 bytes)"), std::string::npos) << "a long name says it was cut";
  for (char c : dot) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << int(c);

  if (std::system("command -v dot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "Graphviz 'dot' is not installed: the DOT text was checked, not rendered";
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cudag_dot_hostile_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dot_path = (dir / "hostile.dot").string();
  write_dot(g, dot_path);
  // dot -Tsvg, its warnings (Graphviz warns rather than fails on bad UTF-8)
  // captured: a valid picture draws without any.
  const std::string log = (dir / "dot.log").string();
  const int status = std::system(("dot -Tsvg '" + dot_path + "' -o '" + (dir / "h.svg").string() +
                                  "' 2>'" + log + "'").c_str());
  std::ifstream log_in(log);
  std::stringstream log_text;
  log_text << log_in.rdbuf();
  EXPECT_EQ(status, 0) << log_text.str();
  EXPECT_EQ(log_text.str(), "") << "Graphviz complained";
  EXPECT_TRUE(render_svg(dot_path, (dir / "hostile.svg").string()));
  std::filesystem::remove_all(dir);
}

TEST(Dot, WriteDotToBadPathThrowsNamingThePath) {
  try {
    write_dot(pictured(), "/nonexistent_dir_for_cudag/x.dot");
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent_dir_for_cudag/x.dot"), std::string::npos);
  }
}

}  // namespace
}  // namespace cudag

namespace cudag {
namespace {

kernel_node named_kernel(const char* function_name) {
  return check_test::kernel_calling(reinterpret_cast<const void*>(&check_test::some_host_function),
                                    function_name, {});
}

TEST(Dot, KernelsAreNamedAsTheirUsersWriteThem) {
  // nvcc's host code, the demangler and g++ each spell an anonymous
  // namespace their own way; a picture shows the name as written.
  graph_spec inner = check_test::graph({make_node("step", named_kernel("{anonymous}::step"))});
  inner.name = "inner";
  const graph_spec spec = check_test::graph(
      {make_node("disturb", named_kernel("_GLOBAL__N__4709cdbd_11_adaptive_cu_main::disturb")),
       make_node("estimate", named_kernel("app::(anonymous namespace)::estimate(float const*, int)"),
                 {"disturb"}),
       make_node("nested", check_test::child_of(inner), {"estimate"})});
  const std::string dot = to_dot(spec);
  EXPECT_NE(dot.find("\"disturb\\nkernel\\ndisturb\\ngrid"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"estimate\\nkernel\\napp::estimate(float const*, int)\\ngrid"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"step\\nkernel\\nstep\\ngrid"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("anonymous"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("_GLOBAL__N"), std::string::npos) << dot;
}

TEST(Dot, KernelsThatWouldReadAlikeKeepTheirFullNames) {
  // Two files' anonymous `disturb`s, one of them in a child graph, and a
  // function whose name merely starts like nvcc's prefix.
  const char* first = "_GLOBAL__N__4709cdbd_11_adaptive_cu_main::disturb";
  const char* second = "_GLOBAL__N__0badf00d_9_other_cu_main::disturb";
  graph_spec inner = check_test::graph({make_node("again", named_kernel(second))});
  inner.name = "inner";
  const graph_spec spec = check_test::graph(
      {make_node("once", named_kernel(first)), make_node("twice", named_kernel(first), {"once"}),
       make_node("nested", check_test::child_of(inner), {"twice"}),
       make_node("lookalike", named_kernel("_GLOBAL__N_ish"), {"nested"})});
  const std::string dot = to_dot(spec);
  EXPECT_NE(dot.find(std::string("\"once\\nkernel\\n") + first + "\\ngrid"), std::string::npos) << dot;
  EXPECT_NE(dot.find(std::string("\"twice\\nkernel\\n") + first + "\\ngrid"), std::string::npos) << dot;
  EXPECT_NE(dot.find(std::string("\"again\\nkernel\\n") + second + "\\ngrid"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"lookalike\\nkernel\\n_GLOBAL__N_ish\\ngrid"), std::string::npos) << dot;
}

// produce -> consume (programmatic), consume -> drain (full), produce ->
// drain (launch completion); consume and drain synchronize their grid
// dependencies, produce does not.
graph_spec launched_early() {
  kernel_node synchronizing = kernel();
  synchronizing.synchronizes_grid_dependencies = true;
  node consume = make_node("consume", synchronizing, {"produce"});
  consume.dependency_kinds = {edge_kind::programmatic};
  node drain = make_node("drain", synchronizing, {"consume", "produce"});
  drain.dependency_kinds = {edge_kind::full, edge_kind::launch_completion};
  return graph({make_node("produce", kernel()), std::move(consume), std::move(drain)});
}

TEST(Dot, TypedEdgesAreDrawnApartAndSayTheirKind) {
  const std::string dot = to_dot(launched_early());
  // Ids in declaration order: produce n0, consume n1, drain n2.
  EXPECT_NE(dot.find("  n0 -> n1 [style=dashed, color=\"#0b5ed7\", fontcolor=\"#0b5ed7\", "
                     "penwidth=2, fontname=\"Helvetica\", fontsize=9, label=\"programmatic\"];\n"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("  n0 -> n2 [style=dotted, color=\"#7b2cbf\", fontcolor=\"#7b2cbf\", "
                     "penwidth=2, fontname=\"Helvetica\", fontsize=9, "
                     "label=\"launch completion\"];\n"),
            std::string::npos)
      << dot;
  // A full edge is drawn as before, with no attributes of its own.
  EXPECT_NE(dot.find("  n1 -> n2;\n"), std::string::npos) << dot;
  EXPECT_EQ(count_of(dot, "label=\"programmatic\""), 1u) << dot;
  EXPECT_EQ(count_of(dot, "label=\"launch completion\""), 1u) << dot;
}

TEST(Dot, AKernelThatSynchronizesItsGridDependenciesSaysSo) {
  const std::string dot = to_dot(launched_early());
  EXPECT_NE(dot.find("\"consume\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\\n"
                     "synchronizes grid dependencies\""),
            std::string::npos)
      << dot;
  EXPECT_EQ(count_of(dot, "synchronizes grid dependencies"), 2u) << dot;  // consume, drain
  EXPECT_NE(dot.find("\"produce\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\""),
            std::string::npos)
      << dot;
}

TEST(Dot, AKernelsPriorityAndLaunchAttributesAreShown) {
  kernel_node k = kernel();
  k.priority = 2;
  k.cluster = dim3(2, 1, 1);
  k.cooperative = true;
  k.shared_carveout = 50;
  const std::string dot = to_dot(graph({make_node("pairs", k), make_node("plain", kernel())}));
  EXPECT_NE(dot.find("\"pairs\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\\npriority 2\\n"
                     "cluster 2x1x1, cooperative, shared carveout 50%\""),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"plain\\nkernel\\nsome_kernel\\ngrid (4,1,1) block (128,1,1)\""), std::string::npos)
      << dot;
}

TEST(Dot, ATypedEdgeIntoOrOutOfAClusterKeepsItsKindAndTheBorder) {
  graph_spec g = launched_early();
  g.nodes[0].params = child_of(graph({empty("inside")}, {}, {}, "helper"));
  const std::string dot = to_dot(g);
  // produce is a cluster now (n0, its exit n0_exit; inside n1): consume n2, drain n3.
  EXPECT_NE(dot.find("  n0_exit -> n2 [style=dashed, color=\"#0b5ed7\", fontcolor=\"#0b5ed7\", "
                     "penwidth=2, fontname=\"Helvetica\", fontsize=9, label=\"programmatic\", "
                     "ltail=cluster_n0];\n"),
            std::string::npos)
      << dot;
}

}  // namespace
}  // namespace cudag
