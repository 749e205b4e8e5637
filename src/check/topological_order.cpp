// Kahn's algorithm taking the lowest ready node first (kahn.hpp), so that the
// order depends only on the declaration, not on hash maps or edge storage:
// lowering creates nodes in this order and cudaGraphExecUpdate pairs nodes by
// creation order.
#include <algorithm>

#include "cudag/check.hpp"
#include "dependency_plan.hpp"
#include "graph_view.hpp"
#include "kahn.hpp"

namespace cudag {
namespace check_detail {

void graph_view::order_nodes(const csr_rows& dependents) {
  const std::uint32_t count = static_cast<std::uint32_t>(size());
  if (declared_in_order_) {
    in_declaration_order(count, order_);
    resize_in_huge_pages(rank_, count);
    for (std::uint32_t v = 0; v < count; ++v) rank_[v] = v;
    return;
  }
  const bool complete = kahn_order(count, first_slot_.data(), dependents.begin.data(),
                                   dependents.target.data(), order_);
  if (!complete) throw_cycle();
  resize_in_huge_pages(rank_, count);
  for (std::uint32_t position = 0; position < count; ++position)
    rank_[order_[position]] = position;
}

// Every node Kahn could not emit still waits on an unemitted dependency, so
// walking from one of them to such a dependency, again and again, must come
// back to a node already walked: that stretch of the walk is a cycle.
void graph_view::throw_cycle() const {
  const std::uint32_t count = static_cast<std::uint32_t>(size());
  std::vector<char> unemitted(count, 1);
  for (const std::size_t v : order_) unemitted[v] = 0;
  std::uint32_t start = 0;
  while (!unemitted[start]) ++start;  // lowest unemitted index

  constexpr std::uint32_t not_walked = ~0u;
  std::vector<std::uint32_t> step_of(count, not_walked);
  std::vector<std::uint32_t> walk;
  std::uint32_t v = start;
  while (step_of[v] == not_walked) {
    step_of[v] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(v);
    // First unemitted dependency in declaration order, for a stable answer.
    std::uint32_t chosen = not_walked;
    // Dependencies come in declared order: the first unemitted one wins.
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies_))) {
      const std::uint32_t u = target(e, dependencies_);
      if (unemitted[u]) {
        chosen = u;
        break;
      }
    }
    v = chosen;
  }
  // walk[step_of[v]..] follows dependencies backwards; the cycle in run order
  // is its reverse, begun at its lowest declared node.
  std::vector<std::uint32_t> cycle(walk.begin() + step_of[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());

  std::vector<std::string> names;
  std::string text;
  for (std::uint32_t n : cycle) {
    names.push_back(path(n));
    text += path(n) + " -> ";
  }
  text += path(cycle.front());
  throw check_error(description_ + " has a cycle: " + text +
                        " (each node depends on the one before it)",
                    std::move(names));
}

}  // namespace check_detail

namespace check_detail {

dependency_plan plan_dependencies(const graph_spec& spec) {
  const auto count = static_cast<std::uint32_t>(spec.nodes.size());
  // Any name that does not resolve, and any cycle, is reported by the full
  // view, whose messages name the nodes; the plan itself stays lean.
  auto report = [&] {
    graph_view(spec, "", describe_top_level(spec));
    throw check_error(describe_top_level(spec) + ": dependencies do not resolve", {});
  };
  dependency_plan plan;
  resize_in_huge_pages(plan.dep_begin, count + 1);
  // Each node's dependencies are counted as its name is indexed (one pass
  // over the nodes).
  name_index names(spec.nodes);
  index_all(
      names, spec.nodes,
      [&](std::uint32_t v) {
        plan.dep_begin[v + 1] = plan.dep_begin[v] + static_cast<std::uint32_t>(spec.nodes[v].deps.size());
      },
      [&](std::uint32_t, std::uint32_t) { report(); });

  resize_in_huge_pages(plan.deps, plan.dep_begin[count]);
  bool declared_in_order = true;  // every dependency declared before its dependent
  const auto resolved = [&](std::size_t v, std::size_t k, std::uint32_t u) {
    plan.deps[plan.dep_begin[v] + k] = u;
    declared_in_order &= u < v;
  };
  const auto unknown = [&](std::size_t, std::size_t) { report(); };
  resolve_dependencies(names, spec.nodes, plan.dep_begin.data(), resolved, unknown);
  if (declared_in_order) {  // Kahn's order is the declaration's: see in_declaration_order()
    in_declaration_order(count, plan.order);
    return plan;
  }
  const csr_rows dependents = reverse_csr(count, plan.dep_begin.data(), plan.deps.data());
  const bool complete = kahn_order(count, plan.dep_begin.data(), dependents.begin.data(),
                                   dependents.target.data(), plan.order);
  if (!complete) report();
  return plan;
}

}  // namespace check_detail

std::vector<std::size_t> topological_order(const resolved_graph& graph) {
  // Straight from the resolved rows into the result: nothing is copied.
  const auto count = static_cast<std::uint32_t>(graph.size());
  const std::uint32_t* begin = graph.dependency_begin().data();
  const std::uint32_t* deps = graph.dependency_indices().data();
  std::vector<std::size_t> order;
  bool declared_in_order = true;
  for (std::uint32_t v = 0; v < count && declared_in_order; ++v)
    for (std::uint32_t s = begin[v]; s < begin[v + 1]; ++s) declared_in_order &= deps[s] < v;
  if (declared_in_order) {  // Kahn's order is the declaration's
    check_detail::in_declaration_order(count, order);
    return order;
  }
  const check_detail::csr_rows dependents = check_detail::reverse_csr(count, begin, deps);
  if (!check_detail::kahn_order(count, begin, dependents.begin.data(), dependents.target.data(), order)) {
    const check_detail::resolved_dependencies rows{graph.dependency_begin(), graph.dependency_indices()};
    check_detail::graph_view(graph.spec(), rows, "", check_detail::describe_top_level(graph.spec()));  // throws, naming the cycle
  }
  return order;
}

std::vector<std::size_t> topological_order(const graph_spec& spec) {
  const check_detail::dependency_plan plan = check_detail::plan_dependencies(spec);
  std::vector<std::size_t> order;
  check_detail::resize_in_huge_pages(order, plan.order.size());
  std::copy(plan.order.begin(), plan.order.end(), order.begin());
  return order;
}

}  // namespace cudag
