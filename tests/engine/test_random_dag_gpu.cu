// Random DAGs from the run-time builder, declared in an order unrelated to
// their topological order (edges point both ways relative to declaration),
// through every edge form of the builder. Every node takes a ticket when it
// starts and when it ends and busy-waits a freshly drawn time in between;
// every edge must hold on every replay, the CUDA graph must order exactly the
// declared pairs, and both must stay true after whole-graph rebinds, forced
// per-node rebinds and update().
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "order_check.hpp"
#include "test_kernels.cuh"

using namespace engine_test;
using order_test::edge_list;

namespace {

/// A DAG over node ids 0..nodes-1. Its topological order is a random
/// permutation of the ids, its declaration order another one.
struct random_dag {
  int nodes = 0;
  edge_list edges;               ///< in the order they are declared
  std::vector<int> declaration;  ///< node ids in declaration order
  std::vector<std::string> names;
};

/// Node at topological rank r takes min_fan_in..max_fan_in predecessors
/// among the `window` ranks before it (all of them when window = 0).
random_dag make_dag(int nodes, int min_fan_in, int max_fan_in, int window, std::uint32_t seed) {
  std::mt19937 rng(seed);
  random_dag d;
  d.nodes = nodes;
  std::vector<int> topo(nodes);  // topo[rank] = node id
  std::iota(topo.begin(), topo.end(), 0);
  std::shuffle(topo.begin(), topo.end(), rng);
  std::set<std::pair<int, int>> unique;
  for (int r = 1; r < nodes; ++r) {
    const int lowest = window > 0 ? std::max(0, r - window) : 0;
    const int fan_in = std::uniform_int_distribution<int>(min_fan_in, max_fan_in)(rng);
    for (int k = 0; k < fan_in; ++k) {
      const int from_rank = std::uniform_int_distribution<int>(lowest, r - 1)(rng);
      unique.emplace(topo[from_rank], topo[r]);
    }
  }
  d.edges.assign(unique.begin(), unique.end());
  std::shuffle(d.edges.begin(), d.edges.end(), rng);
  d.declaration.resize(nodes);
  std::iota(d.declaration.begin(), d.declaration.end(), 0);
  std::shuffle(d.declaration.begin(), d.declaration.end(), rng);
  for (int i = 0; i < nodes; ++i) d.names.push_back(std::string("n").append(std::to_string(i)));
  return d;
}

/// Declares `d` in its declaration order. Each edge is declared as soon as
/// both of its nodes exist, in turn through edge(ref, ref), edge(name,
/// name), to.after(from) and node(name).precede(node(name)).
cudag::graph_spec declare(const random_dag& d, bool with_edges) {
  cudag::builder b("random_dag");
  auto ticket = b.param<unsigned*>("ticket");
  auto begin = b.param<unsigned*>("begin");
  auto end = b.param<unsigned*>("end");
  auto spin = b.param<const long long*>("spin");
  std::vector<std::optional<cudag::node_ref>> ref(d.nodes);
  std::vector<bool> declared(d.nodes, false);
  std::size_t form = 0;
  for (int id : d.declaration) {
    // The ticket is taken with atomics, and each node writes only its own
    // begin[id] and end[id]: updates meant to run beside each other's.
    ref[id] = b.kernel(d.names[id], CUDAG_KERNEL(ordered_ticket), cudag::launch(1, 1), ticket,
                       begin, end, spin, id);
    ref[id]->access(0, cudag::access_mode::concurrent)
        .access(1, cudag::access_mode::concurrent)
        .access(2, cudag::access_mode::concurrent);
    declared[id] = true;
    if (!with_edges) continue;
    for (auto [from, to] : d.edges) {
      if ((from != id && to != id) || !declared[from] || !declared[to]) continue;
      switch (form++ % 4) {
        case 0: b.edge(*ref[from], *ref[to]); break;
        case 1: b.edge(d.names[from], d.names[to]); break;
        case 2: ref[to]->after(*ref[from]); break;
        default: b.node(d.names[from]).precede(b.node(d.names[to])); break;
      }
    }
  }
  return std::move(b).build();
}

std::vector<cudag::binding> bindings_of(order_test::tickets& t) {
  return {cudag::bind("ticket", t.ticket.data()), cudag::bind("begin", t.begin.data()),
          cudag::bind("end", t.end.data()),
          cudag::bind("spin", static_cast<const long long*>(t.spin.data()))};
}

std::vector<cudaGraphNode_t> handles_of(const cudag::exec& e, const random_dag& d) {
  std::vector<cudaGraphNode_t> out;
  for (const std::string& name : d.names) out.push_back(e.node_handle(name));
  return out;
}

/// `replays` replays, each with fresh busy-waits; every edge must hold.
void replay_and_check(cudag::exec& e, order_test::tickets& t, const random_dag& d, int replays,
                      std::mt19937& rng, cudaStream_t s) {
  for (int replay = 0; replay < replays; ++replay) {
    ASSERT_NO_FATAL_FAILURE(order_test::prepare(t, order_test::draw_spins(d.nodes, rng), s));
    e.launch(s);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    e.synchronize(s);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    order_test::replay_result r;
    ASSERT_NO_FATAL_FAILURE(order_test::read_back(t, r));
    ASSERT_NO_FATAL_FAILURE(order_test::expect_each_ran_once(r, d.names)) << "replay " << replay;
    const edge_list broken = order_test::broken_edges(r, d.edges);
    ASSERT_TRUE(broken.empty()) << "replay " << replay << ": " << broken.size() << " of "
                                << d.edges.size() << " edges broken:"
                                << order_test::describe(broken, r, d.names);
  }
}

/// Buffers no replay may touch still hold their poison.
void expect_untouched(order_test::tickets& t) {
  order_test::replay_result r;
  ASSERT_NO_FATAL_FAILURE(order_test::read_back(t, r));
  EXPECT_EQ(r.ticket, order_test::not_taken);
  for (int i = 0; i < t.count; ++i) {
    ASSERT_EQ(r.begin[i], order_test::not_taken) << i;
    ASSERT_EQ(r.end[i], order_test::not_taken) << i;
  }
}

struct shape {
  const char* what;
  int nodes, min_fan_in, max_fan_in, window;
  std::uint32_t seed;
};

// Wide: few ranks, many nodes ready at once. Deep: long chains of recent
// predecessors, so most edges are not implied by other paths.
constexpr shape shapes[] = {
    {"wide: 300 nodes, 0-3 predecessors anywhere before", 300, 0, 3, 0, 20261122},
    {"deep: 200 nodes, 1-2 predecessors among the 5 ranks before", 200, 1, 2, 5, 20261123},
    {"dense: 64 nodes, 0-8 predecessors anywhere before", 64, 0, 8, 0, 20261124},
};

}  // namespace

TEST(EngineRandomDag, EveryEdgeHoldsOnEveryReplay) {
  CUDAG_REQUIRE_GPU();
  auto s = cudag::make_stream();
  for (const shape& sh : shapes) {
    SCOPED_TRACE(sh.what);
    const random_dag d = make_dag(sh.nodes, sh.min_fan_in, sh.max_fan_in, sh.window, sh.seed);
    int backward = 0;  // edges to a node declared earlier than their source
    for (auto [from, to] : d.edges)
      backward += std::find(d.declaration.begin(), d.declaration.end(), to) <
                  std::find(d.declaration.begin(), d.declaration.end(), from);
    ASSERT_GT(backward, static_cast<int>(d.edges.size()) / 4) << "the declaration is not scrambled";

    order_test::tickets t(d.nodes);
    const auto binds = bindings_of(t);
    auto e = cudag::instantiate(declare(d, true), binds);
    ASSERT_NO_FATAL_FAILURE(
        order_test::expect_native_order(e.native_graph(), handles_of(e, d), d.edges, d.names));
    std::mt19937 rng(sh.seed + 1);
    ASSERT_NO_FATAL_FAILURE(replay_and_check(e, t, d, 100, rng, s.get()));
    EXPECT_EQ(e.replay_count(), 100u);
  }
}

// The checks above must see lost edges: the same nodes without their edges
// (what a lowering that drops every edge would build), and a slow node and
// an instant one with no edge between them. If this test passes on a GPU,
// a pass of the one above means something.
TEST(EngineRandomDag, TheChecksSeeLostEdges) {
  CUDAG_REQUIRE_GPU();
  auto s = cudag::make_stream();
  const random_dag d = make_dag(shapes[0].nodes, shapes[0].min_fan_in, shapes[0].max_fan_in,
                                shapes[0].window, shapes[0].seed);
  order_test::tickets t(d.nodes);
  const auto binds = bindings_of(t);
  auto unordered = cudag::instantiate(declare(d, false), binds);
  std::vector<std::string> differences;
  ASSERT_NO_FATAL_FAILURE(order_test::native_order_differences(
      unordered.native_graph(), handles_of(unordered, d), d.edges, d.names, differences));
  ASSERT_FALSE(differences.empty());
  EXPECT_NE(differences[0].find("the CUDA graph has no path"), std::string::npos) << differences[0];
  std::mt19937 rng(7);
  for (int replay = 0; replay < 10; ++replay) {
    ASSERT_NO_FATAL_FAILURE(order_test::prepare(t, order_test::draw_spins(d.nodes, rng), s.get()));
    unordered.launch(s.get());
    unordered.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    order_test::replay_result r;
    ASSERT_NO_FATAL_FAILURE(order_test::read_back(t, r));
    ASSERT_NO_FATAL_FAILURE(order_test::expect_each_ran_once(r, d.names));
    EXPECT_FALSE(order_test::broken_edges(r, d.edges).empty())
        << "replay " << replay << ": no edge of " << d.edges.size() << " seen broken without edges";
  }

  // slow (about 50 us) and instant, both roots: "slow -> instant" is broken.
  random_dag pair;
  pair.nodes = 2;
  pair.names = {"slow", "instant"};
  pair.declaration = {0, 1};
  order_test::tickets t2(2);
  const auto binds2 = bindings_of(t2);
  auto e2 = cudag::instantiate(declare(pair, false), binds2);
  for (int replay = 0; replay < 20; ++replay) {
    ASSERT_NO_FATAL_FAILURE(order_test::prepare(t2, {100000, 0}, s.get()));
    e2.launch(s.get());
    e2.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    order_test::replay_result r;
    ASSERT_NO_FATAL_FAILURE(order_test::read_back(t2, r));
    ASSERT_NO_FATAL_FAILURE(order_test::expect_each_ran_once(r, pair.names));
    EXPECT_EQ(order_test::broken_edges(r, {{0, 1}}).size(), 1u) << "replay " << replay;
  }
}

TEST(EngineRandomDag, OrderSurvivesRebindsAndUpdates) {
  CUDAG_REQUIRE_GPU();
  auto s = cudag::make_stream();
  const shape& sh = shapes[1];
  const random_dag d = make_dag(sh.nodes, sh.min_fan_in, sh.max_fan_in, sh.window, sh.seed);
  const cudag::graph_spec spec = declare(d, true);
  order_test::tickets first(d.nodes), second(d.nodes);
  const auto binds1 = bindings_of(first);
  const auto binds2 = bindings_of(second);
  std::mt19937 rng(99);

  auto e = cudag::instantiate(spec, binds1);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(e, first, d, 20, rng, s.get()));

  // Every node reads all four parameters: one whole-graph update
  // (cudaGraphExecUpdate of the template graph), forced.
  e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(order_test::poison(first));
  EXPECT_EQ(e.rebind(binds2), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(e, second, d, 20, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(first));

  // The same change forced through one exec setter per node.
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  ASSERT_NO_FATAL_FAILURE(order_test::poison(second));
  EXPECT_EQ(e.rebind(binds1), cudag::rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(e, first, d, 20, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(second));
  e.set_rebind_policy(cudag::rebind_policy::automatic);

  // update() lowers the spec again and CUDA pairs the new graph's nodes
  // and edges with the old ones by creation order: a lowering whose order
  // differed between two runs would be refused or would swap nodes' ids.
  ASSERT_NO_FATAL_FAILURE(order_test::poison(first));
  e.update(spec, binds2);
  ASSERT_NO_FATAL_FAILURE(
      order_test::expect_native_order(e.native_graph(), handles_of(e, d), d.edges, d.names));
  ASSERT_NO_FATAL_FAILURE(replay_and_check(e, second, d, 20, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(first));

  ASSERT_NO_FATAL_FAILURE(order_test::poison(second));
  EXPECT_FALSE(e.update_or_reinstantiate(spec, binds1)) << "same topology: no re-instantiation";
  ASSERT_NO_FATAL_FAILURE(replay_and_check(e, first, d, 20, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(second));
}
