// Import pairs a pointer (a free, a kernel argument, a copy) with the
// allocation live along the node's dependency path, not with the first
// allocation of that address: CUDA reuses a freed allocation's address for
// a later allocation of the same graph. Checked without a GPU on the
// ordering alone; tests/extras/capture_gpu_test.cpp imports a real one.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cudag/error.hpp"
#include "import_order.hpp"

namespace {

using cudag::import_detail::allocation_order;
using cudag::import_detail::graph_allocation;

constexpr std::uintptr_t p = 0x7f0000000000, q = 0x7f0000100000;

// The node index of the allocation live at `user` for `address`, or -1.
long live(const allocation_order& order, std::size_t user, std::uintptr_t address) {
  const graph_allocation* a = order.live_at(user, address);
  return a ? long(a->node) : -1;
}

// malloc a (p), malloc b (q), free a, malloc c (p again), use c, free c, free b:
// nodes 0..6 in a chain, as one capture stream records them.
std::vector<std::vector<std::size_t>> chain(std::size_t n) {
  std::vector<std::vector<std::size_t>> deps(n);
  for (std::size_t i = 1; i < n; ++i) deps[i] = {i - 1};
  return deps;
}

}  // namespace

TEST(ImportOrder, AFreedAddressReusedLaterPairsWithTheLiveAllocation) {
  const allocation_order order(chain(7), {{0, p, 1024}, {1, q, 1024}, {3, p, 1024}});
  EXPECT_EQ(live(order, 2, p), 0);  // free a
  EXPECT_EQ(live(order, 4, p), 3);  // a use of c
  EXPECT_EQ(live(order, 4, p + 1000), 3);
  EXPECT_EQ(live(order, 5, p), 3);  // free c
  EXPECT_EQ(live(order, 6, q), 1);  // free b
  EXPECT_EQ(live(order, 6, q + 1024), -1);  // one past the end
  EXPECT_EQ(live(order, 0, p), -1);         // an allocation does not depend on itself
}

TEST(ImportOrder, TheOrderIsTheGraphsNotTheNodeList) {
  // Created in the order: use (0), free c (1), alloc c (2), free a (3),
  // alloc a (4); dependencies: 4 -> 3 -> 2 -> 0 -> 1.
  std::vector<std::vector<std::size_t>> deps(5);
  deps[3] = {4};
  deps[2] = {3};
  deps[0] = {2};
  deps[1] = {0};
  const allocation_order order(deps, {{4, p, 256}, {2, p, 256}});
  EXPECT_EQ(live(order, 3, p), 4);
  EXPECT_EQ(live(order, 0, p + 8), 2);
  EXPECT_EQ(live(order, 1, p), 2);
  EXPECT_LT(order.position(4), order.position(2));
}

TEST(ImportOrder, TwoStreamsJoiningSeeTheLaterAllocation) {
  // 0: alloc a (p); 1: free a; 2: alloc c (p), after 1; 3: a node on another
  // branch that depends on 0 only; 4: join of 2 and 3.
  std::vector<std::vector<std::size_t>> deps(5);
  deps[1] = {0};
  deps[2] = {1};
  deps[3] = {0};
  deps[4] = {3, 2};
  const allocation_order order(deps, {{0, p, 64}, {2, p, 64}});
  EXPECT_EQ(live(order, 3, p), 0);
  EXPECT_EQ(live(order, 4, p), 2);
  const auto before = order.before(4);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].node, 0u);
  EXPECT_EQ(before[1].node, 2u);
}

TEST(ImportOrder, ManyAllocationsCrossAWordOfTheAncestorSets) {
  // 130 allocations of one address in a chain, each freed before the next.
  constexpr std::size_t rounds = 130;
  std::vector<graph_allocation> allocations;
  for (std::size_t r = 0; r < rounds; ++r) allocations.push_back({2 * r, p, 32});
  const allocation_order order(chain(2 * rounds), allocations);
  for (std::size_t r = 0; r < rounds; ++r) ASSERT_EQ(live(order, 2 * r + 1, p + 4), long(2 * r)) << r;
}

TEST(ImportOrder, RefusesACycleAndAnUnknownNode) {
  std::vector<std::vector<std::size_t>> cycle{{1}, {0}};
  EXPECT_THROW(allocation_order(cycle, {}), cudag::error);
  std::vector<std::vector<std::size_t>> unknown{{}, {5}};
  EXPECT_THROW(allocation_order(unknown, {}), cudag::error);
  EXPECT_THROW(allocation_order(chain(2), {{9, p, 8}}), cudag::error);
}
