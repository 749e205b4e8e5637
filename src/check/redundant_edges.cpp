// Transitive reduction by bitset reachability in topological order.
//
// An edge u -> v is redundant when v is reachable from another successor of u.
// With reach(w) = the nodes reachable from w by one edge or more, that is:
// v is in the union of reach(w) over u's successors w. Walking the order
// backwards computes reach(u) from its successors' sets, so every set is
// ready when needed. Full sets would take V^2 bits (1.25 GB at 100,000 nodes),
// so the targets are taken a block of ranks at a time: per block, V x block
// bits; in all O(V * E / 64) word operations, whatever the graph's shape.
#include "redundant_edges.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

namespace cudag::check_detail {
namespace {

using word = std::uint64_t;
constexpr std::size_t bits_per_word = 64;
constexpr std::size_t block_words = 32;  // 2048 target ranks per block: 256 bytes a node
constexpr std::size_t block_bits = block_words * bits_per_word;

}  // namespace

std::vector<std::pair<std::string, std::string>> find_redundant_edges(const graph_view& view) {
  const auto& graph = view.dependents();
  const auto& order = view.order();
  const auto& rank = view.rank();
  const std::size_t count = view.size();

  std::vector<char> redundant(view.edge_count(), 0);
  // reach[r * block_words ...]: the set of the node of rank r, in this block.
  // Allocated once and left uninitialised: each set is cleared just before it
  // is computed, while it is in cache, rather than by a pass over all of them.
  const std::unique_ptr<word[]> reach(new word[count * block_words]);
  std::vector<char> reaches_block(count);  // per rank: its set in this block is not empty

  for (std::size_t block_begin = 0; block_begin < count; block_begin += block_bits) {
    const std::size_t block_end = std::min(count, block_begin + block_bits);
    // Nodes ranked at or after block_end reach nothing in this block.
    for (std::size_t r = block_end; r-- > 0;) {
      const auto u = static_cast<std::uint32_t>(order[r]);
      word* set = &reach[r * block_words];
      std::fill(set, set + block_words, word{0});
      bool any = false;
      for (auto e : boost::make_iterator_range(out_edges(u, graph))) {
        const std::size_t w_rank = rank[target(e, graph)];
        if (w_rank >= block_end || !reaches_block[w_rank]) continue;
        const word* from = &reach[w_rank * block_words];
        for (std::size_t i = 0; i < block_words; ++i) set[i] |= from[i];
        any = true;
      }
      for (auto e : boost::make_iterator_range(out_edges(u, graph))) {
        const std::size_t w_rank = rank[target(e, graph)];
        if (w_rank < block_begin || w_rank >= block_end) continue;
        const std::size_t bit = w_rank - block_begin;
        const word mask = word{1} << (bit % bits_per_word);
        if (any && (set[bit / bits_per_word] & mask)) redundant[graph[e].slot] = 1;
      }
      for (auto e : boost::make_iterator_range(out_edges(u, graph))) {
        const std::size_t w_rank = rank[target(e, graph)];
        if (w_rank < block_begin || w_rank >= block_end) continue;
        const std::size_t bit = w_rank - block_begin;
        set[bit / bits_per_word] |= word{1} << (bit % bits_per_word);
        any = true;
      }
      reaches_block[r] = any;
    }
  }

  std::vector<std::pair<std::string, std::string>> result;
  const auto& dependencies = view.dependencies();
  for (std::uint32_t v = 0; v < count; ++v) {
    // Out-edges of v in the dependency graph: its dependencies by slot.
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies))) {
      if (redundant[get(boost::edge_index, dependencies, e)])
        result.emplace_back(view.path(target(e, dependencies)), view.path(v));
    }
  }
  return result;
}

}  // namespace cudag::check_detail
