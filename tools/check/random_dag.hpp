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
#include <unordered_map>
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

inline void stand_in_kernel() {}

/// Turns every `every`-th node of a random_dag() into a kernel node reading
/// parameters x (float*, through a const float* parameter: read only, so
/// that unordered kernels do not race) and n (int) and a float literal,
/// with its grid computed from n; declares both parameters.
inline void make_kernel_nodes(graph_spec& spec, std::size_t every = 2) {
  if (every == 0) return;
  spec.params.push_back(param_decl{"x", type_of<float*>()});
  spec.params.push_back(param_decl{"n", type_of<int>()});
  for (std::size_t i = 0; i < spec.nodes.size(); i += every) {
    kernel_node k;
    k.function = reinterpret_cast<const void*>(&stand_in_kernel);
    k.function_name = "stand_in_kernel";
    k.block = dim3(256, 1, 1);
    k.args.push_back(value{type_of<const float*>(), param_ref{"x"}});
    k.args.push_back(make_literal(2.0f));
    k.args.push_back(value{type_of<int>(), param_ref{"n"}});
    k.grid_from = grid_rule{"n", 256};
    spec.nodes[i].params = std::move(k);
  }
}

/// A chain of `length` kernel nodes ("k0" <- "k1" <- ...), each as
/// make_kernel_nodes() makes them: the shape of a graph built from nothing.
inline graph_spec kernel_chain(std::size_t length) {
  graph_spec spec;
  spec.name = "chain_" + std::to_string(length);
  spec.nodes.resize(length);
  for (std::size_t i = 0; i < length; ++i) {
    spec.nodes[i].name = "k" + std::to_string(i);
    if (i > 0) spec.nodes[i].deps.push_back(spec.nodes[i - 1].name);
  }
  make_kernel_nodes(spec, 1);
  return spec;
}

/// Adds `buffer_count` buffer lifetimes to a spec: for each, a mem_alloc node
/// after a random existing node, two kernel nodes reading the buffer after the
/// alloc, and a mem_free node after both. Five nodes and five edges each.
inline void add_buffer_lifetimes(graph_spec& spec, std::size_t buffer_count, std::uint64_t seed) {
  if (spec.nodes.empty()) return;
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> anchor(0, spec.nodes.size() - 1);
  for (std::size_t b = 0; b < buffer_count; ++b) {
    const std::string buffer = "buf" + std::to_string(b);
    const std::string alloc_name = "alloc_" + buffer;
    const std::string after = spec.nodes[anchor(random)].name;

    node alloc_node{alloc_name, mem_alloc_node{buffer, 4096, -1}, {after}};
    spec.nodes.push_back(std::move(alloc_node));
    std::vector<std::string> users;
    for (int u = 0; u < 2; ++u) {
      kernel_node k;
      k.function = reinterpret_cast<const void*>(&stand_in_kernel);
      k.function_name = "stand_in_kernel";
      k.args.push_back(value{type_of<const float*>(), buffer_ref{buffer, 0}});
      users.push_back("use" + std::to_string(u) + "_" + buffer);
      spec.nodes.push_back(node{users.back(), std::move(k), {alloc_name}});
    }
    spec.nodes.push_back(node{"free_" + buffer, mem_free_node{buffer}, users});
  }
}

}  // namespace cudag::tools
