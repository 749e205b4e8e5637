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
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

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

/// `waiting_on[v]`: v's number of dependencies on entry; on return, what is
/// left of it (non-zero only for nodes on or behind a cycle).
/// `for_each_dependent(u, f)` calls f(w) for every node w that depends on u.
/// Appends the order to `order`; returns false when a cycle stopped it.
template <class Order, class ForEachDependent>
bool kahn_order(std::vector<std::uint32_t>& waiting_on, ForEachDependent&& for_each_dependent,
                Order& order) {
  const auto count = static_cast<std::uint32_t>(waiting_on.size());
  ready_set ready(count);
  for (std::uint32_t v = 0; v < count; ++v)
    if (waiting_on[v] == 0) ready.insert(v);
  order.reserve(order.size() + count);
  std::uint32_t emitted = 0;
  while (!ready.empty()) {
    const std::uint32_t u = ready.take_lowest();
    order.push_back(u);
    ++emitted;
    for_each_dependent(u, [&](std::uint32_t w) {
      if (--waiting_on[w] == 0) ready.insert(w);
    });
  }
  return emitted == count;
}

}  // namespace cudag::check_detail
