#pragma once
// The graph shapes of bench_compare, shared by its GPU part (bench_compare.cu),
// its DSL graphs and its CPU part (compare_host.cpp). Every node is one
// small kernel step(buf, slot, a): one block of `threads` threads, each
// adding a to its element of the node's own slot of buf (slot = node index),
// so that what every node did can be checked after a launch.
//
// A node's dependencies always have smaller indices: index order is a
// topological order.
#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace compare {

constexpr int threads = 4;       // threads of each kernel, floats per slot
constexpr int lanes = 8;         // parallel chains; width of the lattice; streams used
constexpr int lattice_width = lanes;

enum class shape { chain, parallel_chains, lattice, random_dag };
inline constexpr shape all_shapes[] = {shape::chain, shape::parallel_chains, shape::lattice,
                                       shape::random_dag};

inline const char* shape_key(shape s) {
  switch (s) {
    case shape::chain: return "chain";
    case shape::parallel_chains: return "chains8";
    case shape::lattice: return "lattice";
    case shape::random_dag: return "random";
  }
  return "?";
}
inline const char* shape_name(shape s) {
  switch (s) {
    case shape::chain: return "chain";
    case shape::parallel_chains: return "8 parallel chains";
    case shape::lattice: return "fork-join lattice (width 8)";
    case shape::random_dag: return "random DAG (2 edges/node)";
  }
  return "?";
}

/// The fork-join lattice: node 0 is the source; then blocks of 8 parallel
/// nodes that depend on the previous join (or the source), each block
/// followed by a join node that depends on its 8 nodes. Writes the
/// dependencies of node i to out and returns how many (usable at compile
/// time: the DSL's lattice is generated from it).
constexpr int lattice_deps(int i, int* out) {
  if (i == 0) return 0;
  const int block = (i - 1) / (lattice_width + 1);
  const int j = (i - 1) % (lattice_width + 1);
  if (j < lattice_width) {
    out[0] = block * (lattice_width + 1);
    return 1;
  }
  for (int k = 0; k < lattice_width; ++k) out[k] = i - lattice_width + k;
  return lattice_width;
}

/// A shape of `nodes` nodes: dependencies in compressed rows, the stream
/// lane each node is launched on by the stream versions (capture, plain
/// launches), and whether a node has a successor on another lane (then it
/// records an event).
struct dag {
  shape kind = shape::chain;
  int nodes = 0;
  std::vector<int> first;  ///< deps of node i: deps[first[i] .. first[i + 1])
  std::vector<int> deps;
  std::vector<int> lane;
  std::vector<char> signals;  ///< records an event for a successor on another lane
  int lanes_used = 1;

  [[nodiscard]] int dep_count(int i) const { return first[std::size_t(i) + 1] - first[std::size_t(i)]; }
  [[nodiscard]] const int* deps_of(int i) const { return deps.data() + first[std::size_t(i)]; }
  [[nodiscard]] std::size_t edges() const { return deps.size(); }
};

/// Adds the nodes of `d` in index order (a topological order) as a program
/// would by hand: for each, `slot` is set to its index (its kernel's
/// argument) and add(&handles[i], dependencies, count) is called with its
/// dependencies' handles, gathered from `handles`.
template <class Handle, class Add>
void add_in_order(const dag& d, std::vector<Handle>& handles, int& slot, Add&& add) {
  Handle deps[lattice_width];
  for (int i = 0; i < d.nodes; ++i) {
    const int k = d.dep_count(i);
    for (int j = 0; j < k; ++j) deps[j] = handles[std::size_t(d.deps_of(i)[j])];
    slot = i;
    add(&handles[std::size_t(i)], deps, std::size_t(k));
  }
}

/// Random DAG: every node after the first depends on min(i, 2) distinct
/// earlier nodes drawn uniformly (mt19937_64 from `seed`).
inline dag make_dag(shape kind, int nodes, std::uint64_t seed = 1) {
  dag d;
  d.kind = kind;
  d.nodes = nodes;
  d.first.reserve(std::size_t(nodes) + 1);
  d.first.push_back(0);
  d.lane.resize(std::size_t(nodes), 0);
  std::mt19937_64 random(seed);
  for (int i = 0; i < nodes; ++i) {
    switch (kind) {
      case shape::chain:
        if (i) d.deps.push_back(i - 1);
        break;
      case shape::parallel_chains:
        if (i >= lanes) d.deps.push_back(i - lanes);
        d.lane[std::size_t(i)] = i % lanes;
        break;
      case shape::lattice: {
        int out[lattice_width];
        const int k = lattice_deps(i, out);
        d.deps.insert(d.deps.end(), out, out + k);
        const int j = i ? (i - 1) % (lattice_width + 1) : 0;
        d.lane[std::size_t(i)] = i && j < lattice_width ? j : 0;
        break;
      }
      case shape::random_dag: {
        const int want = std::min(i, 2);
        int picked[2] = {-1, -1};
        for (int k = 0; k < want;) {
          const int p = int(std::uniform_int_distribution<int>(0, i - 1)(random));
          if (p == picked[0]) continue;
          picked[k++] = p;
        }
        if (want == 2 && picked[1] < picked[0]) std::swap(picked[0], picked[1]);
        d.deps.insert(d.deps.end(), picked, picked + want);
        d.lane[std::size_t(i)] = i % lanes;
        break;
      }
    }
    d.first.push_back(int(d.deps.size()));
  }
  d.signals.assign(std::size_t(nodes), 0);
  for (int i = 0; i < nodes; ++i)
    for (int k = 0; k < d.dep_count(i); ++k) {
      const int p = d.deps_of(i)[k];
      if (d.lane[std::size_t(p)] != d.lane[std::size_t(i)]) d.signals[std::size_t(p)] = 1;
    }
  for (int l : d.lane) d.lanes_used = std::max(d.lanes_used, l + 1);
  return d;
}

/// "k0", "k1", ...: the builder's node names.
inline std::string node_name(int i) {
  std::string name = "k";
  name += std::to_string(i);
  return name;
}

}  // namespace compare
