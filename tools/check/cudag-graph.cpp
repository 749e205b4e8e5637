// cudag-graph: checks and analyses a random DAG spec and draws it.
//   cudag-graph random N E [--seed S] [--dot out.dot] [--svg out.svg]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "cudag/check.hpp"
#include "cudag/dot.hpp"
#include "random_dag.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: cudag-graph random N E [--seed S] [--dot out.dot] [--svg out.svg]\n"
               "  builds a random DAG of N empty nodes and E edges, checks it, prints its\n"
               "  analyses, writes DOT and, where Graphviz is installed, SVG\n");
  return 2;
}

bool parse_count(const char* text, std::size_t& out) {
  char* end = nullptr;
  out = std::strtoull(text, &end, 10);
  return end && *end == '\0' && end != text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || std::string_view(argv[1]) != "random") return usage();
  std::size_t nodes = 0, edges = 0, seed = 1;
  if (!parse_count(argv[2], nodes) || !parse_count(argv[3], edges)) return usage();
  std::string dot_path, svg_path;
  for (int i = 4; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return usage();
    if (flag == "--seed") {
      if (!parse_count(argv[++i], seed)) return usage();
    } else if (flag == "--dot") {
      dot_path = argv[++i];
    } else if (flag == "--svg") {
      svg_path = argv[++i];
    } else {
      return usage();
    }
  }

  try {
    const cudag::graph_spec spec = cudag::tools::random_dag(nodes, edges, seed);
    cudag::check(spec);
    const cudag::graph_analysis analysis = cudag::analyze(spec);
    std::printf("%s: %zu nodes, %zu edges: check passed\n", spec.name.c_str(), nodes, edges);
    std::printf("critical path: %zu nodes\n", analysis.critical_path);
    std::printf("width:         %zu nodes at one depth\n", analysis.width);
    std::printf("redundant:     %zu edges\n", analysis.redundant_edges.size());
    for (std::size_t i = 0; i < analysis.redundant_edges.size() && i < 10; ++i) {
      std::printf("  %s -> %s\n", analysis.redundant_edges[i].first.c_str(),
                  analysis.redundant_edges[i].second.c_str());
    }
    std::printf("order:        ");
    for (std::size_t i = 0; i < analysis.order.size() && i < 10; ++i)
      std::printf(" %s", spec.nodes[analysis.order[i]].name.c_str());
    std::printf("%s\n", analysis.order.size() > 10 ? " ..." : "");

    if (dot_path.empty() && !svg_path.empty()) dot_path = svg_path + ".dot";
    if (!dot_path.empty()) {
      cudag::write_dot(spec, dot_path);
      std::printf("DOT written to %s\n", dot_path.c_str());
    }
    if (!svg_path.empty()) {
      if (cudag::render_svg(dot_path, svg_path))
        std::printf("SVG written to %s\n", svg_path.c_str());
      else
        std::printf("no SVG: Graphviz 'dot' is not installed or failed\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudag-graph: %s\n", e.what());
    return 1;
  }
  return 0;
}
