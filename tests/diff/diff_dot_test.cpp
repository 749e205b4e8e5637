// Graph diff as a DOT picture: the union of both specs, added nodes and edges
// green, removed ones red and dashed, changed ones orange with their changes,
// unchanged ones grey; escaped, bounded, and rendered by Graphviz.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cudag/diff.hpp"
#include "cudag/error.hpp"
#include "diff/diff_helpers.hpp"
#include "dot_text.hpp"

namespace cudag {
namespace {
using namespace diff_test;
using dot_text::longest_quoted;
using dot_text::valid_utf8;

constexpr std::string_view added_fill = "fillcolor=\"#d4edda\", color=\"#2e7d32\"";
constexpr std::string_view removed_fill = "style=\"rounded,filled,dashed\", fillcolor=\"#f8d7da\"";
constexpr std::string_view changed_fill = "fillcolor=\"#ffe0b2\", color=\"#ef6c00\"";
constexpr std::string_view unchanged_fill = "fillcolor=\"#f5f5f5\", color=\"#9e9e9e\"";

std::size_t count_of(const std::string& text, std::string_view part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// The DOT statement that draws the node labelled `label` (its first line).
std::string statement_of(const std::string& dot, const std::string& label) {
  const auto at = dot.find("[label=\"" + label);
  if (at == std::string::npos) return "";
  const auto begin = dot.rfind('\n', at) + 1;
  return dot.substr(begin, dot.find('\n', at) - begin);
}

// "a" + std::to_string(i) without g++ 12's false -Wrestrict warning.
std::string numbered(std::string_view prefix, int i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

bool graphviz_installed() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Renders `dot` to SVG with Graphviz; expects success and no message at all
// (a warning such as an lhead naming no cluster fails the test).
void expect_renders(const std::string& dot, const std::string& stem) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (numbered("cudag_diff_dot_", ::getpid()));
  std::filesystem::create_directories(dir);
  const auto dot_path = dir / (stem + ".dot");
  const auto svg_path = dir / (stem + ".svg");
  const auto err_path = dir / (stem + ".err");
  {
    std::ofstream out(dot_path, std::ios::binary);
    out << dot;
  }
  const std::string command = "dot -Tsvg '" + dot_path.string() + "' -o '" + svg_path.string() +
                              "' 2> '" + err_path.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << read_file(err_path) << dot;
  EXPECT_EQ(read_file(err_path), "") << "Graphviz complained";
  EXPECT_NE(read_file(svg_path).find("<svg"), std::string::npos);
  std::filesystem::remove_all(dir);
}

graph_spec small_before() {
  return graph({empty("a"), make_node("k", kernel(), {"a"}), empty("gone", {"a"}),
                make_node("sub", child_of(graph({empty("x"), empty("y", {"x"})})), {"k"})},
               {declare<int>("n")});
}

graph_spec small_after() {
  kernel_node k8 = kernel();
  k8.grid = dim3(8, 1, 1);
  return graph({empty("a"), make_node("k", k8, {"a"}), empty("new", {"k"}),
                make_node("sub", child_of(graph({empty("x"), empty("z", {"x"})})), {"k", "new"})},
               {declare<long>("n")});
}

TEST(DiffDot, WholePictureOfASmallDiff) {
  const graph_spec before = small_before(), after = small_after();
  const spec_diff d = diff(before, after);
  // Written out by hand: ids in the order drawn (the 'after' nodes, nested
  // ones inside their cluster, then the removed ones).
  const std::string expected =
      "digraph \"diff\" {\n"
      "  graph [compound=true, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=\"7 changes: "
      "nodes 2 added, 2 removed, 1 changed (kind or parameter); edges 1 added, 0 removed; "
      "declarations 1 changed\\ndeclaration n: param type int -> long\\ngreen: added, red dashed: "
      "removed, orange: changed, grey: unchanged\"];\n"
      "  node [fontname=\"Helvetica\", fontsize=10, shape=box];\n"
      "  n0 [label=\"a\\nempty\", style=\"rounded,filled\", fillcolor=\"#f5f5f5\", "
      "color=\"#9e9e9e\", fontcolor=\"#616161\", penwidth=1];\n"
      "  n1 [label=\"k\\nkernel\\ngrid (4,1,1) -> (8,1,1)\", style=\"rounded,filled\", "
      "fillcolor=\"#ffe0b2\", color=\"#ef6c00\", fontcolor=\"#000000\", penwidth=2];\n"
      "  n2 [label=\"new\\nempty\\n(added)\", style=\"rounded,filled\", fillcolor=\"#d4edda\", "
      "color=\"#2e7d32\", fontcolor=\"#000000\", penwidth=2];\n"
      "  subgraph cluster_n3 {\n"
      "    label=\"sub\";\n"
      "    style=\"rounded\"; color=\"#9e9e9e\"; penwidth=1;\n"
      "    n3 [label=\"sub\\nchild graph\", style=\"rounded,filled\", fillcolor=\"#f5f5f5\", "
      "color=\"#9e9e9e\", fontcolor=\"#616161\", penwidth=1];\n"
      "    n3_exit [shape=point, style=invis, width=0, height=0, label=\"\"];\n"
      "    n4 [label=\"x\\nempty\", style=\"rounded,filled\", fillcolor=\"#f5f5f5\", "
      "color=\"#9e9e9e\", fontcolor=\"#616161\", penwidth=1];\n"
      "    n5 [label=\"z\\nempty\\n(added)\", style=\"rounded,filled\", fillcolor=\"#d4edda\", "
      "color=\"#2e7d32\", fontcolor=\"#000000\", penwidth=2];\n"
      "    n6 [label=\"y\\nempty\\n(removed)\", style=\"rounded,filled,dashed\", "
      "fillcolor=\"#f8d7da\", color=\"#c62828\", fontcolor=\"#000000\", penwidth=2];\n"
      "    n4 -> n5 [color=\"#2e7d32\", penwidth=2];\n"
      "    n4 -> n6 [color=\"#c62828\", style=dashed, penwidth=2];\n"
      "    n3 -> n4 [style=dashed, arrowhead=none, color=\"#9e9e9e\"];\n"
      "    n5 -> n3_exit [style=invis];\n"
      "    n6 -> n3_exit [style=invis];\n"
      "  }\n"
      "  n7 [label=\"gone\\nempty\\n(removed)\", style=\"rounded,filled,dashed\", "
      "fillcolor=\"#f8d7da\", color=\"#c62828\", fontcolor=\"#000000\", penwidth=2];\n"
      "  n0 -> n1 [color=\"#9e9e9e\"];\n"
      "  n1 -> n2 [color=\"#2e7d32\", penwidth=2];\n"
      "  n1 -> n3 [color=\"#9e9e9e\", lhead=cluster_n3];\n"
      "  n2 -> n3 [color=\"#2e7d32\", penwidth=2, lhead=cluster_n3];\n"
      "  n0 -> n7 [color=\"#c62828\", style=dashed, penwidth=2];\n"
      "}\n";
  EXPECT_EQ(to_dot(d, before, after), expected);
  if (!graphviz_installed()) GTEST_SKIP() << "Graphviz 'dot' is not installed: not rendered";
  expect_renders(expected, "small");
}

// Every node kind and every kind of change in one picture.
graph_spec every_kind(bool changed) {
  kernel_node k = kernel({param<float*>("x")});
  if (changed) k.args[0] = param<float*>("y");
  const auto fn = [] {
    static const auto f = some_host_function();
    return f;
  }();
  static const auto rec =
      std::make_shared<const capture_function>([](cudaStream_t, std::span<const void* const>) {});
  std::vector<node> nodes{
      make_node("alloc", mem_alloc_node{"tmp", changed ? 2048u : 1024u, -1}),
      make_node("k", k, {"alloc"}),
      make_node("copy", memcpy_of(buffer<void*>("tmp"), param<const void*>("x")), {"k"}),
      make_node("set", memset_of(buffer<void*>("tmp")), changed ? std::vector<std::string>{"copy"}
                                                                : std::vector<std::string>{"k"}),
      make_node("host", host_node{fn, {param<int>("n")}}, {"set"}),
      make_node("gemm", captured_node{rec, {param<float*>("x")}, changed ? "gemm 128" : "gemm 64"},
                {"set"}),
      make_node("rec", event_record_node{param<cudaEvent_t>("ev")}, {"gemm"}),
      make_node("wait", event_wait_node{param<cudaEvent_t>("ev")}),
      make_node("sub", child_of(graph({empty("inside"), make_node("ik", kernel(), {"inside"})}, {}, {},
                                      changed ? "helper2" : "helper")),
                {"wait"}),
      make_node("branch",
                conditional(conditional_kind::if_else, "c",
                            {graph({empty("yes")}), graph({empty(changed ? "no2" : "no")})}),
                {"sub"}),
      make_node("sw", conditional(conditional_kind::switch_case, "c",
                                  {graph({empty("c0")}), graph({empty("c1")}), graph({empty("c2")})}),
                {"branch"}),
      make_node("free", mem_free_node{"tmp"}, {"sw", "host"}),
      changed ? make_node("morph", memset_of(param<void*>("y")), {"free"})
              : make_node("morph", kernel(), {"free"}),
  };
  if (changed) {
    nodes.push_back(make_node("later", child_of(graph({empty("fresh")})), {"morph"}));
  } else {
    nodes.push_back(make_node("loop", conditional(conditional_kind::while_loop, "c",
                                                  {graph({empty("step"), empty("step2", {"step"})})}),
                              {"morph"}));
  }
  return graph(std::move(nodes), {declare<float*>("x"), declare<float*>("y"), declare<int>("n")},
               {declare_condition("c")});
}

TEST(DiffDot, EveryStatusHasItsColour) {
  const graph_spec before = every_kind(false), after = every_kind(true);
  const spec_diff d = diff(before, after);
  const std::string dot = to_dot(d, before, after);
  // Changed: orange, the changes in the label.
  EXPECT_NE(statement_of(dot, "k\\nkernel\\nargument 0: param 'x' -> param 'y'").find(changed_fill),
            std::string::npos)
      << dot;
  EXPECT_NE(statement_of(dot, "alloc\\nmem_alloc\\nbytes 1024 -> 2048").find(changed_fill),
            std::string::npos);
  EXPECT_NE(statement_of(dot, "gemm\\ncaptured\\nwhat 'gemm 64' -> 'gemm 128'").find(changed_fill),
            std::string::npos);
  EXPECT_NE(statement_of(dot, "morph\\nmemset\\nkind kernel -> memset").find(changed_fill),
            std::string::npos);
  EXPECT_NE(statement_of(dot, "sub\\nchild graph helper2\\nchild graph name 'helper' -> 'helper2'")
                .find(changed_fill),
            std::string::npos);
  // Unchanged: grey, nested ones included.
  for (const char* label : {"copy\\nmemcpy\"", "host\\nhost\"", "rec\\nevent_record\"",
                            "wait\\nevent_wait\"", "inside\\nempty\"", "yes\\nempty\"",
                            "c2\\nempty\"", "free\\nmem_free\"", "set\\nmemset\"",
                            "branch\\nif_else (c)\"", "sw\\nswitch (c)\""})
    EXPECT_NE(statement_of(dot, label).find(unchanged_fill), std::string::npos) << label << "\n" << dot;
  // Added: green, a whole added child graph too; removed: red and dashed, a
  // whole removed conditional too.
  EXPECT_NE(statement_of(dot, "no2\\nempty\\n(added)").find(added_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "later\\nchild graph\\n(added)").find(added_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "fresh\\nempty\\n(added)").find(added_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "no\\nempty\\n(removed)").find(removed_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "loop\\nwhile (c)\\n(removed)").find(removed_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "step\\nempty\\n(removed)").find(removed_fill), std::string::npos);
  EXPECT_NE(statement_of(dot, "step2\\nempty\\n(removed)").find(removed_fill), std::string::npos);
  // Edges: set's dependency moved from k to copy; step -> step2 went with the loop.
  const std::string copy_id = statement_of(dot, "copy\\nmemcpy\"").substr(2, 2);
  const std::string set_id = statement_of(dot, "set\\nmemset\"").substr(2, 2);
  const std::string k_id = statement_of(dot, "k\\nkernel").substr(2, 2);
  EXPECT_NE(dot.find(copy_id + " -> " + set_id + " [color=\"#2e7d32\", penwidth=2];"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find(k_id + " -> " + set_id + " [color=\"#c62828\", style=dashed, penwidth=2];"),
            std::string::npos)
      << dot;
  EXPECT_EQ(count_of(dot, "[color=\"#2e7d32\", penwidth=2"), 2u) << "copy -> set, morph -> later";
  // Bodies of numbered conditionals are clusters of their own.
  EXPECT_NE(dot.find("label=\"then\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"else\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"case 2\""), std::string::npos);
  EXPECT_EQ(count_of(dot, "{"), count_of(dot, "}"));
  if (!graphviz_installed()) GTEST_SKIP() << "Graphviz 'dot' is not installed: not rendered";
  expect_renders(dot, "every_kind");
}

TEST(DiffDot, EdgeKindsAreLabelledAndAChangedKindIsOrange) {
  kernel_node k = kernel();
  k.synchronizes_grid_dependencies = true;
  const auto spec = [&](edge_kind pc, edge_kind pd) {
    node c = make_node("c", k, {"p"});
    c.dependency_kinds = {pc};
    node d = make_node("d", k, {"c", "p"});
    d.dependency_kinds = {edge_kind::full, pd};
    return graph({make_node("p", kernel()), std::move(c), std::move(d)});
  };
  const graph_spec before = spec(edge_kind::full, edge_kind::launch_completion);
  const graph_spec after = spec(edge_kind::programmatic, edge_kind::launch_completion);
  const spec_diff d = diff(before, after);
  const std::string dot = to_dot(d, before, after);
  // Ids: p n0, c n1, d n2.
  EXPECT_NE(dot.find("  n0 -> n1 [color=\"#ef6c00\", fontcolor=\"#ef6c00\", penwidth=2, "
                     "label=\"full -> programmatic\"];\n"),
            std::string::npos)
      << dot;
  // Unchanged: grey, its kind labelled where it is not full.
  EXPECT_NE(dot.find("  n1 -> n2 [color=\"#9e9e9e\"];\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  n0 -> n2 [color=\"#9e9e9e\", label=\"launch_completion\"];\n"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("edges 0 added, 0 removed, 1 of another kind;"), std::string::npos) << dot;
  // A picture of no change keeps every kind's label.
  const std::string same = to_dot(diff(after, after), after, after);
  EXPECT_NE(same.find("  n0 -> n1 [color=\"#9e9e9e\", label=\"programmatic\"];\n"),
            std::string::npos)
      << same;
  // An added or removed typed edge keeps its colour and says its kind.
  graph_spec fewer = after;
  fewer.nodes[2].deps = {"c"};
  fewer.nodes[2].dependency_kinds.clear();
  const std::string removed = to_dot(diff(after, fewer), after, fewer);
  EXPECT_NE(removed.find("  n0 -> n2 [color=\"#c62828\", style=dashed, penwidth=2, "
                         "label=\"launch_completion\"];\n"),
            std::string::npos)
      << removed;
  if (!graphviz_installed()) GTEST_SKIP() << "Graphviz 'dot' is not installed: not rendered";
  expect_renders(dot, "edge_kinds");
}

TEST(DiffDot, NoChangesAllGrey) {
  const graph_spec g = every_kind(false);
  const std::string dot = to_dot(diff(g, g), g, g);
  EXPECT_NE(dot.find("label=\"no changes\\n"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("#d4edda"), std::string::npos);
  EXPECT_EQ(dot.find("#f8d7da"), std::string::npos);
  EXPECT_EQ(dot.find("#ffe0b2"), std::string::npos);
  EXPECT_EQ(dot.find("#2e7d32"), std::string::npos);
  EXPECT_EQ(dot.find("#c62828"), std::string::npos);
  EXPECT_GT(count_of(dot, unchanged_fill), 20u);
}

TEST(DiffDot, LabelsAreBounded) {
  kernel_node many = kernel();
  for (int i = 0; i < 20; ++i) many.args.push_back(param<int>(numbered("a", i)));
  kernel_node renamed = many;
  for (auto& arg : renamed.args) std::get<param_ref>(arg.source).name += "x";
  std::vector<param_decl> params;
  for (int i = 0; i < 10; ++i) params.push_back(declare<int>(numbered("p", i)));
  const graph_spec before = graph({make_node("k", many)});
  const graph_spec after = graph({make_node("k", renamed)}, params);
  const spec_diff d = diff(before, after);
  ASSERT_EQ(d.changes.size(), 30u);
  const std::string dot = to_dot(d, before, after);
  EXPECT_NE(dot.find("argument 7: param 'a7' -> param 'a7x'\\n... and 12 more\""), std::string::npos)
      << dot;
  EXPECT_EQ(dot.find("argument 8:"), std::string::npos);
  EXPECT_NE(dot.find("declaration p7: param added (int)\\n... and 2 more\\n"), std::string::npos);
  EXPECT_EQ(dot.find("declaration p8"), std::string::npos);
}

TEST(DiffDot, MissingDependencyIsDrawnAsMissing) {
  const graph_spec before = graph({empty("a", {"ghost"})});
  const graph_spec after = graph({empty("a", {"ghost", "phantom"})});
  const std::string dot = to_dot(diff(before, after), before, after);
  EXPECT_NE(dot.find("\"ghost\\n(missing)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"phantom\\n(missing)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n2 -> n0 [color=\"#2e7d32\", penwidth=2];"), std::string::npos) << dot;
}

TEST(DiffDot, HostileNamesGiveValidDot) {
  using namespace std::string_literals;
  const std::string long_name(20000, 'L');
  const std::string with_nul = "nul\0inside \"quoted\" back\\slash"s;
  const std::string bad_utf8 = "bad\xff\xfe\xc3(\xed\xa0\x80)"s;
  const std::string good_utf8 = "caf\xc3\xa9 \xe2\x82\xac"s;
  kernel_node k = kernel({param<int>(long_name)});
  kernel_node k2 = kernel({param<int>(long_name + "2")});
  k2.function_name = with_nul + long_name;
  std::vector<param_decl> params;
  for (int i = 0; i < 40; ++i) params.push_back(declare<int>(long_name + std::to_string(i)));
  const graph_spec before =
      graph({empty(long_name), make_node(bad_utf8, k, {long_name}), empty(with_nul, {bad_utf8}),
             make_node(good_utf8, child_of(graph({empty(long_name + "inner")}, {}, {}, bad_utf8)))});
  const graph_spec after =
      graph({empty(long_name), make_node(bad_utf8, k2, {long_name, with_nul + "x"}),
             empty(with_nul + "x"),
             make_node(good_utf8, child_of(graph({empty(long_name + "inner2")}, {}, {}, with_nul)))},
            params);
  const spec_diff d = diff(before, after);
  const std::string dot = to_dot(d, before, after);
  EXPECT_EQ(dot.find('\0'), std::string::npos);
  EXPECT_TRUE(valid_utf8(dot));
  EXPECT_LT(longest_quoted(dot), 16384u);
  for (char c : dot) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << int(c);
  EXPECT_NE(dot.find("nul\\\\x00inside \\\"quoted\\\" back\\\\slash"), std::string::npos) << dot;
  EXPECT_NE(dot.find("bad\\\\xFF\\\\xFE"), std::string::npos);
  EXPECT_NE(dot.find(good_utf8), std::string::npos) << "valid UTF-8 is kept as it is";
  EXPECT_NE(dot.find("... (20000 bytes)"), std::string::npos);
  const std::string text = d.text();
  EXPECT_TRUE(valid_utf8(text));
  for (char c : text) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << int(c);
  if (!graphviz_installed()) GTEST_SKIP() << "Graphviz 'dot' is not installed: not rendered";
  expect_renders(dot, "hostile");
}

TEST(DiffDot, ChildGraphContainingItselfIsRefused) {
  auto looped = std::make_shared<graph_spec>();
  looped->nodes.push_back(make_node("again", child_node{looped}));
  const graph_spec g = graph({make_node("outer", child_node{looped})});
  const spec_diff d = diff(g, g);  // the same graph: diff() need not descend
  EXPECT_TRUE(d.empty());
  try {
    (void)to_dot(d, g, g);  // a picture must
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("to_dot: the child graph of 'outer/again'"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.node(), "outer/again");
  }
  looped->nodes.clear();  // break the ownership cycle
}

}  // namespace
}  // namespace cudag
