#pragma once
// A random DAG spec of empty nodes, shared by the check benchmark and the
// cudag-graph tool. Nodes are declared in a shuffled order, so dependencies
// point both forwards and backwards in the declaration, as in real specs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag::tools {

/// `node_count` empty nodes named "n0".."n<N-1>" (by declaration index) and
/// `edge_count` distinct dependency edges, all from the same seed.
inline graph_spec random_dag(std::size_t node_count, std::size_t edge_count, std::uint64_t seed) {
  const double max_edges = 0.5 * static_cast<double>(node_count) *
                           static_cast<double>(node_count > 0 ? node_count - 1 : 0);
  if (static_cast<double>(edge_count) > max_edges) {
    throw std::invalid_argument("a DAG of " + std::to_string(node_count) + " nodes has at most " +
                                std::to_string(static_cast<std::size_t>(max_edges)) + " edges, not " +
                                std::to_string(edge_count));
  }
  std::mt19937_64 random(seed);

  // declared_at[p]: declaration index of the node at position p of a hidden
  // topological order; edges go from a lower position to a higher one.
  std::vector<std::size_t> declared_at(node_count);
  std::iota(declared_at.begin(), declared_at.end(), std::size_t{0});
  std::shuffle(declared_at.begin(), declared_at.end(), random);

  graph_spec spec;
  spec.name = "random_" + std::to_string(node_count) + "_" + std::to_string(edge_count);
  spec.nodes.resize(node_count);
  for (std::size_t i = 0; i < node_count; ++i) {
    spec.nodes[i].name = "n" + std::to_string(i);
    spec.nodes[i].params = empty_node{};
  }

  std::unordered_set<std::uint64_t> taken;
  taken.reserve(edge_count * 2);
  std::uniform_int_distribution<std::size_t> position(0, node_count - 1);
  while (taken.size() < edge_count) {
    std::size_t a = position(random), b = position(random);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    if (!taken.insert(static_cast<std::uint64_t>(a) * node_count + b).second) continue;
    spec.nodes[declared_at[b]].deps.push_back(spec.nodes[declared_at[a]].name);
  }
  return spec;
}

}  // namespace cudag::tools
