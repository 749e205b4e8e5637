// A random DAG whose kernels take tickets from an atomic counter: every edge
// must be respected by the order of the tickets, on every replay.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

TEST(EngineRandomDag, EveryEdgeIsRespected) {
  CUDAG_REQUIRE_GPU();
  constexpr int nodes = 300;
  std::mt19937 rng(20261122);
  cudag::device_buffer<unsigned> ticket(1), order(nodes);

  cudag::builder b("random_dag");
  auto pt = b.param<unsigned*>("ticket");
  auto po = b.param<unsigned*>("order");
  std::vector<cudag::node_ref> refs;
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < nodes; ++i) {
    refs.push_back(b.kernel("n" + std::to_string(i), CUDAG_KERNEL(take_ticket), cudag::launch(1, 1),
                            pt, po, i));
    if (i == 0) continue;
    std::uniform_int_distribution<int> pick(0, i - 1);
    const int fan_in = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int k = 0; k < fan_in; ++k) {
      const int from = pick(rng);
      b.edge(refs[from], refs[i]);
      edges.emplace_back(from, i);
    }
  }
  const cudag::binding binds[] = {cudag::bind("ticket", ticket.data()),
                                  cudag::bind("order", order.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (int replay = 0; replay < 5; ++replay) {
    // On the launch stream: a non-blocking stream does not wait for the
    // legacy default stream, so plain cudaMemset could race the replay.
    ASSERT_EQ(cudaMemsetAsync(ticket.data(), 0, sizeof(unsigned), s.get()), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(order.data(), 0xFF, nodes * sizeof(unsigned), s.get()), cudaSuccess);
    e.launch(s.get());
    e.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::vector<unsigned> h(nodes);
    ASSERT_EQ(cudaMemcpy(h.data(), order.data(), nodes * sizeof(unsigned), cudaMemcpyDeviceToHost),
              cudaSuccess);
    std::vector<bool> seen(nodes, false);
    for (int i = 0; i < nodes; ++i) {
      ASSERT_LT(h[i], static_cast<unsigned>(nodes)) << "node " << i << " did not run";
      ASSERT_FALSE(seen[h[i]]) << "ticket " << h[i] << " taken twice";
      seen[h[i]] = true;
    }
    for (auto [from, to] : edges)
      ASSERT_LT(h[from], h[to]) << "edge n" << from << " -> n" << to << " not respected";
  }
}
