#pragma once
// Kahn's topological sort taking, among ready nodes, the one declared first:
// the order lowering creates nodes in, so that it depends only on the
// declaration (cudaGraphExecUpdate pairs nodes by creation order). Shared by
// the Boost.Graph view of the checks and the flat plan of lowering.
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace cudag::check_detail {

/// `waiting_on[v]`: v's number of dependencies on entry; on return, what is
/// left of it (non-zero only for nodes on or behind a cycle).
/// `for_each_dependent(u, f)` calls f(w) for every node w that depends on u.
/// Appends the order to `order`; returns false when a cycle stopped it.
template <class Order, class ForEachDependent>
bool kahn_order(std::vector<std::uint32_t>& waiting_on, ForEachDependent&& for_each_dependent,
                Order& order) {
  const auto count = static_cast<std::uint32_t>(waiting_on.size());
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t v = 0; v < count; ++v)
    if (waiting_on[v] == 0) ready.push(v);
  order.reserve(order.size() + count);
  std::uint32_t emitted = 0;
  while (!ready.empty()) {
    const std::uint32_t u = ready.top();
    ready.pop();
    order.push_back(u);
    ++emitted;
    for_each_dependent(u, [&](std::uint32_t w) {
      if (--waiting_on[w] == 0) ready.push(w);
    });
  }
  return emitted == count;
}

}  // namespace cudag::check_detail
