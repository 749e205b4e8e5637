// Redundant (transitively implied) edges, two ways, with a bound on the cost.
//
// An edge u -> v is redundant when another path leads from u to v; such a
// path enters v through another dependency w of v, so u is then a strict
// ancestor of w.
//
// 1. Sweeps: for each node v with two dependencies or more, one walk back
//    from its dependencies' own dependencies, never below the lowest rank
//    among v's dependencies, marks their ancestors; a marked dependency is
//    redundant. Each walk covers the part of the graph between v's
//    dependencies, so graphs whose edges join nodes close in the order
//    (chains, layers, pipelines) cost about O(V + E). A graph with long
//    edges can make each walk cover most of the graph: the walks stop once
//    they have cost an eighth of what (2) would (or of the limit below),
//    and (2) runs instead.
// 2. Bitsets: reach(w) = the nodes reachable from w by one edge or more;
//    walking the order backwards computes reach(u) from its successors'
//    sets. Full sets would take V^2 bits (1.25 GB at 100,000 nodes), so the
//    targets are taken a block of ranks at a time; in all about V * E / 128
//    word operations, whatever the graph's shape.
// Before (2) starts, its exact cost is computed; beyond the caller's limit
// it throws instead of running for minutes.
//
// Edge kinds. A full edge x -> y starts y once x has completed; a
// programmatic or launch-completion edge may start y while x still runs (y
// may even complete first). A path therefore orders v after u's completion
// only when its first edge, the one out of u, is full: after that every edge
// starts its node no earlier than the one before it started. So an edge u -> v
// of any kind is redundant only when another path from u to v starts with a
// full edge: a full edge beside a path that begins with a typed edge is kept
// (without it v could start before u completes), and a typed edge beside a
// path that begins with a full edge is reported (v starts after u completed
// anyway, so the early launch it allows never happens). A path that begins
// with a typed edge implies no typed edge either: v's
// cudaGridDependencySynchronize() waits only on its own upstream kernels.
#include "redundant_edges.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "cudag/error.hpp"

namespace cudag::check_detail {
namespace {

using word = std::uint64_t;
constexpr std::size_t bits_per_word = 64;

// Per v with two dependencies or more: marks strict ancestors of its
// dependencies ranked at or after its lowest-ranked dependency. Returns false
// when the walks' cost (edges examined) passed `budget`.
// `full`: per edge, whether it is full (null: every edge is).
bool by_sweeps(const graph_view& view, std::vector<char>& redundant, std::uint64_t budget,
               const std::vector<char>* full) {
  const auto& deps = view.dependencies();
  const auto& rank = view.rank();
  const auto count = static_cast<std::uint32_t>(view.size());
  std::vector<std::uint32_t> marks(count, 0);
  // Marked when reached over a full edge out of it: its path to v starts full.
  std::vector<std::uint32_t> full_marks(full ? count : 0, 0);
  std::uint32_t stamp = 0;
  std::vector<std::uint32_t> stack;
  std::uint64_t work = 0;
  for (std::uint32_t v = 0; v < count; ++v) {
    const auto [first, last] = out_edges(v, deps);
    if (last - first < 2) continue;
    std::uint32_t min_rank = ~0u;
    for (auto it = first; it != last; ++it) min_rank = std::min(min_rank, rank[target(*it, deps)]);
    ++stamp;  // at most one stamp per node: no wrap
    stack.clear();
    auto visit_dependencies_of = [&](std::uint32_t x) {
      for (auto e : boost::make_iterator_range(out_edges(x, deps))) {
        const std::uint32_t p = target(e, deps);
        ++work;
        if (rank[p] < min_rank) continue;
        if (full && (*full)[get(boost::edge_index, deps, e)]) full_marks[p] = stamp;
        if (marks[p] == stamp) continue;
        marks[p] = stamp;
        stack.push_back(p);
      }
    };
    for (auto it = first; it != last; ++it) visit_dependencies_of(target(*it, deps));
    while (!stack.empty()) {
      const std::uint32_t x = stack.back();
      stack.pop_back();
      visit_dependencies_of(x);
    }
    if (work > budget) return false;
    const std::vector<std::uint32_t>& implied = full ? full_marks : marks;
    for (auto it = first; it != last; ++it)
      if (implied[target(*it, deps)] == stamp) redundant[get(boost::edge_index, deps, *it)] = 1;
  }
  return true;
}

struct bitset_plan {
  std::size_t block_words;
  std::uint64_t cost;  // word operations
};

// Blocks of at most 32 words, smaller where a node's set would make the sets
// of all nodes more than 16 MiB; the cost counts, per block, the set of every
// node ranked before the block's end and the successors' sets merged into it.
bitset_plan plan_bitsets(const graph_view& view) {
  const std::size_t count = view.size();
  std::size_t block_words = 32;
  while (block_words > 1 && count * block_words * sizeof(word) > (std::size_t{16} << 20))
    block_words /= 2;
  const std::size_t block_bits = block_words * bits_per_word;
  const auto& dependents = view.dependents();
  const auto& order = view.order();
  std::uint64_t cost = 0, upto = 0;  // upto: nodes and edges of ranks below r
  std::size_t r = 0;
  for (std::size_t block_end = std::min(count, block_bits);; block_end = std::min(count, block_end + block_bits)) {
    for (; r < block_end; ++r) upto += 1 + out_degree(static_cast<std::uint32_t>(order[r]), dependents);
    cost += upto * block_words;
    if (block_end == count) break;
  }
  return {block_words, cost};
}

void by_bitsets(const graph_view& view, std::vector<char>& redundant, std::size_t block_words,
                const std::vector<char>* full) {
  const auto& graph = view.dependents();
  const auto& order = view.order();
  const auto& rank = view.rank();
  const std::size_t count = view.size();
  const std::size_t block_bits = block_words * bits_per_word;
  // reach[r * block_words ...]: the set of the node of rank r, in this block.
  // Allocated once and left uninitialised: each set is cleared just before it
  // is computed, while it is in cache, rather than by a pass over all of them.
  const std::unique_ptr<word[]> reach(new word[count * block_words]);
  std::vector<char> reaches_block(count);  // per rank: its set in this block is not empty
  // Successors by rank, for the node of each rank in turn: the block passes
  // read them in order instead of looking ranks up at random.
  std::vector<std::uint32_t> succ_begin(count + 1, 0);
  std::vector<std::uint32_t> succ_rank;
  std::vector<std::uint32_t> succ_slot;
  succ_rank.reserve(view.edge_count());
  succ_slot.reserve(view.edge_count());
  const auto& dependencies = view.dependencies();
  for (std::size_t r = 0; r < count; ++r) {
    const auto u = static_cast<std::uint32_t>(order[r]);
    for (auto e : boost::make_iterator_range(out_edges(u, graph))) {
      const std::uint32_t w = target(e, graph);
      succ_rank.push_back(rank[w]);
      // The edge's slot: u's place among w's dependencies (listed once).
      for (auto d : boost::make_iterator_range(out_edges(w, dependencies))) {
        if (target(d, dependencies) == u) {
          succ_slot.push_back(get(boost::edge_index, dependencies, d));
          break;
        }
      }
    }
    succ_begin[r + 1] = static_cast<std::uint32_t>(succ_rank.size());
  }

  for (std::size_t block_begin = 0; block_begin < count; block_begin += block_bits) {
    const std::size_t block_end = std::min(count, block_begin + block_bits);
    // Nodes ranked at or after block_end reach nothing in this block.
    for (std::size_t r = block_end; r-- > 0;) {
      word* set = &reach[r * block_words];
      std::fill(set, set + block_words, word{0});
      bool any = false;
      const std::uint32_t begin = succ_begin[r], end = succ_begin[r + 1];
      // What the successors reach; those over a typed edge only after the
      // test below, as a path that starts with one implies no edge.
      const auto merge = [&](bool typed) {
        for (std::uint32_t s = begin; s < end; ++s) {
          const std::size_t w_rank = succ_rank[s];
          if (w_rank >= block_end || !reaches_block[w_rank]) continue;
          if (full && (*full)[succ_slot[s]] == typed) continue;
          const word* from = &reach[w_rank * block_words];
          for (std::size_t i = 0; i < block_words; ++i) set[i] |= from[i];
          any = true;
        }
      };
      merge(false);
      for (std::uint32_t s = begin; s < end; ++s) {
        const std::size_t w_rank = succ_rank[s];
        if (w_rank < block_begin || w_rank >= block_end) continue;
        const std::size_t bit = w_rank - block_begin;
        const word mask = word{1} << (bit % bits_per_word);
        if (any && (set[bit / bits_per_word] & mask)) redundant[succ_slot[s]] = 1;
      }
      if (full) merge(true);
      for (std::uint32_t s = begin; s < end; ++s) {
        const std::size_t w_rank = succ_rank[s];
        if (w_rank < block_begin || w_rank >= block_end) continue;
        const std::size_t bit = w_rank - block_begin;
        set[bit / bits_per_word] |= word{1} << (bit % bits_per_word);
        any = true;
      }
      reaches_block[r] = any;
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> find_redundant_edges(const graph_view& view,
                                                                      std::uint64_t work_limit) {
  std::vector<char> redundant(view.edge_count(), 0);
  // Per edge (slot), whether it is full; kept only where one is not.
  std::vector<char> full_edges;
  const graph_spec& spec = view.spec();
  const auto& first_slot = view.first_slot();
  for (std::size_t v = 0; v < view.size(); ++v) {
    const node& n = spec.nodes[v];
    if (n.dependency_kinds.empty()) continue;
    if (full_edges.empty()) full_edges.assign(view.edge_count(), 1);
    for (std::size_t k = 0; k < n.deps.size(); ++k)
      full_edges[first_slot[v] + k] = n.dependency_kind(k) == edge_kind::full;
  }
  const std::vector<char>* full = full_edges.empty() ? nullptr : &full_edges;
  const bitset_plan plan = plan_bitsets(view);
  // A walk step is a cache miss where a bitset step is a word: 1/64 in
  // walk steps is about an eighth of the bitsets' cost (or of the limit).
  if (!by_sweeps(view, redundant, std::min(plan.cost, work_limit) / 64, full)) {
    if (plan.cost > work_limit) {
      throw error("redundant-edge analysis of " + view.description() + " (" +
                  std::to_string(view.size()) + " nodes, " + std::to_string(view.edge_count()) +
                  " edges, many of them long) would take about " + std::to_string(plan.cost) +
                  " word operations, more than the limit of " + std::to_string(work_limit) +
                  " (analyze_options::redundant_edge_work_limit); raise the limit or set "
                  "analyze_options::redundant_edges = false");
    }
    std::fill(redundant.begin(), redundant.end(), 0);
    by_bitsets(view, redundant, plan.block_words, full);
  }

  std::vector<std::pair<std::string, std::string>> result;
  const auto& dependencies = view.dependencies();
  for (std::uint32_t v = 0; v < view.size(); ++v) {
    // Out-edges of v in the dependency graph: its dependencies by slot.
    for (auto e : boost::make_iterator_range(out_edges(v, dependencies))) {
      if (redundant[get(boost::edge_index, dependencies, e)])
        result.emplace_back(view.path(target(e, dependencies)), view.path(v));
    }
  }
  return result;
}

}  // namespace cudag::check_detail
