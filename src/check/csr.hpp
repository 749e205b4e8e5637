#pragma once
// Compressed sparse row arrays as the check layer builds them, and their
// hand-over to Boost.Graph's compressed_sparse_row_graph.
//
// Reversing a graph of a million nodes is a counting sort whose scatter
// writes land at random in arrays far larger than the caches: one cache and
// TLB miss per edge, each waiting on the load that computed its address
// (about 0.1 us an edge on a 2-core build machine). reverse_csr() scatters
// twice instead: first into about a thousand buckets by the target's high
// bits (a thousand sequential write streams), then each bucket into its own
// few kilobytes of output; both passes stay in cache, about 8x faster.
// Rows come out in increasing order of their new targets, as a stable
// counting sort would give them.
#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "large_array.hpp"

namespace cudag::check_detail {

/// Rows of a graph: row v is target[begin[v] .. begin[v + 1]).
struct csr_rows {
  std::vector<std::uint32_t> begin;
  std::vector<std::uint32_t> target;
};

/// The graph whose rows are `begin`/`target` (count + 1 row starts), with
/// every edge v -> u turned into u -> v; each row of the result lists its
/// targets in increasing order.
inline csr_rows reverse_csr(std::uint32_t count, const std::uint32_t* begin,
                            const std::uint32_t* target) {
  csr_rows out;
  const std::uint32_t edges = begin[count];
  resize_in_huge_pages(out.begin, static_cast<std::size_t>(count) + 1);
  for (std::uint32_t k = 0; k < edges; ++k) ++out.begin[target[k] + 1];
  for (std::uint32_t v = 0; v < count; ++v) out.begin[v + 1] += out.begin[v];
  resize_in_huge_pages(out.target, edges);

  constexpr unsigned bucket_bits = 10;  // about 1024 buckets
  const unsigned node_bits = static_cast<unsigned>(std::bit_width(count));
  if (node_bits <= 16) {  // fill and output fit in cache: one pass
    std::vector<std::uint32_t> fill(out.begin.begin(), out.begin.end() - 1);
    for (std::uint32_t v = 0; v < count; ++v)
      for (std::uint32_t k = begin[v]; k < begin[v + 1]; ++k) out.target[fill[target[k]]++] = v;
    return out;
  }
  const unsigned shift = node_bits - bucket_bits;
  const std::uint32_t buckets = ((count - 1) >> shift) + 1;
  std::vector<std::uint32_t> bucket_fill(buckets);
  for (std::uint32_t b = 0; b < buckets; ++b) bucket_fill[b] = out.begin[b << shift];
  // Each bucket's edges, then each bucket into its rows, with a cursor per
  // row of the bucket (a few kilobytes). An edge is staged as its new
  // target and the low bits of its new source (the bucket holds the high
  // ones): in 32 bits up to 2^21 nodes, else in 64.
  const auto scatter = [&](auto& staged, auto encode, auto low_of, auto target_of) {
    for (std::uint32_t v = 0; v < count; ++v) {
      for (std::uint32_t k = begin[v]; k < begin[v + 1]; ++k) {
        const std::uint32_t u = target[k];
        staged[bucket_fill[u >> shift]++] = encode(u & ((std::uint32_t{1} << shift) - 1), v);
      }
    }
    std::vector<std::uint32_t> cursor(std::size_t{1} << shift);
    for (std::uint32_t b = 0; b < buckets; ++b) {
      const std::uint32_t first = b << shift;
      const std::uint32_t last = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(std::uint64_t{first} + (std::uint64_t{1} << shift), count));
      std::copy(out.begin.begin() + first, out.begin.begin() + last, cursor.begin());
      for (std::uint32_t k = out.begin[first]; k < out.begin[last]; ++k)
        out.target[cursor[low_of(staged[k])]++] = target_of(staged[k]);
    }
  };
  if (shift + node_bits <= 32) {
    large_array<std::uint32_t> staged(edges);  // (source's low bits << node_bits) | target
    const std::uint32_t target_mask = (std::uint32_t{1} << node_bits) - 1;
    scatter(
        staged, [&](std::uint32_t low, std::uint32_t v) { return (low << node_bits) | v; },
        [&](std::uint32_t e) { return e >> node_bits; },
        [&](std::uint32_t e) { return e & target_mask; });
  } else {
    large_array<std::uint64_t> staged(edges);  // (source's low bits << 32) | target
    scatter(
        staged,
        [](std::uint32_t low, std::uint32_t v) { return (static_cast<std::uint64_t>(low) << 32) | v; },
        [](std::uint64_t e) { return static_cast<std::uint32_t>(e >> 32); },
        [](std::uint64_t e) { return static_cast<std::uint32_t>(e); });
  }
  return out;
}

/// A Boost.Graph CSR graph (no edge properties) of `count` vertices holding
/// `rows`. The arrays are moved in where the graph's storage is reachable
/// (Boost keeps it in public members: 1.81 and 1.83 are known to), which
/// saves a copy of every edge; otherwise the graph is built from them.
template <class Graph>
Graph adopt_csr(std::uint32_t count, csr_rows&& rows) {
  using edge = std::pair<std::uint32_t, std::uint32_t>;
  Graph graph(boost::edges_are_sorted, static_cast<const edge*>(nullptr),
              static_cast<const edge*>(nullptr), count);
  if constexpr (requires {
                  graph.m_forward.m_rowstart.swap(rows.begin);
                  graph.m_forward.m_column.swap(rows.target);
                  graph.m_forward.m_edge_properties.resize(std::size_t{0});
                }) {
    graph.m_forward.m_rowstart.swap(rows.begin);
    graph.m_forward.m_column.swap(rows.target);
    graph.m_forward.m_edge_properties.resize(graph.m_forward.m_column.size());
  } else {
    std::vector<edge> edges;
    edges.reserve(rows.target.size());
    for (std::uint32_t v = 0; v < count; ++v)
      for (std::uint32_t k = rows.begin[v]; k < rows.begin[v + 1]; ++k)
        edges.emplace_back(v, rows.target[k]);
    graph = Graph(boost::edges_are_sorted, edges.begin(), edges.end(), count);
  }
  return graph;
}

}  // namespace cudag::check_detail
