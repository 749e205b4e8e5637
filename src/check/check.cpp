// check(): the passes in order, structure first, so that later passes may
// rely on resolved names and an acyclic graph in every frame; and the
// resolved graph (resolve(), its rows), whose structure is check()'s.
#include "cudag/check.hpp"

#include <boost/range/iterator_range.hpp>

#include <limits>

#include "check_passes.hpp"
#include "checked_plan.hpp"
#include "cudag/error.hpp"
#include "nesting.hpp"
#include "spec_tree.hpp"

namespace cudag {
namespace {

// Races are judged last, with the bindings where there are any (aliases);
// what they judge is collected while the node rules walk the nodes.
void run_passes(const check_detail::spec_tree& tree, std::span<const binding> bindings,
                bool with_bindings, bool for_lowering) {
  check_detail::race_collector races(tree, bindings);
  check_detail::check_parameter_declarations(tree);
  check_detail::check_node_rules(tree, for_lowering, &races);
  check_detail::check_conditions_used(tree);
  check_detail::check_buffer_lifetimes(tree);
  if (with_bindings) check_detail::check_bindings(tree, bindings);
  (void)races.judge();
}

void run_spec_passes(const check_detail::spec_tree& tree) { run_passes(tree, {}, false, false); }

void run_spec_passes(const check_detail::spec_tree& tree, std::span<const binding> bindings,
                     bool for_lowering = false) {
  run_passes(tree, bindings, true, for_lowering);
}


}  // namespace

void check(const graph_spec& spec) {
  const check_detail::spec_tree tree(spec);  // structure of every graph
  run_spec_passes(tree);
}

void check(const graph_spec& spec, std::span<const binding> bindings) {
  const check_detail::spec_tree tree(spec);
  run_spec_passes(tree, bindings);
}

void check(const resolved_graph& graph) {
  const check_detail::spec_tree tree(graph.spec(), graph.rows());
  run_spec_passes(tree);
}

void check(const resolved_graph& graph, std::span<const binding> bindings) {
  const check_detail::spec_tree tree(graph.spec(), graph.rows());
  run_spec_passes(tree, bindings);
}

resolved_graph resolve(graph_spec spec) {
  detail::dependency_rows rows;
  {
    // The tree refuses what a resolved graph must not hold, with check()'s
    // messages; each of its graphs' views gives that graph's rows.
    const check_detail::spec_tree tree(spec);
    std::vector<std::uint32_t> deps;
    for (std::size_t f = 0; f < tree.size(); ++f) {
      const check_detail::graph_view& view = tree.at(f).view;
      deps.resize(view.edge_count());
      for (std::uint32_t v = 0, slot = 0; v < view.size(); ++v)
        for (const auto e : boost::make_iterator_range(out_edges(v, view.dependencies())))
          deps[slot++] = static_cast<std::uint32_t>(target(e, view.dependencies()));
      if (f == 0) {  // the top level's, usually nearly all: its deps taken over
        rows.add_first(std::vector<std::uint32_t>(view.first_slot()), std::move(deps));
        deps = {};
      } else {
        rows.add(view.first_slot(), deps);
      }
    }
  }
  return resolved_graph(std::move(spec), std::move(rows));
}

// ------------------------------------------------ the resolved graph's rows --
namespace detail {

void dependency_rows::add(std::span<const std::uint32_t> begin, std::span<const std::uint32_t> deps) {
  if (begin.empty() || begin_.size() + begin.size() > std::numeric_limits<std::uint32_t>::max() ||
      deps_.size() + deps.size() > std::numeric_limits<std::uint32_t>::max())
    throw error("resolved graph: more dependency rows than 32-bit indices reach");
  graphs_.push_back({static_cast<std::uint32_t>(begin_.size()), static_cast<std::uint32_t>(deps_.size()),
                     static_cast<std::uint32_t>(begin.size() - 1)});
  begin_.insert(begin_.end(), begin.begin(), begin.end());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
}

void dependency_rows::add_first(std::vector<std::uint32_t>&& begin, std::vector<std::uint32_t>&& deps) {
  if (!graphs_.empty() || begin.empty()) return add(begin, deps);
  graphs_.push_back({0, 0, static_cast<std::uint32_t>(begin.size() - 1)});
  begin_ = std::move(begin);
  deps_ = std::move(deps);
}

void dependency_rows::add_by_name(std::size_t graphs) { graphs_.resize(graphs_.size() + graphs); }

void dependency_rows::add(const dependency_rows& nested) {
  for (std::size_t g = 0; g < nested.graph_count(); ++g) {
    if (nested.resolved(g)) add(nested.begin(g), nested.indices(g));
    else add_by_name(1);
  }
}

std::size_t graphs_in_tree(const graph_spec& graph, std::size_t depth) {
  // A child graph that contains itself is refused by check() at this depth;
  // counting stops there too.
  if (depth > check_detail::max_nesting) return 1;
  std::size_t count = 1;
  for (const node& n : graph.nodes) {
    if (const auto* child = std::get_if<child_node>(&n.params)) {
      if (child->graph) count += graphs_in_tree(*child->graph, depth + 1);
      else count += 1;
    } else if (const auto* cond = std::get_if<conditional_node>(&n.params)) {
      for (const graph_spec& body : cond->bodies) count += graphs_in_tree(body, depth + 1);
    }
  }
  return count;
}

}  // namespace detail

resolved_graph::resolved_graph() {
  spec_.name = "graph";
  const std::uint32_t no_nodes[] = {0};
  rows_.add(no_nodes, {});
}

resolved_graph::resolved_graph(graph_spec spec, detail::dependency_rows rows) noexcept
    : spec_(std::move(spec)), rows_(std::move(rows)) {}

namespace check_detail {

checked_plans check_and_plan(const graph_spec& spec, std::span<const binding> bindings,
                             const cudag::detail::dependency_rows* resolved) {
  const spec_tree tree = resolved ? spec_tree(spec, *resolved) : spec_tree(spec);
  run_spec_passes(tree, bindings, true);
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
