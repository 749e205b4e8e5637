// Times the check layer on a random DAG (every other node a kernel reading
// two parameters and a literal): check(), topological_order(), analyze()
// without and with redundant edges, redundant_edges() alone; then check() of
// the same DAG with buffer lifetimes added (alloc, two users, free per
// buffer), which exercises the buffer-ordering pass; then check() of a chain
// of 1000 kernel nodes, the shape of a graph built from nothing, and
// check_detail::check_and_plan() of it (what lowering calls).
//
// Memory: for each call, the peak resident set during the call minus the
// resident set before it (Linux: /proc/self/clear_refs resets the peak), next
// to the size of the spec itself (resident set growth while it was built).
//
// Huge pages: a spec of a million nodes is hundreds of MiB of small heap
// blocks (each node's dependency list is its own), which the checks read
// once each; in 4 KiB pages nearly every list is a TLB miss, and under a
// hypervisor a page walk costs more than the rest of the read. The program
// prints how much of its memory is in huge pages: run it with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35 and later, transparent
// huge pages in "madvise" or "always" mode) to put the heap, and so the
// spec, there, as a program that builds graphs this large would.
//
// Times are the median thread CPU time of the calls (wall-clock with --wall).
// --races: only the race check's share (check() with and without it).
// Usage: bench_check [--wall] [--races] [nodes=100000] [edges=400000] [repeats=7] [seed=1]
//                    [buffers=10000] [kernel_every=2] [redundant=1]
// Redundant-edge analysis is skipped (and said so) when its cost is over
// analyze_options' default limit.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../../src/check/check_passes.hpp"
#include "../../src/check/checked_plan.hpp"
#include "../../src/check/spec_tree.hpp"
#include "cudag/bindings.hpp"
#include "cudag/check.hpp"
#include "../../tools/check/random_dag.hpp"

namespace {

// CPU time of this thread, in ms: on a shared machine, what the call itself
// cost, without the time other processes held the core.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// Median thread CPU time of `repeats` calls (wall-clock time with --wall).
bool use_wall_clock = false;
double median_ms(int repeats, const std::function<void()>& work) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_ms();
    work();
    times.push_back(use_wall_clock ? std::chrono::duration<double, std::milli>(
                                         std::chrono::steady_clock::now() - start)
                                         .count()
                                   : thread_cpu_ms() - cpu_start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// "VmRSS" or "VmHWM" of this process in MiB; -1 where /proc is not there.
double status_mib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line))
    if (line.rfind(prefix, 0) == 0) return std::strtod(line.c_str() + prefix.size(), nullptr) / 1024;
  return -1;
}

// "AnonHugePages" of the whole process in MiB (Linux >= 4.14); -1 elsewhere.
double huge_page_mib() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line))
    if (line.rfind("AnonHugePages:", 0) == 0) return std::strtod(line.c_str() + 14, nullptr) / 1024;
  return -1;
}

// The race check's load: `buffers` pointer parameters, each touched by
// `touches` kernel nodes of the DAG (each node touches one), in groups of one
// writer and then readers (a tenth of the touches write), ordered as a
// program orders them: each reader after its group's writer, each writer
// after the readers of the group before. Race-free, so that check() runs
// the whole race pass. Returns the edges added.
std::size_t add_buffer_accessors(cudag::graph_spec& spec, std::size_t buffers, std::size_t touches,
                                 std::uint64_t seed) {
  const std::vector<std::size_t> order = cudag::topological_order(spec);
  std::vector<std::size_t> rank(spec.nodes.size());
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  std::vector<std::size_t> nodes(spec.nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
  std::mt19937_64 random(seed);
  std::shuffle(nodes.begin(), nodes.end(), random);
  std::size_t added = 0;
  const auto depend = [&](std::size_t later, std::size_t earlier) {
    auto& deps = spec.nodes[later].deps;
    const std::string& name = spec.nodes[earlier].name;
    if (std::find(deps.begin(), deps.end(), name) != deps.end()) return;
    deps.push_back(name);
    ++added;
  };
  for (std::size_t b = 0; b < buffers && (b + 1) * touches <= nodes.size(); ++b) {
    const std::string param = "buf" + std::to_string(b);
    spec.params.push_back(cudag::param_decl{param, cudag::type_of<float*>()});
    std::vector<std::size_t> group(nodes.begin() + static_cast<std::ptrdiff_t>(b * touches),
                                   nodes.begin() + static_cast<std::ptrdiff_t>((b + 1) * touches));
    std::sort(group.begin(), group.end(), [&](std::size_t a, std::size_t c) { return rank[a] < rank[c]; });
    std::size_t writer = 0;
    std::vector<std::size_t> readers;
    for (std::size_t k = 0; k < group.size(); ++k) {
      const std::size_t v = group[k];
      auto* kernel = std::get_if<cudag::kernel_node>(&spec.nodes[v].params);
      if (!kernel) {
        cudag::kernel_node stand_in;
        stand_in.function = reinterpret_cast<const void*>(&cudag::tools::stand_in_kernel);
        stand_in.function_name = "stand_in_kernel";
        kernel = &spec.nodes[v].params.emplace<cudag::kernel_node>(std::move(stand_in));
      }
      const bool writes = k % 10 == 0;
      kernel->args.push_back(cudag::value{writes ? cudag::type_of<float*>() : cudag::type_of<const float*>(),
                                          cudag::param_ref{param}});
      if (writes) {
        for (const std::size_t r : readers) depend(v, r);
        if (readers.empty() && k > 0) depend(v, writer);
        readers.clear();
        writer = v;
      } else {
        depend(v, writer);
        readers.push_back(v);
      }
    }
  }
  return added;
}

// check() of `spec`, and the same passes without the race check: what the
// race check adds to check().
void report_race_share(const cudag::graph_spec& spec, int repeats, const char* what) {
  namespace cd = cudag::check_detail;
  // Alternated, one call of each a round: drift on a shared machine (page
  // cache, other processes, frequency) falls on both alike, and each round
  // gives its own ratio.
  std::vector<double> with, without, shares;
  for (int r = 0; r < repeats; ++r) {
    with.push_back(median_ms(1, [&] { cudag::check(spec); }));
    without.push_back(median_ms(1, [&] {
      const cd::spec_tree tree(spec);
      cd::check_parameter_declarations(tree);
      cd::check_node_rules(tree);
      cd::check_conditions_used(tree);
      cd::check_buffer_lifetimes(tree);
    }));
    shares.push_back(100.0 * (with.back() - without.back()) / without.back());
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // The race pass alone, on one tree: the node rules with and without its
  // collection, and its judging. The tree is built once, so the rounds vary
  // less than whole check() calls, whose allocations dominate their spread.
  const cd::spec_tree tree(spec);
  std::vector<double> pass;
  for (int r = 0; r < repeats; ++r) {
    const double plain = median_ms(1, [&] { cd::check_node_rules(tree); });
    const double collected = median_ms(1, [&] {
      cd::race_collector races(tree, {});
      cd::check_node_rules(tree, false, &races);
      (void)races.judge();
    });
    pass.push_back(collected - plain);
  }
  std::sort(shares.begin(), shares.end());
  std::printf("check %-28s %10.2f ms, without the race check %.2f ms: the race check adds %.1f%% "
              "(median of %d alternated rounds; rounds %.1f%% to %.1f%%)\n",
              what, median(with), median(without), median(shares), repeats, shares.front(), shares.back());
  std::printf("  the race pass alone (collecting beside the node rules, judging): %.2f ms, %.1f%% of "
              "check() without it\n", median(pass), 100.0 * median(pass) / median(without));
}

// Resets the peak resident set to the current one (Linux >= 4.0).
bool reset_peak() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// Extra peak memory of one call, in MiB (-1 where it cannot be measured).
double extra_peak_mib(const std::function<void()>& work) {
  if (!reset_peak()) return -1;
  const double before = status_mib("VmRSS");
  work();
  return status_mib("VmHWM") - before;
}

void report(const char* what, double ms, double extra_mib, double spec_mib) {
  std::printf("%-34s %10.2f ms", what, ms);
  if (extra_mib >= 0 && spec_mib > 0)
    std::printf("   peak +%7.1f MiB (%.2fx the spec)", extra_mib, extra_mib / spec_mib);
  std::printf("\n");
}

// check() with and without the race check, on `spec` with `buffers`
// pointer parameters each touched by 100 of its nodes.
void report_accessed(const cudag::graph_spec& spec, std::size_t buffers, int repeats, std::uint64_t seed) {
  cudag::graph_spec accessed = spec;
  const std::size_t touches = 100;
  const std::size_t added = add_buffer_accessors(accessed, buffers, touches, seed + 2);
  std::printf("race check: %zu pointer parameters, each touched by %zu nodes (a tenth writing), "
              "%zu ordering edges added\n", buffers, touches, added);
  report_race_share(accessed, repeats, "with those accesses");
}

}  // namespace

int main(int argc, char** argv) {
  bool races_only = false;
  for (bool more = true; more && argc > 1;) {
    const std::string flag = argv[1];
    if (flag == "--wall") use_wall_clock = true;
    else if (flag == "--races") races_only = true;
    else more = false;
    if (more) --argc, ++argv;
  }
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::size_t edges = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 400000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 7;
  const std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  const std::size_t buffers = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 10000;
  const std::size_t kernel_every = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 2;
  const bool time_redundant = argc > 7 ? std::atoi(argv[7]) != 0 : true;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it is measured

  // First, on a fresh heap: the small end.
  if (!races_only) {
    cudag::graph_spec chain = cudag::tools::kernel_chain(1000);
    constexpr int calls = 200;
    const double ms = median_ms(std::max(repeats, 11), [&] {
      for (int i = 0; i < calls; ++i) cudag::check(chain);
    });
    std::printf("%-34s %10.4f ms a call (median of batches of %d)\n", "check of a 1000-kernel chain",
                ms / calls, calls);
    const cudag::resolved_graph resolved = cudag::resolve(chain);  // as a builder gives it
    const double resolved_ms = median_ms(std::max(repeats, 11), [&] {
      for (int i = 0; i < calls; ++i) cudag::check(resolved);
    });
    std::printf("%-34s %10.4f ms a call (median of batches of %d)\n", "  the same, resolved",
                resolved_ms / calls, calls);
    // What lowering calls: check() with bindings, returning each graph's plan.
    float* x = nullptr;
    const cudag::binding binds[] = {cudag::bind("x", x), cudag::bind("n", 1)};
    const double plan_ms = median_ms(std::max(repeats, 11), [&] {
      for (int i = 0; i < calls; ++i) (void)cudag::check_detail::check_and_plan(chain, binds);
    });
    std::printf("%-34s %10.4f ms a call (median of batches of %d)\n",
                "check_and_plan of the same chain", plan_ms / calls, calls);
  }

  reset_peak();
  const double rss_before = status_mib("VmRSS");
  cudag::graph_spec spec = cudag::tools::random_dag(nodes, edges, seed);
  cudag::tools::make_kernel_nodes(spec, kernel_every);
  malloc_trim(0);
  const double spec_mib = status_mib("VmRSS") - rss_before;
  std::printf("random DAG: %zu nodes (every %zu a kernel), %zu edges, seed %llu, median %s of %d runs\n",
              nodes, kernel_every, edges, static_cast<unsigned long long>(seed),
              use_wall_clock ? "wall-clock time" : "thread CPU time", repeats);
  std::printf("spec: %.1f MiB resident\n", spec_mib);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::printf("process memory in huge pages: %.1f MiB (GLIBC_TUNABLES=%s)\n", huge_page_mib(),
              tunables ? tunables : "");

  if (races_only) {
    report_race_share(spec, repeats, "(kernels read x)");
    report_accessed(spec, buffers, repeats, seed);
    return 0;
  }
  std::size_t sink = 0;  // keeps results observable so no call is optimised away
  report("check", median_ms(repeats, [&] { cudag::check(spec); }),
         extra_peak_mib([&] { cudag::check(spec); }), spec_mib);
  report_race_share(spec, repeats, "(kernels read x)");
  report("topological_order",
         median_ms(repeats, [&] { sink += cudag::topological_order(spec).size(); }),
         extra_peak_mib([&] { sink += cudag::topological_order(spec).size(); }), spec_mib);
  // The same graph resolved once (as a builder's resolve() gives it): no
  // name looked up. The resolved rows (4 bytes a dependency and a node) are
  // counted in its size here; resolve() itself is timed too, on a copy.
  {
    report("resolve (a copy of the spec)",
           median_ms(repeats, [&] { sink += cudag::resolve(spec).size(); }),
           extra_peak_mib([&] { sink += cudag::resolve(spec).size(); }), spec_mib);
    cudag::resolved_graph resolved = cudag::resolve(std::move(spec));
    const double resolved_mib =
        spec_mib + static_cast<double>(resolved.dependency_indices().size() + resolved.size()) * 4 / (1 << 20);
    report("check (resolved)", median_ms(repeats, [&] { cudag::check(resolved); }),
           extra_peak_mib([&] { cudag::check(resolved); }), resolved_mib);
    report("topological_order (resolved)",
           median_ms(repeats, [&] { sink += cudag::topological_order(resolved).size(); }),
           extra_peak_mib([&] { sink += cudag::topological_order(resolved).size(); }), resolved_mib);
    spec = cudag::detail::resolved_parts::take(std::move(resolved)).spec;
  }
  report("analyze (no redundant edges)",
         median_ms(repeats, [&] { sink += cudag::analyze(spec, {.redundant_edges = false}).width; }),
         extra_peak_mib([&] { sink += cudag::analyze(spec, {.redundant_edges = false}).width; }),
         spec_mib);
  std::size_t redundant = 0;
  cudag::graph_analysis full;
  try {
    if (!time_redundant) throw cudag::error("not timed (redundant=0)");
    report("redundant_edges",
           median_ms(repeats, [&] { redundant = cudag::redundant_edges(spec).size(); }),
           extra_peak_mib([&] { redundant = cudag::redundant_edges(spec).size(); }), spec_mib);
    report("analyze (all)", median_ms(repeats, [&] { full = cudag::analyze(spec); }),
           extra_peak_mib([&] { full = cudag::analyze(spec); }), spec_mib);
  } catch (const cudag::error& e) {
    std::printf("redundant edges skipped: %s\n", e.what());
    full = cudag::analyze(spec, {.redundant_edges = false});
  }
  {
    cudag::graph_spec with_buffers = spec;
    cudag::tools::add_buffer_lifetimes(with_buffers, buffers, seed + 1);
    const std::string what = "check with " + std::to_string(buffers) + " buffers";
    report(what.c_str(), median_ms(repeats, [&] { cudag::check(with_buffers); }), -1, 0);
  }
  std::printf("critical path %zu nodes, width %zu, %zu redundant edges (%zu)\n",
              full.critical_path, full.width, redundant, sink % 2);
  report_accessed(spec, buffers, repeats, seed);
  return 0;
}
