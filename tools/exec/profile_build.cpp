// CPU cost of the builder path from nothing (builder calls, build(), check,
// lower) with every native call answered by a null table: what cudag adds
// on top of the driver, per node. No GPU needed; run under `perf stat` or
// `perf record` to see where the time goes.
//
//   profile_build [nodes=1000] [repetitions=2000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"
#include "../common/null_native_table.hpp"

namespace {

__attribute__((noinline)) void tick(float*, float, int) {}

cudag::graph_spec chain_spec(int count, float* x) {
  cudag::builder b("chain");
  auto p = b.param<float*>("p");
  (void)x;
  std::optional<cudag::node_ref> previous;
  for (int i = 0; i < count; ++i) {
    std::string name = "k";
    name += std::to_string(i);
    cudag::node_ref k = b.kernel(std::move(name), CUDAG_KERNEL(tick), cudag::launch(1, 256), p, 1.0f, 4096);
    if (previous) b.edge(*previous, k);
    previous = k;
  }
  return std::move(b).build();
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 2000;
  const cudag::native::api_table table = bench_null::table();
  cudag::native::install_api(&table);
  float* x = reinterpret_cast<float*>(std::uintptr_t{4096});
  const std::vector<cudag::binding> binds{cudag::bind("p", x)};
  double build_s = 0, check_s = 0, lower_s = 0;
  std::size_t total = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    cudag::graph_spec spec = chain_spec(nodes, x);
    auto t1 = std::chrono::steady_clock::now();
    cudag::check(spec, binds);
    auto t2 = std::chrono::steady_clock::now();
    cudag::lowered_graph g = cudag::lower(spec, binds);
    auto t3 = std::chrono::steady_clock::now();
    total += g.nodes.size();
    build_s += std::chrono::duration<double>(t1 - t0).count();
    check_s += std::chrono::duration<double>(t2 - t1).count();
    lower_s += std::chrono::duration<double>(t3 - t2).count();
  }
  const double per = 1e9 / (double(reps) * nodes);
  std::printf("%d nodes x %d: builder+build %.1f ns/node, check %.1f ns/node, lower (incl. check) %.1f ns/node [%zu]\n",
              nodes, reps, build_s * per, check_s * per, lower_s * per, total);
}
