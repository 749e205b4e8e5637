// CPU cost of the builder path from nothing (builder calls, resolve(), check,
// lower, the graph destroyed) with every native call answered by a null
// table: what cudag adds on top of the driver, per node. No GPU needed; run under `perf stat` or
// `perf record` to see where the time goes. check() is timed twice: on the
// resolved graph as resolve() gives it and on its spec by names (as a spec
// written by hand). Thread CPU time, medians of
// up to 21 batches (wall-clock time with --wall).
//
// With --reserve, the builder is told the graph's size first
// (builder::reserve), as a program that knows it would.
//
// Last, a floor to read those figures against: the least work any checked
// builder path of the same chain does (see floor_path below), through the
// same null table. What cudag adds beyond the floor is what a leaner design
// could save; the floor itself, next to the driver's cost of a node, bounds
// the ratio to the raw calls that any checked builder can reach.
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

cudag::resolved_graph chain_graph(int count, float* x, bool reserve) {
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
  return std::move(b).resolve();
}

/// The least a checked builder path can do for the chain, kept apart from
/// cudag: each node's name stored and checked unique (an open-addressing
/// table, no messages), its three argument values stored in slots, its
/// dependency held as an index; then a cycle check over the indices
/// (Kahn's sort, which also gives the order to lower in); then one native
/// add per node with its dependencies' handles and its slots as the kernel
/// parameters. No spec, no error text, no rebinding table beyond the slots.
/// Returns the number of nodes added.
std::size_t floor_path(int count, float* x) {
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::string> names;
  names.reserve(n);
  std::vector<std::uint32_t> table(std::size_t{64} << std::max(0, 64 - __builtin_clzll(n) - 5), 0);
  const std::size_t mask = table.size() - 1;
  struct kernel_slots {
    float* p;
    float a;
    int b;
  };
  std::vector<kernel_slots> args;
  args.reserve(n);
  std::vector<std::uint32_t> dep_begin{0}, deps;
  dep_begin.reserve(n + 1);
  deps.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = "k";
    name += std::to_string(i);
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    std::size_t slot = (h ^ (h >> 29)) & mask;
    for (; table[slot] != 0; slot = (slot + 1) & mask)
      if (names[table[slot] - 1] == name) std::abort();  // a duplicate name
    table[slot] = static_cast<std::uint32_t>(i + 1);
    names.push_back(std::move(name));
    args.push_back({x, 1.0f, 4096});
    if (i) deps.push_back(static_cast<std::uint32_t>(i - 1));
    dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
  }
  // Kahn's sort over the indices: the cycle check and the lowering order.
  std::vector<std::uint32_t> waiting(n, 0), out_begin(n + 1, 0), out(deps.size()), order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    waiting[i] = dep_begin[i + 1] - dep_begin[i];
    for (std::uint32_t k = dep_begin[i]; k < dep_begin[i + 1]; ++k) ++out_begin[deps[k] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) out_begin[i + 1] += out_begin[i];
  {
    std::vector<std::uint32_t> cursor(out_begin.begin(), out_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t k = dep_begin[i]; k < dep_begin[i + 1]; ++k)
        out[cursor[deps[k]]++] = static_cast<std::uint32_t>(i);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) order.push_back(static_cast<std::uint32_t>(i));
  for (std::size_t head = 0; head < order.size(); ++head)
    for (std::uint32_t k = out_begin[order[head]]; k < out_begin[order[head] + 1]; ++k)
      if (--waiting[out[k]] == 0) order.push_back(out[k]);
  if (order.size() != n) std::abort();  // a cycle
  // Lowering: the driver copies the parameters, the slots stay for rebinds.
  const cudag::native::api_table& api = cudag::native::api();
  cudaGraph_t graph = nullptr;
  if (api.graph_create(&graph, 0) != cudaSuccess) std::abort();
  std::vector<cudaGraphNode_t> handles(n, nullptr);
  std::vector<void*> pointers(3 * n);
  std::vector<cudaGraphNode_t> dep_handles;
  for (const std::uint32_t i : order) {
    dep_handles.clear();
    for (std::uint32_t k = dep_begin[i]; k < dep_begin[i + 1]; ++k) dep_handles.push_back(handles[deps[k]]);
    void** slots = &pointers[3 * std::size_t(i)];
    slots[0] = &args[i].p;
    slots[1] = &args[i].a;
    slots[2] = &args[i].b;
    cudaKernelNodeParams p{};
    p.func = reinterpret_cast<void*>(&tick);
    p.gridDim = dim3(1);
    p.blockDim = dim3(256);
    p.kernelParams = slots;
    if (api.add_kernel_node(&handles[i], graph, dep_handles.data(), dep_handles.size(), &p) != cudaSuccess)
      std::abort();
  }
  (void)api.graph_destroy(graph);
  return handles.size();
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
  std::vector<double> build_ns, check_ns, check_names_ns, lower_ns, destroy_ns;
  std::size_t total = 0;
  for (int b = 0; b < batches; ++b) {
    double build_s = 0, check_s = 0, check_names_s = 0, lower_s = 0, destroy_s = 0;
    for (int r = 0; r < per_batch; ++r) {
      const double t0 = now();
      cudag::resolved_graph graph = chain_graph(nodes, x, reserve);
      const double t1 = now();
      // check() of the resolved graph and of its spec by names (as a spec
      // written by hand), taking turns at going first.
      double resolved_s = 0, names_only = 0;
      for (int turn = 0; turn < 2; ++turn) {
        const bool resolved = (turn == 0) == (r % 2 == 0);
        const double start = now();
        if (resolved)
          cudag::check(graph, binds);
        else
          cudag::check(graph.spec(), binds);
        (resolved ? resolved_s : names_only) = now() - start;
      }
      const double t5 = now();
      cudag::lowered_graph g = cudag::lower(graph, binds);
      const double t6 = now();
      total += g.nodes.size();
      // The graph dies in the path too (a builder's graph is a temporary).
      const double t7 = now();
      { const cudag::resolved_graph done = std::move(graph); }
      destroy_s += now() - t7;
      build_s += t1 - t0;
      check_s += resolved_s;
      check_names_s += names_only;
      lower_s += t6 - t5;
    }
    const double per = 1e9 / (double(per_batch) * nodes);
    build_ns.push_back(build_s * per);
    check_ns.push_back(check_s * per);
    check_names_ns.push_back(check_names_s * per);
    lower_ns.push_back(lower_s * per);
    destroy_ns.push_back(destroy_s * per);
  }
  const auto show = [](const char* what, const std::vector<double>& v) {
    const spread s = spread_of(v);
    std::printf("  %-34s %7.1f ns/node (%.1f-%.1f)\n", what, s.median, s.low, s.high);
  };
  std::printf("%d nodes%s, %d batches of %d, median %s time per node (range over batches) [%zu]\n",
              nodes, reserve ? " (reserved)" : "", batches, per_batch,
              wall ? "wall-clock" : "thread CPU", total);
  show("builder calls + resolve()", build_ns);
  show("check (resolved)", check_ns);
  show("check (names only)", check_names_ns);
  show("lower (incl. check_and_plan)", lower_ns);
  show("the spec destroyed", destroy_ns);
  std::vector<double> path(build_ns.size());
  for (std::size_t i = 0; i < path.size(); ++i) path[i] = build_ns[i] + lower_ns[i];
  show("builder + build + lower", path);
  for (std::size_t i = 0; i < path.size(); ++i) path[i] += destroy_ns[i];
  show("the same, and the spec destroyed", path);

  // The floor, in batches as above.
  std::vector<double> floor_ns;
  for (int b = 0; b < batches; ++b) {
    const double start = now();
    for (int r = 0; r < per_batch; ++r) total += floor_path(nodes, x);
    floor_ns.push_back((now() - start) * 1e9 / (double(per_batch) * nodes));
  }
  show("floor: least checked builder path", floor_ns);
}
