// Shape analyses of the top-level graph: one pass over the topological order
// gives every node's depth (nodes on the longest chain ending at it), from
// which the critical path and the width follow.
#include <algorithm>

#include "cudag/check.hpp"
#include "check_passes.hpp"
#include "graph_view.hpp"
#include "redundant_edges.hpp"

namespace cudag {

graph_analysis analyze(const graph_spec& spec) { return analyze(spec, analyze_options{}); }

graph_analysis analyze(const graph_spec& spec, analyze_options options) {
  const check_detail::graph_view view(spec, "", check_detail::describe_top_level(spec));
  const auto& dependencies = view.dependencies();

  graph_analysis result;
  result.order = view.order();

  std::vector<std::size_t> depth(view.size(), 1);
  for (std::size_t index : result.order) {
    const auto v = static_cast<std::uint32_t>(index);
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies)))
      depth[v] = std::max(depth[v], depth[target(e, dependencies)] + 1);
  }
  std::vector<std::size_t> nodes_at_depth(view.size() + 1, 0);
  for (std::size_t d : depth) {
    result.critical_path = std::max(result.critical_path, d);
    result.width = std::max(result.width, ++nodes_at_depth[d]);
  }

  if (options.redundant_edges) result.redundant_edges =
        check_detail::find_redundant_edges(view, options.redundant_edge_work_limit);
  if (options.races) result.races = check_detail::find_races(check_detail::spec_tree(spec), options.bindings);
  return result;
}

std::vector<std::pair<std::string, std::string>> redundant_edges(const graph_spec& spec) {
  return redundant_edges(spec, analyze_options{}.redundant_edge_work_limit);
}

std::vector<std::pair<std::string, std::string>> redundant_edges(const graph_spec& spec,
                                                                 std::uint64_t work_limit) {
  const check_detail::graph_view view(spec, "", check_detail::describe_top_level(spec));
  return check_detail::find_redundant_edges(view, work_limit);
}

}  // namespace cudag
