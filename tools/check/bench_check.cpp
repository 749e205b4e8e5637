// Times the check layer on a random DAG: check(), topological_order(),
// analyze() without and with redundant edges, redundant_edges() alone.
// Then check() of the same DAG with buffer lifetimes added (alloc, two users,
// free per buffer), which exercises the buffer-ordering pass.
// Usage: bench_check [nodes=100000] [edges=400000] [repeats=7] [seed=1] [buffers=10000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "cudag/check.hpp"
#include "random_dag.hpp"

namespace {

double median_ms(int repeats, const std::function<void()>& work) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::size_t edges = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 400000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 7;
  const std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  const std::size_t buffers = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 10000;

  const cudag::graph_spec spec = cudag::tools::random_dag(nodes, edges, seed);
  std::printf("random DAG: %zu nodes, %zu edges, seed %llu, median of %d runs\n", nodes, edges,
              static_cast<unsigned long long>(seed), repeats);

  std::size_t sink = 0;  // keeps results observable so no call is optimised away
  const double check_ms = median_ms(repeats, [&] { cudag::check(spec); });
  const double order_ms =
      median_ms(repeats, [&] { sink += cudag::topological_order(spec).size(); });
  const double analyze_ms = median_ms(repeats, [&] {
    sink += cudag::analyze(spec, {.redundant_edges = false}).width;
  });
  std::size_t redundant = 0;
  const double redundant_ms =
      median_ms(repeats, [&] { redundant = cudag::redundant_edges(spec).size(); });
  cudag::graph_analysis full;
  const double full_ms = median_ms(repeats, [&] { full = cudag::analyze(spec); });

  std::printf("check                          %9.2f ms\n", check_ms);
  std::printf("topological_order              %9.2f ms\n", order_ms);
  std::printf("analyze (no redundant edges)   %9.2f ms\n", analyze_ms);
  std::printf("redundant_edges                %9.2f ms\n", redundant_ms);
  std::printf("analyze (all)                  %9.2f ms\n", full_ms);
  cudag::graph_spec with_buffers = spec;
  cudag::tools::add_buffer_lifetimes(with_buffers, buffers, seed + 1);
  const double buffers_ms = median_ms(repeats, [&] { cudag::check(with_buffers); });
  std::printf("check with %zu buffers (%zu nodes) %6.2f ms\n", buffers, with_buffers.nodes.size(),
              buffers_ms);
  std::printf("critical path %zu nodes, width %zu, %zu redundant edges (%zu)\n",
              full.critical_path, full.width, redundant, sink % 2);
  return 0;
}
