// Benchmark of the spec path (run-time builder, check, lower, exec) against
// hand-written CUDA graph API calls and stream capture, side by side in one
// run, on a chain of one-block kernel nodes:
//   - build from nothing: builder calls + build() + lower() (which runs
//     check()) against hand-written cudaGraphCreate + cudaGraphAddKernelNode
//     calls, and against stream capture of the same launches;
//   - the same three followed by instantiation;
//   - rebinding one node's parameter, and a parameter read by every node
//     (against raw exec setters, packed setters, template setters +
//     cudaGraphExecUpdate, and re-instantiation);
//   - the crossover between exec setters and one whole-graph update;
//   - heap allocations on the rebind path; launch + synchronize.
// Every comparison is interleaved (rotated order per round) after warm-up;
// the table gives medians, quartiles and extremes. After timing, every graph
// that was timed is launched once and its buffers compared with the value
// computed on the CPU.
//
//   bench_exec [--json FILE] [nodes=1000] [repetitions=41]
//
// Exit codes: see bench_report.hpp (0: done, or no GPU; 1: CUDA error;
// 2: bad command line; 3: a timed graph computed a wrong result).
#include <cuda.h>  // CU_LAUNCH_PARAM_* for the packed-argument setters only

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"

#include "allocation_counter.hpp"
#include "bench_report.hpp"

namespace {

constexpr int elements = 32;  // threads of each one-block kernel, floats per buffer
constexpr int warmup = 3;

__global__ void tick(float* x, float a, int n) {
  if (threadIdx.x < n) x[threadIdx.x] += a;
}

#define CHECK(call) BENCH_CHECK(call)

const char* usage =
    "usage: bench_exec [--json FILE] [nodes=1000] [repetitions=41]\n"
    "Times the spec path (builder, check, lower, exec) against hand-written CUDA graph calls\n"
    "and stream capture on a chain of one-block kernels; verifies every timed graph.\n"
    "Exit: 0 done (or no GPU: nothing measured), 1 CUDA error, 2 bad command line,\n"
    "3 a timed graph computed a wrong result.\n";

/// What a program writes by hand, from nothing: a graph, and a chain of
/// kernel nodes whose handles it keeps.
cudaGraph_t hand_written_chain(int count, float* x) {
  cudaGraph_t graph = nullptr;
  CHECK(cudaGraphCreate(&graph, 0));
  std::vector<cudaGraphNode_t> nodes(std::size_t(count), nullptr);
  float a = 1.0f;
  int n = elements;
  void* args[] = {&x, &a, &n};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&tick);
  p.gridDim = dim3(1);
  p.blockDim = dim3(elements);
  p.kernelParams = args;
  for (int i = 0; i < count; ++i)
    CHECK(cudaGraphAddKernelNode(&nodes[std::size_t(i)], graph, i ? &nodes[std::size_t(i) - 1] : nullptr,
                                 i ? 1 : 0, &p));
  return graph;
}

/// The same launches recorded by stream capture.
cudaGraph_t captured_chain(int count, float* x, cudaStream_t stream) {
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < count; ++i) tick<<<1, elements, 0, stream>>>(x, 1.0f, elements);
  CHECK(cudaGetLastError());
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph));
  return graph;
}

/// A chain whose first `readers` nodes read parameter "p", the others "q":
/// the builder calls and build().
cudag::graph_spec chain_spec(int count, int readers) {
  cudag::builder b("chain");
  b.reserve(std::size_t(count), std::size_t(count));  // the size is known, as in a program
  auto p = b.param<float*>("p");
  auto q = b.param<float*>("q");
  std::optional<cudag::node_ref> previous;
  for (int i = 0; i < count; ++i) {
    std::string name = "k";
    name += std::to_string(i);
    cudag::node_ref k = b.kernel(std::move(name), CUDAG_KERNEL(tick), cudag::launch(1, elements),
                                 i < readers ? p : q, 1.0f, elements);
    if (previous) b.edge(*previous, k);
    previous = k;
  }
  return std::move(b).build();
}

std::vector<cudag::binding> bindings(float* p, float* q) { return {cudag::bind("p", p), cudag::bind("q", q)}; }

/// The kernel chain written by hand, kept for rebinding: per node its
/// parameters and its own array of argument pointers (to one x, a and n:
/// each setter copies the values), as a program that rebinds its nodes
/// keeps them; and the pointer each node of the template graph holds.
struct raw_chain {
  cudaGraph_t graph = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<cudaKernelNodeParams> params;
  std::vector<std::array<void*, 3>> args;
  float* x;
  float a = 1.0f;
  int n = elements;
  std::vector<float*> template_target;

  raw_chain(int count, float* buffer)
      : nodes(std::size_t(count)), params(std::size_t(count)), args(std::size_t(count)), x(buffer),
        template_target(std::size_t(count), buffer) {
    CHECK(cudaGraphCreate(&graph, 0));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      args[i] = {&x, &a, &n};
      cudaKernelNodeParams& p = params[i];
      p = {};
      p.func = reinterpret_cast<void*>(&tick);
      p.gridDim = dim3(1);
      p.blockDim = dim3(elements);
      p.kernelParams = args[i].data();
      CHECK(cudaGraphAddKernelNode(&nodes[i], graph, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
    }
  }
  ~raw_chain() { (void)cudaGraphDestroy(graph); }
};

/// Expected buffer contents after one launch, from the pointer each node
/// holds: every node adds 1 to each element of its buffer.
std::vector<bench::expectation> expected_from(const std::vector<float*>& targets,
                                              const std::vector<std::pair<const char*, float*>>& buffers) {
  std::vector<bench::expectation> out;
  for (const auto& [name, buffer] : buffers) {
    float sum = 0;
    for (float* t : targets) sum += t == buffer ? 1.0f : 0.0f;
    out.push_back({name, buffer, sum});
  }
  return out;
}

std::vector<float*> reader_targets(int count, int readers, float* p, float* q) {
  std::vector<float*> t(std::size_t(count), q);
  for (int i = 0; i < readers && i < count; ++i) t[std::size_t(i)] = p;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  bench::program_name = "bench_exec";
  const bench::command_line cl = bench::parse_command_line(argc, argv, usage);
  const int count = bench::positive_argument(cl, 0, 1000, "nodes");
  const int reps = bench::positive_argument(cl, 1, 41, "repetitions");
  if (cl.positional.size() > 2) {
    std::fprintf(stderr, "bench_exec: too many arguments\n%s", usage);
    return 2;
  }
  if (bench::no_gpu(cl)) return 0;

  bench::report report("bench_exec", "cudag", "raw");
  report.describe_machine(cl);
  report.setting("nodes", std::to_string(count));
  report.setting("repetitions", std::to_string(reps));
  report.setting("warmup", std::to_string(warmup));
  report.setting("graph", "\"a chain of one-block kernel nodes tick(float* x, float a, int n), 32 threads\"");
  report.print_header();

  float *x1 = nullptr, *x2 = nullptr, *x3 = nullptr;
  CHECK(cudaMalloc(&x1, elements * sizeof(float)));
  CHECK(cudaMalloc(&x2, elements * sizeof(float)));
  CHECK(cudaMalloc(&x3, elements * sizeof(float)));
  const std::vector<std::pair<const char*, float*>> buffers{{"x1", x1}, {"x2", x2}, {"x3", x3}};
  auto other = [&](float* current) { return current == x1 ? x2 : x1; };
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const float whole = float(count);  // every node adds 1

  auto launch_exec = [](cudaGraphExec_t e) {
    return [e](cudaStream_t s) { CHECK(cudaGraphLaunch(e, s)); };
  };
  auto launch_graph = [](cudaGraph_t g) {
    return [g](cudaStream_t s) {
      cudaGraphExec_t e = nullptr;
      CHECK(cudaGraphInstantiate(&e, g, 0));
      CHECK(cudaGraphLaunch(e, s));
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaGraphExecDestroy(e));
    };
  };
  auto cudag_launch = [](cudag::exec& e) {
    return [&e](cudaStream_t s) { e.launch(s); };
  };
  // Every executable graph is launched once before its rebinds are timed:
  // the driver's cost of changing a node differs between an executable graph
  // that has never been launched and one that has (up to 2x per node), and
  // a program rebinds between replays.
  auto launched_once = [&](const std::function<void(cudaStream_t)>& launch) {
    launch(stream);
    CHECK(cudaStreamSynchronize(stream));
  };

  // ---- build from nothing: to a cudaGraph_t. cudag: builder calls,
  // build(), bindings, lower() (which runs check(spec, bindings) first).
  {
    cudaGraph_t hand = nullptr, captured = nullptr;
    std::optional<cudag::lowered_graph> lowered;
    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] { hand = hand_written_chain(count, x1); },
          [&] { if (hand) CHECK(cudaGraphDestroy(hand)); hand = nullptr; }},
         {[&] { captured = captured_chain(count, x1, stream); },
          [&] { if (captured) CHECK(cudaGraphDestroy(captured)); captured = nullptr; }},
         {[&] { lowered.emplace(cudag::lower(chain_spec(count, count), bindings(x1, x1))); },
          [&] { lowered.reset(); }}});
    report.add({"build graph from nothing (cudag: builder + build() + check + lower)",
                "cudaGraphCreate + cudaGraphAddKernelNode per node", t[0], t[2], ""});
    report.add({"build graph from nothing (cudag: builder + build() + check + lower)",
                "stream capture: BeginCapture, launches, EndCapture", t[1], t[2], ""});
    const std::vector<bench::expectation> all_x1{{"x1", x1, whole}};
    report.verified(bench::verify("build: hand-written graph", launch_graph(hand), stream, all_x1, elements));
    report.verified(bench::verify("build: captured graph", launch_graph(captured), stream, all_x1, elements));
    report.verified(
        bench::verify("build: cudag lowered graph", launch_graph(lowered->graph.get()), stream, all_x1, elements));
    CHECK(cudaGraphDestroy(hand));
    CHECK(cudaGraphDestroy(captured));
  }

  // ---- build + instantiate, from nothing.
  {
    cudaGraph_t hand_graph = nullptr, captured_graph = nullptr;
    cudaGraphExec_t hand = nullptr, captured = nullptr;
    std::optional<cudag::exec> ours;
    auto release = [](cudaGraph_t& g, cudaGraphExec_t& e) {
      if (e) CHECK(cudaGraphExecDestroy(e));
      if (g) CHECK(cudaGraphDestroy(g));
      e = nullptr;
      g = nullptr;
    };
    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] {
            hand_graph = hand_written_chain(count, x1);
            CHECK(cudaGraphInstantiate(&hand, hand_graph, 0));
          },
          [&] { release(hand_graph, hand); }},
         {[&] {
            captured_graph = captured_chain(count, x1, stream);
            CHECK(cudaGraphInstantiate(&captured, captured_graph, 0));
          },
          [&] { release(captured_graph, captured); }},
         {[&] { ours.emplace(cudag::instantiate(chain_spec(count, count), bindings(x1, x1))); },
          [&] { ours.reset(); }}});
    report.add({"build + instantiate from nothing (cudag: builder + build() + instantiate())",
                "cudaGraphAddKernelNode per node + cudaGraphInstantiate", t[0], t[2], ""});
    report.add({"build + instantiate from nothing (cudag: builder + build() + instantiate())",
                "stream capture + cudaGraphInstantiate", t[1], t[2], ""});
    const std::vector<bench::expectation> all_x1{{"x1", x1, whole}};
    report.verified(bench::verify("build + instantiate: hand-written", launch_exec(hand), stream, all_x1, elements));
    report.verified(bench::verify("build + instantiate: captured", launch_exec(captured), stream, all_x1, elements));
    report.verified(bench::verify("build + instantiate: cudag", cudag_launch(*ours), stream, all_x1, elements));
    release(hand_graph, hand);
    release(captured_graph, captured);
  }

  // The hand-written chain kept for rebinding, and its executable graph.
  raw_chain raw(count, x1);
  cudaGraphExec_t raw_exec = nullptr;
  CHECK(cudaGraphInstantiate(&raw_exec, raw.graph, 0));
  std::vector<float*> exec_target(std::size_t(count), x1);  // what each node of raw_exec holds
  auto raw_expected = [&](const std::vector<float*>& targets) { return expected_from(targets, buffers); };

  // ---- rebind one parameter read by one node. cudag: node 0 reads p, the
  // others q (bound to x3). Each rebind changes the value the exec holds.
  cudag::exec one = cudag::instantiate(chain_spec(count, 1), bindings(x1, x3));
  float* one_p = x1;
  launched_once(launch_exec(raw_exec));
  launched_once(cudag_launch(one));
  {
    const std::vector<bench::summary> t = bench::interleaved(
        reps * 20, warmup,
        {{[&] {
           raw.x = other(exec_target[0]);
           CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[0], &raw.params[0]));
           exec_target[0] = raw.x;
         }},
         {[&] {
           one_p = other(one_p);
           one.rebind("p", one_p);
         }}});
    report.add({"rebind 1 parameter read by 1 node", "one cudaGraphExecKernelNodeSetParams", t[0], t[1], ""});
    report.verified(bench::verify("rebind 1 node: raw exec", launch_exec(raw_exec), stream,
                                  raw_expected(exec_target), elements));
    report.verified(bench::verify("rebind 1 node: cudag exec", cudag_launch(one), stream,
                                  raw_expected(reader_targets(count, 1, one_p, x3)), elements));
  }

  // ---- rebind a parameter read by every node: cudag against four raw
  // paths, all five interleaved.
  cudag::exec all = cudag::instantiate(chain_spec(count, count), bindings(x1, x3));
  float* all_p = x1;
  {
    // Start from one value in every node of raw_exec and of the template.
    raw.x = x1;
    for (int i = 0; i < count; ++i) {
      CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[std::size_t(i)], &raw.params[std::size_t(i)]));
      exec_target[std::size_t(i)] = x1;
    }
    // The same setters with the arguments packed in one buffer per node ('extra').
    const std::size_t nodes = std::size_t(count);
    std::vector<std::array<unsigned char, 16>> packed(nodes);
    std::size_t packed_size = 16;
    std::vector<std::array<void*, 5>> extras(nodes);
    std::vector<cudaKernelNodeParams> packed_params(raw.params);
    for (std::size_t i = 0; i < std::size_t(count); ++i) {
      extras[i] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed[i].data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
      packed_params[i].kernelParams = nullptr;
      packed_params[i].extra = extras[i].data();
    }
    // Re-instantiation replaces an executable graph of its own.
    cudaGraphExec_t reinstantiated = nullptr;
    CHECK(cudaGraphInstantiate(&reinstantiated, raw.graph, 0));
    std::vector<float*> reinstantiated_target = raw.template_target;
    launched_once(cudag_launch(all));

    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] {  // 0: cudag
           all_p = other(all_p);
           all.rebind("p", all_p);
         }},
         {[&] {  // 1: raw exec setters
           raw.x = other(exec_target[0]);
           for (std::size_t i = 0; i < std::size_t(count); ++i)
             CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[i], &raw.params[i]));
           std::fill(exec_target.begin(), exec_target.end(), raw.x);
         }},
         {[&] {  // 2: raw exec setters, packed arguments
           float* target = other(exec_target[0]);
           for (std::size_t i = 0; i < std::size_t(count); ++i) {
             std::memcpy(packed[i].data(), &target, sizeof target);
             std::memcpy(packed[i].data() + 8, &raw.a, 4);
             std::memcpy(packed[i].data() + 12, &raw.n, 4);
             CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[i], &packed_params[i]));
           }
           std::fill(exec_target.begin(), exec_target.end(), target);
         }},
         {[&] {  // 3: raw template setters + one cudaGraphExecUpdate
           raw.x = other(exec_target[0]);
           for (std::size_t i = 0; i < std::size_t(count); ++i)
             CHECK(cudaGraphKernelNodeSetParams(raw.nodes[i], &raw.params[i]));
           cudaGraphExecUpdateResultInfo info{};
           CHECK(cudaGraphExecUpdate(raw_exec, raw.graph, &info));
           std::fill(raw.template_target.begin(), raw.template_target.end(), raw.x);
           std::fill(exec_target.begin(), exec_target.end(), raw.x);
         }},
         {[&] {  // 4: raw re-instantiation of the template graph
           CHECK(cudaGraphExecDestroy(reinstantiated));
           CHECK(cudaGraphInstantiate(&reinstantiated, raw.graph, 0));
           reinstantiated_target = raw.template_target;
         }}});
    const char* op = "rebind a parameter read by every node";
    report.add({op, "cudaGraphExecKernelNodeSetParams on every node", t[1], t[0], ""});
    report.add({op, "same, arguments packed ('extra')", t[2], t[0], ""});
    report.add({op, "cudaGraphKernelNodeSetParams on every node + cudaGraphExecUpdate", t[3], t[0], ""});
    report.add({op, "faster of the two unpacked raw paths", t[1].median <= t[3].median ? t[1] : t[3], t[0], ""});
    report.add({op, "re-instantiation (cudaGraphExecDestroy + cudaGraphInstantiate)", t[4], t[0], ""});
    report.verified(bench::verify("rebind all: cudag exec", cudag_launch(all), stream,
                                  raw_expected(reader_targets(count, count, all_p, x3)), elements));
    report.verified(bench::verify("rebind all: raw exec (setters, packed setters, update)",
                                  launch_exec(raw_exec), stream, raw_expected(exec_target), elements));
    report.verified(bench::verify("rebind all: re-instantiated raw exec", launch_exec(reinstantiated), stream,
                                  raw_expected(reinstantiated_target), elements));
    CHECK(cudaGraphExecDestroy(reinstantiated));
  }

  // ---- replay.
  {
    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] {
           CHECK(cudaGraphLaunch(raw_exec, stream));
           CHECK(cudaStreamSynchronize(stream));
         }},
         {[&] {
           all.launch(stream);
           all.synchronize(stream);
         }}});
    report.add({"launch + synchronize the chain", "cudaGraphLaunch + cudaStreamSynchronize", t[0], t[1], ""});
    report.verified(bench::verify("replay: raw exec", launch_exec(raw_exec), stream, raw_expected(exec_target),
                                  elements));
    report.verified(bench::verify("replay: cudag exec", cudag_launch(all), stream,
                                  raw_expected(reader_targets(count, count, all_p, x3)), elements));
  }
  report.print_table();

  // ---- crossover: the first k nodes read the parameter; exec setters
  // against one whole-graph update, both through cudag.
  std::printf("| readers | exec setters us median [q1, q3] | whole-graph update us median [q1, q3] | "
              "automatic policy picks |\n| ---: | ---: | ---: | --- |\n");
  std::string crossover = "[";
  for (int k : {1, 10, 50, 100, 200, 300, 400, 500, 600, 800, count}) {
    if (k > count) continue;
    cudag::exec e = cudag::instantiate(chain_spec(count, k), bindings(x1, x3));
    float* e_p = x1;
    launched_once(cudag_launch(e));
    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] {
           e.set_rebind_policy(cudag::rebind_policy::node_setters);
           e_p = other(e_p);
           e.rebind("p", e_p);
         }},
         {[&] {
           e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
           e_p = other(e_p);
           e.rebind("p", e_p);
         }}});
    e.set_rebind_policy(cudag::rebind_policy::automatic);
    e_p = other(e_p);
    const bool setters = e.rebind("p", e_p) == cudag::rebind_path::node_setters;
    std::printf("| %d | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %s |\n", k, t[0].median, t[0].q1, t[0].q3,
                t[1].median, t[1].q1, t[1].q3, setters ? "setters" : "whole");
    crossover += std::string(crossover.size() > 1 ? ",\n    " : "\n    ") + "{\"readers\": " +
                 std::to_string(k) + ", \"exec_setters_us\": " + bench::json_summary(t[0]) +
                 ", \"whole_graph_update_us\": " + bench::json_summary(t[1]) + ", \"automatic_picks\": " +
                 bench::json_string(setters ? "setters" : "whole") + "}";
    report.verified(bench::verify("crossover, " + std::to_string(k) + " readers: cudag exec", cudag_launch(e),
                                  stream, raw_expected(reader_targets(count, k, e_p, x3)), elements));
  }
  report.extra("crossover", crossover + "\n  ]");

  // ---- heap allocations on the rebind path after warm-up.
  for (int i = 0; i < 2; ++i) {
    one.rebind("p", one_p = other(one_p));
    all.rebind("p", all_p = other(all_p));
  }
  const long before = heap_allocations();
  for (int i = 0; i < 100; ++i) {
    one.rebind("p", one_p = other(one_p));
    all.rebind("p", all_p = other(all_p));
  }
  const long allocations = heap_allocations() - before;
  std::printf("\nheap allocations in 200 rebinds after warm-up: %ld\n\n", allocations);
  report.extra("heap_allocations_in_200_rebinds", std::to_string(allocations));
  report.verified(bench::verify("after the allocation count: cudag exec (1 reader)", cudag_launch(one), stream,
                                raw_expected(reader_targets(count, 1, one_p, x3)), elements));
  report.verified(bench::verify("after the allocation count: cudag exec (every node)", cudag_launch(all), stream,
                                raw_expected(reader_targets(count, count, all_p, x3)), elements));

  report.print_verified();
  report.write_json(cl);
  CHECK(cudaGraphExecDestroy(raw_exec));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(x1));
  CHECK(cudaFree(x2));
  CHECK(cudaFree(x3));
  return 0;
}
