// Kahn's algorithm with a min-heap of ready nodes, so that the order depends
// only on the declaration, not on hash maps or edge storage: lowering creates
// nodes in this order and cudaGraphExecUpdate pairs nodes by creation order.
#include <algorithm>
#include <functional>
#include <queue>

#include "cudag/check.hpp"
#include "graph_view.hpp"

namespace cudag {
namespace check_detail {

void graph_view::order_nodes() {
  const std::uint32_t count = static_cast<std::uint32_t>(size());
  std::vector<std::uint32_t> waiting_on(count);
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t v = 0; v < count; ++v) {
    waiting_on[v] = static_cast<std::uint32_t>(in_degree(v, graph_));
    if (waiting_on[v] == 0) ready.push(v);
  }
  order_.reserve(count);
  rank_.assign(count, 0);
  while (!ready.empty()) {
    std::uint32_t u = ready.top();
    ready.pop();
    rank_[u] = static_cast<std::uint32_t>(order_.size());
    order_.push_back(u);
    for (auto e : boost::make_iterator_range(out_edges(u, graph_))) {
      std::uint32_t w = target(e, graph_);
      if (--waiting_on[w] == 0) ready.push(w);
    }
  }
  if (order_.size() != count) throw_cycle(waiting_on);
}

// Every node Kahn could not emit still waits on an unemitted dependency, so
// walking from one of them to such a dependency, again and again, must come
// back to a node already walked: that stretch of the walk is a cycle.
void graph_view::throw_cycle(const std::vector<std::uint32_t>& waiting_on) const {
  const std::uint32_t count = static_cast<std::uint32_t>(size());
  std::uint32_t start = 0;
  while (waiting_on[start] == 0) ++start;  // lowest unemitted index

  constexpr std::uint32_t not_walked = ~0u;
  std::vector<std::uint32_t> step_of(count, not_walked);
  std::vector<std::uint32_t> walk;
  std::uint32_t v = start;
  while (step_of[v] == not_walked) {
    step_of[v] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(v);
    // First unemitted dependency in declaration order, for a stable answer.
    std::uint32_t chosen = not_walked;
    std::uint32_t chosen_slot = not_walked;
    for (auto e : boost::make_iterator_range(in_edges(v, graph_))) {
      std::uint32_t u = source(e, graph_);
      if (waiting_on[u] != 0 && graph_[e].slot < chosen_slot) {
        chosen = u;
        chosen_slot = graph_[e].slot;
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

std::vector<std::size_t> topological_order(const graph_spec& spec) {
  check_detail::graph_view view(spec, "", check_detail::describe_top_level(spec));
  return view.order();
}

}  // namespace cudag
