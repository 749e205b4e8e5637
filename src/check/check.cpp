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

namespace check_detail {

checked_plans check_and_plan(const graph_spec& spec, std::span<const binding> bindings) {
  const spec_tree tree(spec);
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
