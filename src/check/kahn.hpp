#pragma once
// Kahn's topological sort taking, among ready nodes, the one declared first:
// the order lowering creates nodes in, so that it depends only on the
// declaration (cudaGraphExecUpdate pairs nodes by creation order). Shared by
// the Boost.Graph view of the checks and the flat plan of lowering.
//
// The ready nodes are a hierarchical bitset (64 children a word, four levels
// for a million nodes): insertion and taking the lowest are a few word
// operations on memory that stays in cache, where a binary heap of a wide
// graph's ready nodes costs O(log V) scattered moves per node.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "large_array.hpp"

namespace cudag::check_detail {

class ready_set {
 public:
  explicit ready_set(std::uint32_t count) {
    std::size_t words = (static_cast<std::size_t>(count) + 63) / 64;
    std::size_t total = 0;
    do {
      words = words == 0 ? 1 : words;
      level_begin_[levels_++] = total;
      total += words;
      words = words == 1 ? 0 : (words + 63) / 64;
    } while (words != 0);
    bits_.assign(total, 0);
  }

  [[nodiscard]] bool empty() const noexcept { return bits_[level_begin_[levels_ - 1]] == 0; }

  void insert(std::uint32_t index) noexcept {
    std::size_t at = index;
    for (std::size_t level = 0; level < levels_; ++level) {
      std::uint64_t& word = bits_[level_begin_[level] + at / 64];
      const bool was_empty = word == 0;
      word |= std::uint64_t{1} << (at % 64);
      if (!was_empty) return;
      at /= 64;
    }
  }

  /// The lowest index held; the set must not be empty.
  [[nodiscard]] std::uint32_t lowest() const noexcept {
    std::size_t at = 0;
    for (std::size_t level = levels_; level-- > 0;)
      at = at * 64 + static_cast<std::size_t>(std::countr_zero(bits_[level_begin_[level] + at]));
    return static_cast<std::uint32_t>(at);
  }

  /// Removes and returns the lowest index held; the set must not be empty.
  std::uint32_t take_lowest() noexcept {
    std::size_t at = 0;
    for (std::size_t level = levels_; level-- > 0;)
      at = at * 64 + static_cast<std::size_t>(std::countr_zero(bits_[level_begin_[level] + at]));
    const auto lowest = static_cast<std::uint32_t>(at);
    for (std::size_t level = 0; level < levels_; ++level) {
      std::uint64_t& word = bits_[level_begin_[level] + at / 64];
      word &= ~(std::uint64_t{1} << (at % 64));
      if (word != 0) break;
      at /= 64;
    }
    return lowest;
  }

 private:
  std::vector<std::uint64_t> bits_;
  std::size_t level_begin_[8] = {};  // 64^8 nodes: more than 32-bit indices reach
  std::size_t levels_ = 0;
};

/// Kahn's order of a graph given as its in-degrees (node v waits on
/// dep_begin[v + 1] - dep_begin[v] dependencies) and its dependents' rows
/// (node u's dependents: dependents.target[dependents.begin[u] ..
/// dependents.begin[u + 1])). Appends the order to `order`; returns false
/// when a cycle stopped it (the nodes not appended are on or behind one).
///
/// Each emitted node decrements a counter of each of its dependents, at
/// random: the counters are bytes (a million nodes' fit in a core's cache
/// where 32-bit ones do not), with the rare node of 255 dependencies or more
/// counted in a side array. A node's row is found in two dependent loads
/// (its start in dependents_begin, then the row), each a miss in a large
/// graph: the first is prefetched when the node becomes ready, the second
/// for the next node to emit (the lowest ready one, unless the current one
/// readies a lower one) while the current one is emitted.
template <class Order>
bool kahn_order(std::uint32_t count, const std::uint32_t* dep_begin,
                const std::uint32_t* dependents_begin, const std::uint32_t* dependents,
                Order& order) {
  constexpr std::uint8_t many = 255;  // waiting on many: see `waiting_on_many`
  std::vector<std::uint8_t> waiting_on(count);
  std::vector<std::uint32_t> waiting_on_many;
  ready_set ready(count);
  for (std::uint32_t v = 0; v < count; ++v) {
    const std::uint32_t degree = dep_begin[v + 1] - dep_begin[v];
    if (degree >= many) {
      if (waiting_on_many.empty()) waiting_on_many.assign(count, 0);
      waiting_on_many[v] = degree;
    }
    waiting_on[v] = static_cast<std::uint8_t>(std::min<std::uint32_t>(degree, many));
    if (degree == 0) ready.insert(v);
  }
  reserve_in_huge_pages(order, order.size() + count);
  // A chain readies one node at a time, with no other ready: that node is
  // kept out of the set (the next to emit), the set left untouched.
  constexpr std::uint32_t none = ~0u;
  std::uint32_t sole = none;
  const bool prefetch = count > 4096;  // below, the rows are in cache
  const auto make_ready = [&](std::uint32_t w) {
    if (prefetch) __builtin_prefetch(dependents_begin + w);
    if (ready.empty()) {
      if (sole == none) {
        sole = w;
        return;
      }
      ready.insert(sole);
      sole = none;
    }
    ready.insert(w);
  };
  std::uint32_t emitted = 0;
  for (;;) {
    std::uint32_t u = sole;
    if (u != none)
      sole = none;
    else if (!ready.empty())
      u = ready.take_lowest();
    else
      break;
    order.push_back(u);
    ++emitted;
    if (prefetch && !ready.empty()) __builtin_prefetch(dependents + dependents_begin[ready.lowest()]);
    for (std::uint32_t k = dependents_begin[u]; k < dependents_begin[u + 1]; ++k) {
      const std::uint32_t w = dependents[k];
      std::uint8_t& left = waiting_on[w];
      if (left != many) {
        if (--left == 0) make_ready(w);
      } else if (--waiting_on_many[w] == 0) {
        left = 0;
        make_ready(w);
      }
    }
  }
  return emitted == count;
}

/// Kahn's order where every node's dependencies were declared before it:
/// then node v is ready once 0..v-1 are emitted, and no node before it is
/// left, so the order is the declaration's (a builder declares nodes so).
/// Appends 0..count-1 to `order`, skipping the reversed graph and the ready
/// set; callers tell this case while resolving names, at no cost.
template <class Order>
void in_declaration_order(std::uint32_t count, Order& order) {
  order.reserve(order.size() + count);
  for (std::uint32_t v = 0; v < count; ++v) order.push_back(v);
}

}  // namespace cudag::check_detail
