// CPU cost of the builder path from nothing (builder calls, build(), check,
// lower) with every native call answered by a null table: what cudag adds
// on top of the driver, per node. No GPU needed; run under `perf stat` or
// `perf record` to see where the time goes. check() is timed twice: on the
// spec as build() gives it (with dependency hints) and with the hints taken
// away (names only, as a spec written by hand). Thread CPU time, medians of
// up to 21 batches (wall-clock time with --wall).
//
// With --reserve, the builder is told the graph's size first
// (builder::reserve), as a program that knows it would.
//
//   profile_build [nodes=1000] [repetitions=2000] [--wall] [--reserve]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"
#include "../common/null_native_table.hpp"

namespace {

__attribute__((noinline)) void tick(float*, float, int) {}

cudag::graph_spec chain_spec(int count, float* x, bool reserve) {
  cudag::builder b("chain");
  if (reserve) b.reserve(std::size_t(count), std::size_t(count));
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

// CPU time of this thread, in seconds: on a shared machine, what the work
// itself cost, without the time other processes held the core.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct spread {
  double median, low, high;
};
spread spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 2000;
  bool wall = false, reserve = false;
  for (int i = 3; i < argc; ++i) {
    wall |= std::string(argv[i]) == "--wall";
    reserve |= std::string(argv[i]) == "--reserve";
  }
  const cudag::native::api_table table = bench_null::table();
  cudag::native::install_api(&table);
  float* x = reinterpret_cast<float*>(std::uintptr_t{4096});
  const std::vector<cudag::binding> binds{cudag::bind("p", x)};
  const auto now = [&] {
    return wall ? std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
                      .count()
                : thread_cpu_s();
  };
  // Batches of repetitions: each phase's time a node, per batch; medians
  // (and the spread) over the batches.
  const int batches = std::max(1, std::min(reps, 21));
  const int per_batch = std::max(1, reps / batches);
  std::vector<double> build_ns, check_ns, check_names_ns, lower_ns;
  std::size_t total = 0;
  for (int b = 0; b < batches; ++b) {
    double build_s = 0, check_s = 0, check_names_s = 0, lower_s = 0;
    for (int r = 0; r < per_batch; ++r) {
      const double t0 = now();
      cudag::graph_spec spec = chain_spec(nodes, x, reserve);
      const double t1 = now();
      // check() with the builder's dependency hints and with names only (as
      // a spec written by hand), taking turns at going first.
      std::vector<std::uint32_t> hints;
      double with_hints = 0, names_only = 0;
      for (int turn = 0; turn < 2; ++turn) {
        const bool hinted = (turn == 0) == (r % 2 == 0);
        if (!hinted) hints.swap(spec.dependency_hints);
        const double start = now();
        cudag::check(spec, binds);
        (hinted ? with_hints : names_only) = now() - start;
        if (!hinted) hints.swap(spec.dependency_hints);
      }
      const double t5 = now();
      cudag::lowered_graph g = cudag::lower(spec, binds);
      const double t6 = now();
      total += g.nodes.size();
      build_s += t1 - t0;
      check_s += with_hints;
      check_names_s += names_only;
      lower_s += t6 - t5;
    }
    const double per = 1e9 / (double(per_batch) * nodes);
    build_ns.push_back(build_s * per);
    check_ns.push_back(check_s * per);
    check_names_ns.push_back(check_names_s * per);
    lower_ns.push_back(lower_s * per);
  }
  const auto show = [](const char* what, const std::vector<double>& v) {
    const spread s = spread_of(v);
    std::printf("  %-34s %7.1f ns/node (%.1f-%.1f)\n", what, s.median, s.low, s.high);
  };
  std::printf("%d nodes%s, %d batches of %d, median %s time per node (range over batches) [%zu]\n",
              nodes, reserve ? " (reserved)" : "", batches, per_batch,
              wall ? "wall-clock" : "thread CPU", total);
  show("builder calls + build()", build_ns);
  show("check (builder's hints)", check_ns);
  show("check (names only)", check_names_ns);
  show("lower (incl. check_and_plan)", lower_ns);
  std::vector<double> path(build_ns.size());
  for (std::size_t i = 0; i < path.size(); ++i) path[i] = build_ns[i] + lower_ns[i];
  show("builder + build + lower", path);
}
