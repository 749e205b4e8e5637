// Benchmark of the spec path against hand-written CUDA graph API calls, side
// by side in one run: building a 1000-kernel chain, instantiating, rebinding
// one node's parameter, rebinding a parameter read by every node (against
// both raw paths and re-instantiation), the crossover between exec setters
// and whole-graph update, heap allocations on the rebind path, and replay.
//
//   bench_exec [nodes=1000] [repetitions=50]
#include <cuda.h>

#include <algorithm>
#include <array>
#include <cstring>
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

#include "allocation_counter.hpp"

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

struct pair_us {
  double raw, ours;
};

/// Medians of two interleaved measurements (raw, ours, raw, ours, ...), so
/// that drift of the machine affects both alike.
pair_us compare_us(int reps, const std::function<void()>& raw, const std::function<void()>& ours) {
  std::vector<double> a, b;
  raw();
  ours();
  auto time = [](const std::function<void()>& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  };
  for (int r = 0; r < reps; ++r) {
    if (r % 2) {
      a.push_back(time(raw));
      b.push_back(time(ours));
    } else {
      b.push_back(time(ours));
      a.push_back(time(raw));
    }
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {a[a.size() / 2], b[b.size() / 2]};
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
  const cudag::graph_spec all_read_p = chain_spec(count, count);
  const cudag::binding binds[] = {cudag::bind("p", x1), cudag::bind("q", x1)};
  const pair_us build = compare_us(
      reps, [&] { raw.build(); raw.destroy(); }, [&] { auto l = cudag::lower(all_read_p, binds); });
  row("build graph (check + lower vs cudaGraphAdd*)", build.raw, build.ours);

  // ---- build + instantiate.
  const pair_us inst = compare_us(
      reps,
      [&] {
        raw.build();
        cudaGraphExec_t e;
        CHECK(cudaGraphInstantiate(&e, raw.graph, 0));
        CHECK(cudaGraphExecDestroy(e));
        raw.destroy();
      },
      [&] { auto e = cudag::instantiate(all_read_p, binds); });
  row("build + instantiate", inst.raw, inst.ours);

  raw.build();
  cudaGraphExec_t raw_exec;
  CHECK(cudaGraphInstantiate(&raw_exec, raw.graph, 0));

  // ---- rebind one parameter read by one node.
  cudag::exec one = cudag::instantiate(chain_spec(count, 1), binds);
  bool flip = false;
  const pair_us single = compare_us(
      reps * 20,
      [&] {
        raw.x = (flip = !flip) ? x2 : x1;
        CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[0], &raw.params[0]));
      },
      [&] { one.rebind("p", (flip = !flip) ? x2 : x1); });
  row("rebind 1 param read by 1 node", single.raw, single.ours);

  // ---- rebind a parameter read by every node.
  cudag::exec all = cudag::instantiate(all_read_p, binds);
  auto ours_all = [&] { all.rebind("p", (flip = !flip) ? x2 : x1); };
  const pair_us setters = compare_us(
      reps,
      [&] {
        raw.x = (flip = !flip) ? x2 : x1;
        for (int i = 0; i < count; ++i)
          CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[i], &raw.params[i]));
      },
      ours_all);
  const pair_us update = compare_us(
      reps,
      [&] {
        raw.x = (flip = !flip) ? x2 : x1;
        for (int i = 0; i < count; ++i)
          CHECK(cudaGraphKernelNodeSetParams(raw.nodes[i], &raw.params[i]));
        cudaGraphExecUpdateResultInfo info;
        CHECK(cudaGraphExecUpdate(raw_exec, raw.graph, &info));
      },
      ours_all);
  const pair_us reinst = compare_us(
      reps,
      [&] {
        cudaGraphExecDestroy(raw_exec);
        CHECK(cudaGraphInstantiate(&raw_exec, raw.graph, 0));
      },
      ours_all);
  // The same setters with arguments packed in one buffer ('extra'): does
  // the driver's per-argument work dominate the setter?
  std::vector<std::array<unsigned char, 16>> packed(count);
  std::size_t packed_size = 16;
  std::vector<std::array<void*, 5>> extras(count);
  std::vector<cudaKernelNodeParams> packed_params(raw.params);
  for (int i = 0; i < count; ++i) {
    extras[i] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed[i].data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                 &packed_size, CU_LAUNCH_PARAM_END};
    packed_params[i].kernelParams = nullptr;
    packed_params[i].extra = extras[i].data();
  }
  const pair_us packed_setters = compare_us(
      reps,
      [&] {
        float* target = (flip = !flip) ? x2 : x1;
        for (int i = 0; i < count; ++i) {
          std::memcpy(packed[i].data(), &target, sizeof target);
          std::memcpy(packed[i].data() + 8, &raw.a, 4);
          std::memcpy(packed[i].data() + 12, &raw.n, 4);
          CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, raw.nodes[i], &packed_params[i]));
        }
      },
      ours_all);
  row("rebind param read by all: raw exec setters", setters.raw, setters.ours);
  row("rebind param read by all: raw setters, packed args", packed_setters.raw, packed_setters.ours);
  row("rebind param read by all: raw template + ExecUpdate", update.raw, update.ours);
  row("rebind param read by all: raw re-instantiate", reinst.raw, reinst.ours);
  const double best_raw = std::min(setters.raw, update.raw);
  const double ours_median = (setters.ours + update.ours) / 2;
  std::printf("  -> vs faster raw path: %.3fx; re-instantiate / cudag: %.1fx\n\n",
              ours_median / best_raw, reinst.raw / reinst.ours);

  // ---- crossover: k of the nodes read the parameter.
  std::printf("%-10s %16s %16s %10s\n", "readers", "setters us", "whole update us", "auto picks");
  for (int k : {1, 10, 50, 100, 200, 300, 400, 500, 600, 800, count}) {
    if (k > count) continue;
    cudag::exec e = cudag::instantiate(chain_spec(count, k), binds);
    const pair_us paths = compare_us(
        reps,
        [&] {
          e.set_rebind_policy(cudag::rebind_policy::node_setters);
          e.rebind("p", (flip = !flip) ? x2 : x1);
        },
        [&] {
          e.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
          e.rebind("p", (flip = !flip) ? x2 : x1);
        });
    const double setters = paths.raw, whole = paths.ours;
    e.set_rebind_policy(cudag::rebind_policy::automatic);
    const auto picked = e.rebind("p", (flip = !flip) ? x2 : x1);
    std::printf("%-10d %16.1f %16.1f %10s\n", k, setters, whole,
                picked == cudag::rebind_path::node_setters ? "setters" : "whole");
  }

  // ---- allocations on the rebind path after the first call.
  one.rebind("p", x1);
  all.rebind("p", x2);
  const long before = heap_allocations();
  for (int i = 0; i < 100; ++i) {
    one.rebind("p", (flip = !flip) ? x2 : x1);
    all.rebind("p", (flip = !flip) ? x2 : x1);
  }
  std::printf("\nheap allocations in 200 rebinds after warm-up: %ld\n", heap_allocations() - before);

  // ---- replay.
  const pair_us replay = compare_us(
      reps,
      [&] {
        CHECK(cudaGraphLaunch(raw_exec, stream));
        CHECK(cudaStreamSynchronize(stream));
      },
      [&] {
        all.launch(stream);
        all.synchronize(stream);
      });
  std::printf("\n");
  row("launch + synchronize", replay.raw, replay.ours);
  CHECK(cudaGetLastError());
  cudaGraphExecDestroy(raw_exec);
  raw.destroy();
  return 0;
}
