// bench_compare's builder specs and its CPU part (see host_side.hpp).
#include "host_side.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"
#include "../common/null_native_table.hpp"

namespace compare {

// ----------------------------------------------------------------- builder --
namespace {
template <class Reader>
cudag::resolved_graph spec_of(const dag& d, int readers, Reader&& reader) {
  cudag::builder b("compare");
  b.reserve(std::size_t(d.nodes), d.edges());  // the size is known, as in a program
  auto buf = b.param<float*>("buf");
  auto c = b.param<float>("c");
  std::vector<cudag::node_ref> nodes;
  nodes.reserve(std::size_t(d.nodes));
  for (int i = 0; i < d.nodes; ++i) {
    nodes.push_back(i < readers ? reader(b, buf, i)
                                : b.kernel(node_name(i), CUDAG_KERNEL(step), cudag::launch(1, threads), buf, i, c));
    // Each kernel writes its own slot of buf: beside the unordered writers
    // of the other shapes, no race, which the race check is told (a chain
    // orders them all and needs no declaration).
    if (d.kind != shape::chain) nodes.back().access(0, cudag::access_mode::concurrent);
    for (int k = 0; k < d.dep_count(i); ++k) b.edge(nodes[std::size_t(d.deps_of(i)[k])], nodes.back());
  }
  return std::move(b).resolve();
}
}  // namespace

cudag::resolved_graph builder_spec(const dag& d, int readers) {
  std::optional<cudag::param_handle<float>> a;
  return spec_of(d, readers, [&](cudag::builder& b, const cudag::param_handle<float*>& buf, int i) {
    if (!a) a = b.param<float>("a");
    return b.kernel(node_name(i), CUDAG_KERNEL(step), cudag::launch(1, threads), buf, i, *a);
  });
}

cudag::resolved_graph scalar_spec(const dag& d, int readers) {
  std::optional<cudag::param_handle<const float*>> a;
  return spec_of(d, readers, [&](cudag::builder& b, const cudag::param_handle<float*>& buf, int i) {
    if (!a) a = b.param<const float*>("a_ptr");
    return b.kernel(node_name(i), CUDAG_KERNEL(step_ptr), cudag::launch(1, threads), buf, i, *a);
  });
}

std::vector<cudag::binding> bindings(float* buf, float a, float c) {
  return {cudag::bind("buf", buf), cudag::bind("a", a), cudag::bind("c", c)};
}
std::vector<cudag::binding> scalar_bindings(float* buf, const float* a_ptr, float c) {
  return {cudag::bind("buf", buf), cudag::bind("a_ptr", a_ptr), cudag::bind("c", c)};
}

cudag::graph_spec while_spec() {
  cudag::builder b("while");
  auto buf = b.param<float*>("buf");
  auto counter = b.param<int*>("counter");
  auto limit = b.param<int>("limit");
  auto again = b.condition("again", /*default_value=*/1);
  auto reset = b.memset("reset", counter, 0u, 1);
  cudag::builder body("iteration");
  auto work = body.kernel("work", CUDAG_KERNEL(step), cudag::launch(1, threads), buf, 0, 1.0f);
  auto decide = body.kernel("decide", CUDAG_KERNEL(loop_decide), cudag::launch(1, 1), again, counter, limit);
  body.edge(work, decide);
  auto loop = b.while_loop("loop", again, std::move(body).build());
  loop.after(reset);
  return std::move(b).build();
}
std::vector<cudag::binding> while_bindings(float* buf, int* counter, int limit) {
  return {cudag::bind("buf", buf), cudag::bind("counter", counter), cudag::bind("limit", limit)};
}

// ---------------------------------------------------------------- CPU part --
namespace {

/// What a program writes by hand, through the same (null) table: a graph,
/// one kernel node per node with its dependencies' handles.
void hand_written(const dag& d, float* buf, std::vector<cudaGraphNode_t>& nodes) {
  const cudag::native::api_table& api = cudag::native::api();
  cudaGraph_t g = nullptr;
  (void)api.graph_create(&g, 0);
  nodes.assign(std::size_t(d.nodes), nullptr);
  float a = 1.0f;
  int slot = 0;
  void* args[] = {&buf, &slot, &a};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&step);
  p.gridDim = dim3(1);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  add_in_order(d, nodes, slot, [&](cudaGraphNode_t* out, const cudaGraphNode_t* deps, std::size_t count) {
    (void)api.add_kernel_node(out, g, deps, count, &p);
  });
  (void)api.graph_destroy(g);
}

}  // namespace

void run_cpu_part(results& out, bool quick, int repetitions) {
  const cudag::native::api_table table = bench_null::table();
  const cudag::native::api_table* previous = cudag::native::install_api(&table);
  float* buf = reinterpret_cast<float*>(std::uintptr_t{4096});
  const std::vector<cudag::binding> binds = bindings(buf, 1.0f, 1.0f);
  std::vector<int> sizes{10, 100, 1000, 10000, 100000};
  if (!quick) sizes.push_back(1000000);
  for (shape s : all_shapes)
    for (int n : sizes) {
      const dag d = make_dag(s, n);
      // Fewer rounds for the large graphs (the 10^6-node builder path takes
      // about a second on a small machine).
      const int rounds = n <= 1000 ? repetitions : n <= 10000 ? std::max(5, repetitions / 2)
                                                 : n <= 100000 ? 5 : 3;
      std::vector<cudaGraphNode_t> hand_nodes;
      std::optional<cudag::resolved_graph> built;
      const cudag::resolved_graph spec = builder_spec(d, n);
      std::optional<cudag::lowered_graph> lowered, path;
      const bool dsl = dsl_side::available(s, n);
      std::vector<bench::side> sides{
          {[&] { hand_written(d, buf, hand_nodes); }},
          {[&] { built.emplace(builder_spec(d, n)); }, [&] { built.reset(); }},
          {[&] { cudag::check(spec, binds); }},
          {[&] { lowered.emplace(cudag::lower(spec, binds)); }, [&] { lowered.reset(); }},
          {[&] { path.emplace(cudag::lower(builder_spec(d, n), binds)); }, [&] { path.reset(); }},
      };
      if (dsl) sides.push_back({[&] { dsl_side::lower(s, n, buf, 1.0f); }, [&] { dsl_side::release(); }});
      const std::vector<bench::summary> t = bench::interleaved(rounds, 1, sides);
      const char* key = shape_key(s);
      out.add("cpu", key, n, "hand-written calls (null table)", t[0]);
      out.add("cpu", key, n, "builder + resolve()", t[1]);
      out.add("cpu", key, n, "check()", t[2]);
      out.add("cpu", key, n, "lower() (incl. check)", t[3]);
      out.add("cpu", key, n, "builder path (builder + build + lower)", t[4]);
      if (dsl) out.add("cpu", key, n, "DSL lower", t[5]);
      if (lowered->nodes.size() != std::size_t(n) || path->nodes.size() != std::size_t(n)) {
        std::fprintf(stderr, "bench_compare: the CPU part lowered %zu nodes, expected %d\n", lowered->nodes.size(), n);
        std::exit(3);
      }
      lowered.reset();
      path.reset();
      dsl_side::release();
      std::fflush(stdout);
    }
  cudag::native::install_api(previous);
}

std::string run_dsl_compile_part(results& out, bool quick) {
#ifndef CUDAG_SOURCE_ROOT
  (void)out, (void)quick;
  return "built without the source tree's path";
#else
  const std::string root = CUDAG_SOURCE_ROOT;
  const std::string sizes = quick ? "32 128" : "32 128 512";
  const std::string command = "sh '" + root + "/bench/dsl/measure_compile.sh' '" + root + "' '" +
                              sizes + "' 'chain dag' g++ 1 full 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "could not run " + command;
  std::string text;
  char chunk[4096];
  while (std::fgets(chunk, sizeof chunk, pipe)) text += chunk;
  const int status = pclose(pipe);
  // Rows: | compiler | shape | what | nodes | wall s | user+sys s | peak MiB |
  int rows = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    char compiler[32], shape_name[32], what[32], clock[32];
    double cpu = 0;
    int nodes = 0, mib = 0;
    if (std::sscanf(line.c_str(), "| %31s | %31s | %31s | %d | %31s | %lf | %d |", compiler, shape_name,
                    what, &nodes, clock, &cpu, &mib) != 7)
      continue;
    // Wall clock as /usr/bin/time prints it: [h:]m:ss.cc
    double wall = 0;
    for (const char* c = clock; *c;) {
      char* next = nullptr;
      wall = wall * 60 + std::strtod(c, &next);
      c = *next == ':' ? next + 1 : next;
      if (next == c && *c) break;
    }
    bench::summary one;
    one.median = one.q1 = one.q3 = one.min = one.max = wall * 1e6;
    one.samples = 1;
    out.add("dsl compile", shape_name, nodes, std::string(compiler) + " wall (declare, instantiate, to_spec)",
            one);
    out.note("dsl compile: " + std::string(compiler) + ", " + shape_name + " of " + std::to_string(nodes) +
             " nodes: " + std::to_string(wall) + " s wall, " + std::to_string(cpu) + " s CPU, peak " +
             std::to_string(mib) + " MiB");
    ++rows;
  }
  if (status != 0 || rows == 0)
    return "bench/dsl/measure_compile.sh failed (exit status " + std::to_string(status) + "): " +
           text.substr(0, 400);
  return {};
#endif
}

}  // namespace compare
