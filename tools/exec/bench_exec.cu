// Benchmark of the spec path against hand-written CUDA graph API calls, side
// by side in one run: building a 1000-kernel chain, instantiating, rebinding
// one node's parameter, rebinding a parameter read by every node (against
// both raw paths and re-instantiation), the crossover between exec setters
// and whole-graph update, heap allocations on the rebind path, and replay.
//
//   bench_exec [nodes=1000] [repetitions=50]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"

// Counts heap allocations, to show the rebind path makes none.
static std::atomic<long> allocations{0};
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

__global__ void tick(float* x, float a, int n) {
  if (threadIdx.x < n) x[threadIdx.x] += a;
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    const cudaError_t code = (call);                                                  \
    if (code != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorName(code));                                           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

double median_us(int reps, const std::function<void()>& body) {
  std::vector<double> t;
  t.reserve(reps);
  body();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct raw_chain {
  cudaGraph_t graph = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<cudaKernelNodeParams> params;
  std::vector<std::vector<void*>> args;
  float* x;
  float a = 1.0f;
  int n = 32;

  raw_chain(int count, float* buffer) : x(buffer) {
    nodes.resize(count);
    params.resize(count);
    args.resize(count);
  }
  void build() {
    CHECK(cudaGraphCreate(&graph, 0));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      args[i] = {&x, &a, &n};
      cudaKernelNodeParams& p = params[i];
      p = {};
      p.func = reinterpret_cast<void*>(&tick);
      p.gridDim = dim3(1);
      p.blockDim = dim3(32);
      p.kernelParams = args[i].data();
      CHECK(cudaGraphAddKernelNode(&nodes[i], graph, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
    }
  }
  void destroy() {
    CHECK(cudaGraphDestroy(graph));
    graph = nullptr;
  }
};

/// A chain whose first `readers` nodes read parameter "p", the others "q".
cudag::graph_spec chain_spec(int count, int readers) {
  cudag::builder b("chain");
  auto p = b.param<float*>("p");
  auto q = b.param<float*>("q");
  std::vector<cudag::node_ref> refs;
  refs.reserve(count);
  for (int i = 0; i < count; ++i) {
    refs.push_back(b.kernel("k" + std::to_string(i), CUDAG_KERNEL(tick), cudag::launch(1, 32),
                            i < readers ? p : q, 1.0f, 32));
    if (i) b.edge(refs[i - 1], refs[i]);
  }
  return std::move(b).build();
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 50;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("bench_exec: no CUDA device; nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float *x1 = nullptr, *x2 = nullptr;
  CHECK(cudaMalloc(&x1, 32 * sizeof(float)));
  CHECK(cudaMalloc(&x2, 32 * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("device: %s, %d-node kernel chain, median of %d\n\n", prop.name, count, reps);
  std::printf("%-52s %12s %12s %8s\n", "operation", "raw us", "cudag us", "ratio");
  auto row = [](const char* what, double raw, double ours) {
    std::printf("%-52s %12.1f %12.1f %8.3f\n", what, raw, ours, ours / raw);
  };

  // ---- build: explicit cudaGraphAddKernelNode calls vs lowering a spec.
  raw_chain raw(count, x1);
  const double raw_build = median_us(reps, [&] { raw.build(); raw.destroy(); });
  const cudag::graph_spec all_read_p = chain_spec(count, count);
  const cudag::binding binds[] = {cudag::bind("p", x1), cudag::bind("q", x1)};
  const double ours_build = median_us(reps, [&] { auto l = cudag::lower(all_read_p, binds); });
  row("build graph (check + lower vs cudaGraphAdd*)", raw_build, ours_build);

  // ---- instantiate.
  raw.build();
  const double raw_inst = median_us(reps, [&] {
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, raw.graph, 0));
    CHECK(cudaGraphExecDestroy(e));
  });
  const double ours_inst = median_us(reps, [&] { auto e = cudag::instantiate(all_read_p, binds); });
  row("build + instantiate (cudag) vs instantiate (raw)", raw_inst, ours_inst);

  cudaGraphExec_t raw_exec;
  CHECK(cudaGraphInstantiate(&raw_exec, raw.graph, 0));

  // ---- rebind one parameter read by one node.
  cudag::exec one = cudag::instantiate(chain_spec(count, 1), binds);
  bool flip = false;
  const double raw_one = median_us(reps * 20, [&] {
    raw.x = (flip = !flip) ? x2 : x1;
    CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[0], &raw.params[0]));
  });
  const double ours_one = median_us(reps * 20, [&] { one.rebind("p", (flip = !flip) ? x2 : x1); });
  row("rebind 1 param read by 1 node", raw_one, ours_one);

  // ---- rebind a parameter read by every node.
  const double raw_setters = median_us(reps, [&] {
    raw.x = (flip = !flip) ? x2 : x1;
    for (int i = 0; i < count; ++i)
      CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[i], &raw.params[i]));
  });
  const double raw_update = median_us(reps, [&] {
    raw.x = (flip = !flip) ? x2 : x1;
    for (int i = 0; i < count; ++i) CHECK(cudaGraphKernelNodeSetParams(raw.nodes[i], &raw.params[i]));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(raw_exec, raw.graph, &info));
  });
  const double raw_reinst = median_us(reps, [&] {
    cudaGraphExecDestroy(raw_exec);
    CHECK(cudaGraphInstantiate(&raw_exec, raw.graph, 0));
  });
  cudag::exec all = cudag::instantiate(all_read_p, binds);
  const double ours_all = median_us(reps, [&] { all.rebind("p", (flip = !flip) ? x2 : x1); });
  const double best_raw = std::min(raw_setters, raw_update);
  row("rebind param read by all: raw exec setters", raw_setters, ours_all);
  row("rebind param read by all: raw template + ExecUpdate", raw_update, ours_all);
  row("rebind param read by all: raw re-instantiate", raw_reinst, ours_all);
  std::printf("  -> vs faster raw path: %.3fx; re-instantiate / cudag: %.1fx\n\n", ours_all / best_raw,
              raw_reinst / ours_all);

  // ---- crossover: k of the nodes read the parameter.
  std::printf("%-10s %16s %16s %10s\n", "readers", "setters us", "whole update us", "auto picks");
  for (int k : {1, 10, 50, 100, 200, 300, 400, 500, 600, 800, count}) {
    if (k > count) continue;
    cudag::exec e = cudag::instantiate(chain_spec(count, k), binds);
    e.set_rebind_policy(cudag::rebind_policy::node_setters);
    const double setters = median_us(reps, [&] { e.rebind("p", (flip = !flip) ? x2 : x1); });
    e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    const double whole = median_us(reps, [&] { e.rebind("p", (flip = !flip) ? x2 : x1); });
    e.set_rebind_policy(cudag::rebind_policy::automatic);
    const auto picked = e.rebind("p", (flip = !flip) ? x2 : x1);
    std::printf("%-10d %16.1f %16.1f %10s\n", k, setters, whole,
                picked == cudag::rebind_path::node_setters ? "setters" : "whole");
  }

  // ---- allocations on the rebind path after the first call.
  one.rebind("p", x1);
  all.rebind("p", x2);
  const long before = allocations.load();
  for (int i = 0; i < 100; ++i) {
    one.rebind("p", (flip = !flip) ? x2 : x1);
    all.rebind("p", (flip = !flip) ? x2 : x1);
  }
  std::printf("\nheap allocations in 200 rebinds after warm-up: %ld\n", allocations.load() - before);

  // ---- replay.
  const double raw_launch = median_us(reps, [&] {
    CHECK(cudaGraphLaunch(raw_exec, stream));
    CHECK(cudaStreamSynchronize(stream));
  });
  const double ours_launch = median_us(reps, [&] {
    all.launch(stream);
    all.synchronize(stream);
  });
  std::printf("\n");
  row("launch + synchronize", raw_launch, ours_launch);
  CHECK(cudaGetLastError());
  cudaGraphExecDestroy(raw_exec);
  raw.destroy();
  return 0;
}
