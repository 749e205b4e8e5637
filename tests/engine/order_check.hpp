#pragma once
// Ordering tests, shared by the builder's and the DSL's: node i runs
// ordered_ticket (test_kernels.cuh), which takes ticket begin[i] when it
// starts and end[i] when it ends. An edge a -> b held in a replay when
// end[a] < begin[b]. Before every replay the busy-wait of every node is
// drawn afresh, so that over many replays an unordered pair meets both a
// slow predecessor and a fast successor.
//
// The structure of the CUDA graph is checked too: the set of ordered pairs
// (a path from a to b) among the declared nodes must be the same in the
// native graph as in the declaration, so a lost edge that no other path
// implies is seen without running anything.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cudag/handles.hpp"

namespace order_test {

using edge_list = std::vector<std::pair<int, int>>;  ///< (from, to) node ids

/// Device buffers of one ordering test: the ticket counter, begin and end
/// tickets and busy-wait cycles of every node.
struct tickets {
  explicit tickets(int nodes) : count(nodes), ticket(1), begin(nodes), end(nodes), spin(nodes) {}
  int count;
  cudag::device_buffer<unsigned> ticket, begin, end;
  cudag::device_buffer<long long> spin;
  std::vector<long long> host_spin;  ///< kept alive while the copy to `spin` may run
};

inline constexpr unsigned not_taken = 0xFFFFFFFFu;

/// A quarter of the nodes wait 20,000-60,000 cycles (about 10-30 us), the
/// others 0-4,000.
inline std::vector<long long> draw_spins(int nodes, std::mt19937& rng) {
  std::vector<long long> spins(nodes);
  for (long long& s : spins)
    s = std::uniform_int_distribution<int>(0, 3)(rng) == 0
            ? std::uniform_int_distribution<long long>(20000, 60000)(rng)
            : std::uniform_int_distribution<long long>(0, 4000)(rng);
  return spins;
}

/// Before one replay, on its stream (launch streams are non-blocking: the
/// legacy stream would not order these before the replay): counter 0,
/// tickets poisoned, busy-waits `spins`.
inline void prepare(tickets& t, std::vector<long long> spins, cudaStream_t s) {
  ASSERT_EQ(spins.size(), static_cast<std::size_t>(t.count));
  t.host_spin = std::move(spins);
  ASSERT_EQ(cudaMemsetAsync(t.ticket.data(), 0, sizeof(unsigned), s), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(t.begin.data(), 0xFF, t.begin.bytes(), s), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(t.end.data(), 0xFF, t.end.bytes(), s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(t.spin.data(), t.host_spin.data(), t.spin.bytes(),
                            cudaMemcpyHostToDevice, s),
            cudaSuccess);
}

/// Poisons the tickets of a set of buffers no replay should touch, and
/// waits for it.
inline void poison(tickets& t) {
  ASSERT_EQ(cudaMemset(t.ticket.data(), 0xFF, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(t.begin.data(), 0xFF, t.begin.bytes()), cudaSuccess);
  ASSERT_EQ(cudaMemset(t.end.data(), 0xFF, t.end.bytes()), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

struct replay_result {
  std::vector<unsigned> begin, end;
  unsigned ticket = 0;
};

inline void read_back(const tickets& t, replay_result& out) {
  out.begin.assign(t.count, 0);
  out.end.assign(t.count, 0);
  ASSERT_EQ(cudaMemcpy(out.begin.data(), t.begin.data(), t.begin.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.end.data(), t.end.data(), t.end.bytes(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&out.ticket, t.ticket.data(), sizeof(unsigned), cudaMemcpyDeviceToHost),
            cudaSuccess);
}

/// Every node ran exactly once: 2 * nodes tickets taken, each once, and
/// begin before end.
inline void expect_each_ran_once(const replay_result& r, const std::vector<std::string>& names) {
  const auto n = static_cast<unsigned>(r.begin.size());
  ASSERT_EQ(r.ticket, 2 * n) << "tickets taken in this replay (2 per node)";
  std::vector<bool> seen(2 * n, false);
  for (unsigned i = 0; i < n; ++i) {
    ASSERT_LT(r.begin[i], 2 * n) << names[i] << " did not run";
    ASSERT_LT(r.end[i], 2 * n) << names[i] << " did not finish";
    ASSERT_LT(r.begin[i], r.end[i]) << names[i];
    ASSERT_FALSE(seen[r.begin[i]]) << "ticket " << r.begin[i] << " taken twice";
    ASSERT_FALSE(seen[r.end[i]]) << "ticket " << r.end[i] << " taken twice";
    seen[r.begin[i]] = seen[r.end[i]] = true;
  }
}

/// The edges this replay broke: `to` started before `from` had finished.
inline edge_list broken_edges(const replay_result& r, const edge_list& edges) {
  edge_list broken;
  for (auto [from, to] : edges)
    if (!(r.end[from] < r.begin[to])) broken.emplace_back(from, to);
  return broken;
}

inline std::string describe(const edge_list& broken, const replay_result& r,
                            const std::vector<std::string>& names) {
  std::ostringstream out;
  for (std::size_t k = 0; k < broken.size() && k < 8; ++k) {
    auto [from, to] = broken[k];
    out << "\n  " << names[from] << " -> " << names[to] << ": " << names[from] << " ran ["
        << r.begin[from] << ", " << r.end[from] << "], " << names[to] << " ran [" << r.begin[to]
        << ", " << r.end[to] << "]";
  }
  if (broken.size() > 8) out << "\n  ... " << broken.size() - 8 << " more";
  return out.str();
}

/// reach[a][b]: a path a -> b (a != b) through `edges` among `nodes` nodes.
inline std::vector<std::vector<char>> reachability(int nodes, const edge_list& edges) {
  std::vector<std::vector<int>> out(nodes);
  for (auto [from, to] : edges) out[from].push_back(to);
  std::vector<std::vector<char>> reach(nodes, std::vector<char>(nodes, 0));
  for (int start = 0; start < nodes; ++start) {
    std::vector<int> stack(out[start].begin(), out[start].end());
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (reach[start][v]) continue;
      reach[start][v] = 1;
      for (int w : out[v]) stack.push_back(w);
    }
  }
  return reach;
}

/// What the CUDA graph `graph` does not do as declared, one line each:
/// handles that are not its nodes, a node count other than the declared
/// one, edges that are not plain full dependencies (a programmatic edge
/// would let its ends overlap), and every pair (a, b) of declared nodes
/// with a path a -> b in one of the declaration and the CUDA graph but not
/// in the other. Nodes of `graph` that are not in `handles` (none are
/// expected) are walked through, not compared.
inline void native_order_differences(cudaGraph_t graph, const std::vector<cudaGraphNode_t>& handles,
                                     const edge_list& declared,
                                     const std::vector<std::string>& names,
                                     std::vector<std::string>& out) {
  ASSERT_NE(graph, nullptr);
  const int n = static_cast<int>(handles.size());
  std::size_t node_count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &node_count), cudaSuccess);
  std::vector<cudaGraphNode_t> all(node_count);
  ASSERT_EQ(cudaGraphGetNodes(graph, all.data(), &node_count), cudaSuccess);
  // Declared nodes first (their ids), other nodes of the graph after them.
  std::vector<cudaGraphNode_t> index = handles;
  for (cudaGraphNode_t h : all)
    if (std::find(index.begin(), index.end(), h) == index.end()) index.push_back(h);
  for (int i = 0; i < n; ++i) {
    ASSERT_NE(handles[i], nullptr) << names[i];
    if (std::find(all.begin(), all.end(), handles[i]) == all.end())
      out.push_back("the handle of " + names[i] + " is not a node of the exec's graph");
  }
  if (node_count != handles.size())
    out.push_back("the CUDA graph has " + std::to_string(node_count) + " nodes, declared " +
                  std::to_string(handles.size()));

  std::size_t edge_count = 0;
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edge_count), cudaSuccess);
  std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
  std::vector<cudaGraphEdgeData> data(edge_count);
  ASSERT_EQ(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &edge_count),
            cudaSuccess);
  edge_list native;
  auto id_of = [&](cudaGraphNode_t h) {
    return static_cast<int>(std::find(index.begin(), index.end(), h) - index.begin());
  };
  auto name_of = [&](int id) { return id < n ? names[id] : std::string("(undeclared node)"); };
  for (std::size_t k = 0; k < edge_count; ++k) {
    const int a = id_of(from[k]), b = id_of(to[k]);
    ASSERT_LT(a, static_cast<int>(index.size()));
    ASSERT_LT(b, static_cast<int>(index.size()));
    if (data[k].type != cudaGraphDependencyTypeDefault || data[k].from_port != 0)
      out.push_back("edge " + name_of(a) + " -> " + name_of(b) + " has type " +
                    std::to_string(int(data[k].type)) + ", from port " +
                    std::to_string(int(data[k].from_port)) + ": not a full dependency");
    native.emplace_back(a, b);
  }
  const auto want = reachability(n, declared);
  const auto have = reachability(static_cast<int>(index.size()), native);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (want[a][b] != have[a][b])
        out.push_back(names[a] + " -> " + names[b] +
                      (want[a][b] ? ": declared (directly or through other nodes), but the CUDA "
                                    "graph has no path"
                                  : ": not declared, but the CUDA graph orders it"));
}

/// The CUDA graph orders exactly the pairs the declaration orders (see
/// native_order_differences).
inline void expect_native_order(cudaGraph_t graph, const std::vector<cudaGraphNode_t>& handles,
                                const edge_list& declared, const std::vector<std::string>& names) {
  std::vector<std::string> differences;
  ASSERT_NO_FATAL_FAILURE(native_order_differences(graph, handles, declared, names, differences));
  std::ostringstream first;
  for (std::size_t k = 0; k < differences.size() && k < 8; ++k) first << "\n  " << differences[k];
  if (differences.size() > 8) first << "\n  ... " << differences.size() - 8 << " more";
  EXPECT_TRUE(differences.empty()) << differences.size()
                                   << " differences between the CUDA graph and the declaration:"
                                   << first.str();
}

}  // namespace order_test
