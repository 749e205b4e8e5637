// check(): the passes in order, structure first, so that later passes may
// rely on resolved names and an acyclic graph in every frame.
#include "cudag/check.hpp"

#include <boost/range/iterator_range.hpp>

#include "check_passes.hpp"
#include "checked_plan.hpp"
#include "spec_tree.hpp"

namespace cudag {
namespace {

void run_spec_passes(const check_detail::spec_tree& tree, bool for_lowering = false) {
  check_detail::check_parameter_declarations(tree);
  check_detail::check_node_rules(tree, for_lowering);
  check_detail::check_conditions_used(tree);
  check_detail::check_buffer_lifetimes(tree);
}

check_detail::resolved_dependencies dependencies_of(const resolved_graph& graph) {
  return {graph.dependency_begin(), graph.dependency_indices()};
}

}  // namespace

void check(const graph_spec& spec) {
  const check_detail::spec_tree tree(spec);  // structure of every graph
  run_spec_passes(tree);
}

void check(const graph_spec& spec, std::span<const binding> bindings) {
  const check_detail::spec_tree tree(spec);
  run_spec_passes(tree);
  check_detail::check_bindings(tree, bindings);
}

void check(const resolved_graph& graph) {
  const check_detail::spec_tree tree(graph.spec(), dependencies_of(graph));
  run_spec_passes(tree);
}

void check(const resolved_graph& graph, std::span<const binding> bindings) {
  const check_detail::spec_tree tree(graph.spec(), dependencies_of(graph));
  run_spec_passes(tree);
  check_detail::check_bindings(tree, bindings);
}

resolved_graph resolve(graph_spec spec) {
  std::vector<std::uint32_t> dep_begin, deps;
  {
    // The view refuses what a resolved graph must not hold, with check()'s
    // messages; its rows are the resolved dependencies.
    const check_detail::graph_view view(spec, "", check_detail::describe_top_level(spec));
    dep_begin = view.first_slot();
    deps.resize(view.edge_count());
    for (std::uint32_t v = 0, slot = 0; v < view.size(); ++v)
      for (const auto e : boost::make_iterator_range(out_edges(v, view.dependencies())))
        deps[slot++] = static_cast<std::uint32_t>(target(e, view.dependencies()));
  }
  return resolved_graph(std::move(spec), std::move(dep_begin), std::move(deps));
}

resolved_graph::resolved_graph() : dep_begin_(1, 0) { spec_.name = "graph"; }

resolved_graph::resolved_graph(graph_spec spec, std::vector<std::uint32_t> dep_begin,
                               std::vector<std::uint32_t> deps) noexcept
    : spec_(std::move(spec)), dep_begin_(std::move(dep_begin)), deps_(std::move(deps)) {}

namespace check_detail {

checked_plans check_and_plan(const graph_spec& spec, std::span<const binding> bindings,
                             const resolved_dependencies* resolved) {
  const spec_tree tree = resolved ? spec_tree(spec, *resolved) : spec_tree(spec);
  run_spec_passes(tree, true);
  check_bindings(tree, bindings);
  checked_plans plans;
  plans.graphs.reserve(tree.size());
  for (std::size_t f = 0; f < tree.size(); ++f) {
    const frame& at = tree.at(f);
    plans.total_nodes += at.spec().nodes.size();
    plans.value_slots += at.value_count;
    plans.value_bytes += at.value_bytes;
    const graph_view& view = at.view;
    dependency_plan& plan = plans.graphs[&view.spec()];
    plan.order.assign(view.order().begin(), view.order().end());
    plan.dep_begin = view.first_slot();
    plan.deps.resize(plan.dep_begin.back());
    for (std::uint32_t v = 0; v < view.size(); ++v) {
      std::uint32_t slot = plan.dep_begin[v];
      for (const auto e : boost::make_iterator_range(out_edges(v, view.dependencies())))
        plan.deps[slot++] = static_cast<std::uint32_t>(target(e, view.dependencies()));
    }
  }
  return plans;
}

}  // namespace check_detail

}  // namespace cudag
