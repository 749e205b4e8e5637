// A static DSL graph of 32 kernel nodes whose declaration order is
// unrelated to its topological order: 24 of its 45 edges point from a node
// declared later to one declared earlier, edge items stand before the nodes
// they name, and every edge form is used (edge, chain, fan_out, fan_in,
// arrow paths, a constexpr table). Every node takes a ticket when it starts
// and when it ends and busy-waits a freshly drawn time in between: every
// edge must hold on every replay, the CUDA graph must order exactly the
// declared pairs, and both must stay true across whole-graph and per-node
// rebinds and between two lowerings of the declaration.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cudag/dsl.hpp"
#include "cudag/handles.hpp"
#include "engine/order_check.hpp"
#include "engine/test_kernels.cuh"
#include "gpu_support.hpp"

namespace {

using namespace cudag::dsl;
using engine_test::ordered_ticket;
using order_test::edge_list;

constexpr auto ticket = param<"ticket", unsigned*>;
constexpr auto started = param<"begin", unsigned*>;
constexpr auto finished = param<"end", unsigned*>;
constexpr auto spin = param<"spin", const long long*>;

// Generated once from a random topological order (ranks: v23 v28 v03 v31
// v18 v20 v06 v12 v24 v17 v10 v16 v27 v08 v09 v29 v02 v07 v13 v26 v05 v15
// v14 v19 v04 v22 v25 v30 v01 v00 v21 v11; longest path 10 nodes) and an
// independent random declaration order; node vNN has id NN.
/// A node of the graph below: it takes a ticket (an atomic add) and writes
/// only its own slots of started and finished, beside unordered nodes that
/// do the same: concurrent accesses, no race.
template <fixed_string Name>
constexpr auto ticket_node(int id) {
  return with_access<0, cudag::access_mode::concurrent>(with_access<1, cudag::access_mode::concurrent>(
      with_access<2, cudag::access_mode::concurrent>(
          kernel<Name, ordered_ticket>(1, 1, ticket, started, finished, spin, id))));
}

constexpr name_pair order_table[] = {
    {"v28", "v18"}, {"v29", "v02"}, {"v26", "v30"}, {"v19", "v25"}, {"v01", "v21"},
    {"v27", "v13"}, {"v03", "v06"}, {"v18", "v20"}};
// clang-format off
constexpr auto order_graph = graph(
    ticket_node<"v14">(14),
    ticket_node<"v04">(4),
    edge<"v02", "v04">,
    ticket_node<"v03">(3),
    edge<"v23", "v28">,
    ticket_node<"v01">(1),
    ticket_node<"v29">(29),
    ticket_node<"v15">(15),
    edge<"v10", "v27">,
    ticket_node<"v30">(30),
    ticket_node<"v18">(18),
    ticket_node<"v31">(31),
    edge<"v03", "v31">,
    ticket_node<"v28">(28),
    edge<"v03", "v10">,
    ticket_node<"v13">(13),
    ticket_node<"v07">(7),
    ticket_node<"v23">(23),
    edges<"v10 -> v08 -> v15 -> v04", "v23 -> v24 -> v09 -> v15", "v10 -> v16">,
    fan_in<"v14", "v26", "v07">,
    edge<"v29", "v07">,
    ticket_node<"v21">(21),
    ticket_node<"v06">(6),
    fan_in<"v11", "v25", "v04">,
    ticket_node<"v19">(19),
    edge<"v23", "v03">,
    ticket_node<"v16">(16),
    edge<"v27", "v26">,
    ticket_node<"v25">(25),
    ticket_node<"v17">(17),
    edges_from<order_table>,
    edge<"v18", "v12">,
    fan_out<"v28", "v17", "v12", "v03">,
    edge<"v19", "v04">,
    ticket_node<"v05">(5),
    ticket_node<"v22">(22),
    ticket_node<"v00">(0),
    ticket_node<"v09">(9),
    edge<"v27", "v05">,
    ticket_node<"v20">(20),
    chain<"v02", "v13", "v26", "v05", "v30">,
    ticket_node<"v12">(12),
    fan_out<"v16", "v27", "v08">,
    edge<"v27", "v07">,
    ticket_node<"v26">(26),
    ticket_node<"v08">(8),
    edge<"v24", "v08">,
    ticket_node<"v11">(11),
    ticket_node<"v24">(24),
    ticket_node<"v10">(10),
    ticket_node<"v02">(2),
    ticket_node<"v27">(27),
    chain<"v10", "v07", "v19", "v22", "v00">);
// clang-format on

constexpr int nodes = 32;

/// The same 45 edges as (from id, to id): what the declaration above must mean.
const edge_list expected_edges = {
    {1, 21}, {2, 4}, {2, 13}, {3, 6}, {3, 10}, {3, 31}, {4, 11}, {5, 30}, {7, 14}, {7, 19},
    {8, 15}, {9, 15}, {10, 7}, {10, 8}, {10, 16}, {10, 27}, {13, 26}, {15, 4}, {16, 8}, {16, 27},
    {18, 12}, {18, 20}, {19, 4}, {19, 22}, {19, 25}, {22, 0}, {23, 3}, {23, 24}, {23, 28},
    {24, 8}, {24, 9}, {25, 11}, {26, 5}, {26, 14}, {26, 30}, {27, 5}, {27, 7}, {27, 13},
    {27, 26}, {28, 3}, {28, 12}, {28, 17}, {28, 18}, {29, 2}, {29, 7}};

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back((i < 10 ? "v0" : "v") + std::to_string(i));
  return out;
}

template <fixed_string... Names, class Exec>
std::vector<cudaGraphNode_t> handles_by_name(const Exec& ex) {
  return {ex.template node_handle<Names>()...};
}

template <class Exec>
std::vector<cudaGraphNode_t> handles_of(const Exec& ex) {
  // clang-format off
  return handles_by_name<"v00", "v01", "v02", "v03", "v04", "v05", "v06", "v07", "v08", "v09",
                         "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19",
                         "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",
                         "v30", "v31">(ex);
  // clang-format on
}

/// `replays` replays, each with fresh busy-waits; every edge must hold.
template <class Exec>
void replay_and_check(Exec& ex, order_test::tickets& t, int replays, std::mt19937& rng,
                      cudaStream_t s) {
  const auto node_names = names();
  for (int replay = 0; replay < replays; ++replay) {
    ASSERT_NO_FATAL_FAILURE(order_test::prepare(t, order_test::draw_spins(nodes, rng), s));
    ex.launch(s);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ex.synchronize(s);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    order_test::replay_result r;
    ASSERT_NO_FATAL_FAILURE(order_test::read_back(t, r));
    ASSERT_NO_FATAL_FAILURE(order_test::expect_each_ran_once(r, node_names)) << "replay " << replay;
    const edge_list broken = order_test::broken_edges(r, expected_edges);
    ASSERT_TRUE(broken.empty()) << "replay " << replay << ": " << broken.size() << " of "
                                << expected_edges.size() << " edges broken:"
                                << order_test::describe(broken, r, node_names);
  }
}

void expect_untouched(order_test::tickets& t) {
  order_test::replay_result r;
  ASSERT_NO_FATAL_FAILURE(order_test::read_back(t, r));
  EXPECT_EQ(r.ticket, order_test::not_taken);
  for (int i = 0; i < t.count; ++i) {
    ASSERT_EQ(r.begin[i], order_test::not_taken) << i;
    ASSERT_EQ(r.end[i], order_test::not_taken) << i;
  }
}

// Needs no GPU: guards the expected edge list the GPU tests below check against.
TEST(DslOrder, TheDeclarationMeansTheExpectedEdges) {
  const cudag::graph_spec spec = to_spec(order_graph);
  ASSERT_EQ(spec.nodes.size(), static_cast<std::size_t>(nodes));
  const auto node_names = names();
  std::set<std::pair<int, int>> declared;
  for (const cudag::node& n : spec.nodes) {
    const int to = static_cast<int>(std::find(node_names.begin(), node_names.end(), n.name) -
                                    node_names.begin());
    ASSERT_LT(to, nodes) << n.name;
    for (const std::string& dep : n.deps) {
      const int from = static_cast<int>(std::find(node_names.begin(), node_names.end(), dep) -
                                        node_names.begin());
      ASSERT_LT(from, nodes) << dep;
      declared.emplace(from, to);
    }
  }
  const std::set<std::pair<int, int>> expected(expected_edges.begin(), expected_edges.end());
  EXPECT_EQ(expected.size(), expected_edges.size()) << "an edge listed twice";
  EXPECT_EQ(declared, expected);
  // Scrambled: many edges go from a node declared later to one declared earlier.
  int backward = 0;
  for (auto [from, to] : expected_edges) {
    const auto position = [&](int id) {
      for (std::size_t i = 0; i < spec.nodes.size(); ++i)
        if (spec.nodes[i].name == node_names[id]) return i;
      return spec.nodes.size();
    };
    backward += position(to) < position(from);
  }
  EXPECT_GT(backward, 15);
}

TEST(DslOrder, EveryEdgeHoldsOnEveryReplay) {
  CUDAG_REQUIRE_GPU();
  order_test::tickets t(nodes);
  auto s = cudag::make_stream();
  auto ex = instantiate(order_graph, ticket = t.ticket.data(), started = t.begin.data(),
                        finished = t.end.data(),
                        spin = static_cast<const long long*>(t.spin.data()));
  ASSERT_NO_FATAL_FAILURE(
      order_test::expect_native_order(ex.native_graph(), handles_of(ex), expected_edges, names()));
  std::mt19937 rng(31);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(ex, t, 100, rng, s.get()));
  EXPECT_EQ(ex.replay_count(), 100u);
}

TEST(DslOrder, OrderSurvivesWholeGraphAndPerNodeRebinds) {
  CUDAG_REQUIRE_GPU();
  order_test::tickets first(nodes), second(nodes);
  auto s = cudag::make_stream();
  std::mt19937 rng(32);
  auto ex = instantiate(order_graph, ticket = first.ticket.data(), started = first.begin.data(),
                        finished = first.end.data(),
                        spin = static_cast<const long long*>(first.spin.data()));
  ASSERT_NO_FATAL_FAILURE(replay_and_check(ex, first, 10, rng, s.get()));

  // Each parameter is read by all 32 nodes: one whole-graph update of the
  // template graph, forced (the automatic rule keeps exec setters).
  ex.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(order_test::poison(first));
  EXPECT_EQ(ex.rebind(ticket = second.ticket.data(), started = second.begin.data(),
                      finished = second.end.data(),
                      spin = static_cast<const long long*>(second.spin.data())),
            rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(ex, second, 30, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(first));

  // Forced through one exec setter per node.
  ex.set_rebind_policy(cudag::rebind_policy::node_setters);
  ASSERT_NO_FATAL_FAILURE(order_test::poison(second));
  EXPECT_EQ(ex.rebind(ticket = first.ticket.data(), started = first.begin.data(),
                      finished = first.end.data(),
                      spin = static_cast<const long long*>(first.spin.data())),
            rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(ex, first, 30, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(second));

  // Forced whole-graph update of the busy-wait table after the per-node
  // changes above: the tickets must still go to `first`.
  ex.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(order_test::poison(second));
  EXPECT_EQ(ex.rebind(spin = static_cast<const long long*>(second.spin.data())),
            rebind_path::whole_graph_update);
  // Busy-waits now come from second.spin, tickets still go to first.
  for (int replay = 0; replay < 30; ++replay) {
    ASSERT_NO_FATAL_FAILURE(
        order_test::prepare(second, order_test::draw_spins(nodes, rng), s.get()));
    ASSERT_NO_FATAL_FAILURE(order_test::prepare(first, std::vector<long long>(nodes, 0), s.get()));
    ex.launch(s.get());
    ex.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    order_test::replay_result r;
    ASSERT_NO_FATAL_FAILURE(order_test::read_back(first, r));
    ASSERT_NO_FATAL_FAILURE(order_test::expect_each_ran_once(r, names())) << "replay " << replay;
    const edge_list broken = order_test::broken_edges(r, expected_edges);
    ASSERT_TRUE(broken.empty()) << "replay " << replay << order_test::describe(broken, r, names());
  }
}

// cudaGraphExecUpdate pairs the nodes of two graphs by creation order and
// their edges by edge order: a lowering whose node or edge order depended
// on anything but the declaration would be refused here, or would swap
// the nodes' arguments (ids), which the ticket check sees.
TEST(DslOrder, TwoLoweringsCreateNodesAndEdgesInTheSameOrder) {
  CUDAG_REQUIRE_GPU();
  order_test::tickets first(nodes), second(nodes);
  auto s = cudag::make_stream();
  std::mt19937 rng(33);
  auto ex = instantiate(order_graph, ticket = first.ticket.data(), started = first.begin.data(),
                        finished = first.end.data(),
                        spin = static_cast<const long long*>(first.spin.data()));
  auto again = lower(order_graph, ticket = second.ticket.data(), started = second.begin.data(),
                     finished = second.end.data(),
                     spin = static_cast<const long long*>(second.spin.data()));
  ASSERT_NE(again.native_graph(), nullptr);
  ASSERT_NE(again.native_graph(), ex.native_graph());
  ASSERT_NO_FATAL_FAILURE(order_test::poison(first));
  cudaGraphExecUpdateResultInfo info{};
  ASSERT_EQ(cudaGraphExecUpdate(ex.native_exec(), again.native_graph(), &info), cudaSuccess)
      << "update result " << static_cast<int>(info.result);
  ASSERT_NO_FATAL_FAILURE(replay_and_check(ex, second, 30, rng, s.get()));
  ASSERT_NO_FATAL_FAILURE(expect_untouched(first));
}

}  // namespace
