// The check layer's array algorithms on their own, at the sizes where their
// paths change: reversing a graph's edges (csr.hpp: one pass up to 2^16
// nodes, then through buckets with edges staged in 32 bits, then in 64 bits
// past 2^21 nodes) and Kahn's lowest-ready-first sort (kahn.hpp: prefetching
// past 4096 nodes, a side counter for nodes of 255 dependencies or more).
// The specs of the other check tests reach only some of these paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "../../src/check/csr.hpp"
#include "../../src/check/kahn.hpp"
#include "spec_helpers.hpp"

namespace cudag::check_detail {
namespace {

struct rows {
  std::vector<std::uint32_t> begin;  // count + 1 row starts
  std::vector<std::uint32_t> target;
};

// `count` nodes, each row `per_row` random targets (repeats allowed: the
// reversal need not care), from `seed`.
rows random_rows(std::uint32_t count, std::uint32_t per_row, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::uint32_t> node(0, count - 1);
  rows r;
  r.begin.resize(std::size_t{count} + 1);
  r.target.reserve(std::size_t{count} * per_row);
  for (std::uint32_t v = 0; v < count; ++v) {
    for (std::uint32_t k = 0; k < per_row; ++k) r.target.push_back(node(random));
    r.begin[v + 1] = static_cast<std::uint32_t>(r.target.size());
  }
  return r;
}

TEST(CheckSort, ReversedEdgesMatchAStableSortAtEveryEncoding) {
  // One pass; buckets, 32-bit staging; buckets, 64-bit staging.
  for (const std::uint32_t count : {1000u, 70000u, (1u << 21) + 5}) {
    SCOPED_TRACE(std::to_string(count) + " nodes");
    const rows in = random_rows(count, count > 100000 ? 1 : 3, count);
    const csr_rows out = reverse_csr(count, in.begin.data(), in.target.data());

    std::vector<std::pair<std::uint32_t, std::uint32_t>> reversed;  // (new source, new target)
    for (std::uint32_t v = 0; v < count; ++v)
      for (std::uint32_t k = in.begin[v]; k < in.begin[v + 1]; ++k) reversed.emplace_back(in.target[k], v);
    std::stable_sort(reversed.begin(), reversed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });

    ASSERT_EQ(out.begin.size(), std::size_t{count} + 1);
    ASSERT_EQ(out.target.size(), reversed.size());
    EXPECT_EQ(out.begin.front(), 0u);
    EXPECT_EQ(out.begin.back(), reversed.size());
    std::size_t mismatches = 0;
    for (std::uint32_t u = 0, at = 0; u < count; ++u) {
      if (out.begin[u] != at) ++mismatches;
      while (at < reversed.size() && reversed[at].first == u) ++at;
    }
    for (std::size_t e = 0; e < reversed.size(); ++e) mismatches += out.target[e] != reversed[e].second;
    EXPECT_EQ(mismatches, 0u);
  }
}

// The oracle (spec_helpers.hpp) of a graph given as rows.
std::vector<std::uint32_t> lowest_ready_first(std::uint32_t count, const rows& dependencies) {
  std::vector<std::vector<std::size_t>> lists(count);
  for (std::uint32_t v = 0; v < count; ++v)
    lists[v].assign(dependencies.target.begin() + dependencies.begin[v],
                    dependencies.target.begin() + dependencies.begin[v + 1]);
  const std::vector<std::size_t> order = check_test::lowest_ready_first(lists);
  return {order.begin(), order.end()};
}

// A DAG of `count` nodes declared in shuffled order, with about 3 edges a
// node, where node `wide` depends on `wide_degree` others.
rows shuffled_dag(std::uint32_t count, std::uint32_t wide, std::uint32_t wide_degree,
                  std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint32_t> declared_at(count);  // hidden order -> declaration index
  for (std::uint32_t i = 0; i < count; ++i) declared_at[i] = i;
  std::shuffle(declared_at.begin(), declared_at.end(), random);
  std::vector<std::uint32_t> position(count);
  for (std::uint32_t p = 0; p < count; ++p) position[declared_at[p]] = p;

  std::vector<std::set<std::uint32_t>> deps(count);
  std::uniform_int_distribution<std::uint32_t> node(0, count - 1);
  for (std::uint32_t e = 0; e < 3 * count; ++e) {
    std::uint32_t a = node(random), b = node(random);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    deps[declared_at[b]].insert(declared_at[a]);  // earlier in the hidden order
  }
  // The wide node, last in the hidden order, waits on the first ones.
  std::swap(declared_at[position[wide]], declared_at[count - 1]);
  for (std::uint32_t p = 0; p < count; ++p) position[declared_at[p]] = p;
  deps[wide].clear();
  for (std::uint32_t p = 0; p < wide_degree; ++p) deps[wide].insert(declared_at[p]);
  for (std::uint32_t v = 0; v < count; ++v)
    std::erase_if(deps[v], [&](std::uint32_t u) { return position[u] >= position[v]; });

  rows r;
  r.begin.resize(std::size_t{count} + 1);
  for (std::uint32_t v = 0; v < count; ++v) {
    r.target.insert(r.target.end(), deps[v].begin(), deps[v].end());
    r.begin[v + 1] = static_cast<std::uint32_t>(r.target.size());
  }
  return r;
}

TEST(CheckSort, KahnTakesTheLowestReadyNodeFirstAtAnySize) {
  // Small (rows in cache) and past 4096 nodes (prefetching); a node of 300
  // dependencies is counted beside the byte counters, one of 254 in them.
  for (const std::uint32_t count : {600u, 9000u}) {
    for (const std::uint32_t wide_degree : {254u, 300u}) {
      SCOPED_TRACE(std::to_string(count) + " nodes, one of " + std::to_string(wide_degree) +
                   " dependencies");
      const rows dependencies = shuffled_dag(count, count / 3, wide_degree, count + wide_degree);
      ASSERT_EQ(dependencies.begin[count / 3 + 1] - dependencies.begin[count / 3], wide_degree);
      const csr_rows dependents = reverse_csr(count, dependencies.begin.data(), dependencies.target.data());
      std::vector<std::uint32_t> order;
      EXPECT_TRUE(kahn_order(count, dependencies.begin.data(), dependents.begin.data(),
                             dependents.target.data(), order));
      EXPECT_EQ(order, lowest_ready_first(count, dependencies));
    }
  }
}

TEST(CheckSort, KahnStopsShortOfACycle) {
  // 0 <- 1 <- 2 <- 1 (a cycle of 1 and 2), and 3 free: 0 and 3 come out.
  const rows dependencies{{0, 0, 2, 3, 3}, {0, 2, 1}};
  const auto count = static_cast<std::uint32_t>(dependencies.begin.size() - 1);
  const csr_rows dependents = reverse_csr(count, dependencies.begin.data(), dependencies.target.data());
  std::vector<std::uint32_t> order;
  EXPECT_FALSE(kahn_order(count, dependencies.begin.data(), dependents.begin.data(),
                          dependents.target.data(), order));
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 3}));
}

}  // namespace
}  // namespace cudag::check_detail
