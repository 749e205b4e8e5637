// Which native path adds kernel nodes cheapest: a chain of one kernel built
// through the runtime's calls (host stub, cudaKernel_t, packed argument
// buffer, the generic cudaGraphAddNode, edges added afterwards in one
// call), through the driver's entry points (the function resolved once, as
// a CUkernel, resolved on every call), by stream capture, and through
// cudag's per-kind table within a same_device_batch. Then the executable
// graph's kernel setter and empty nodes, runtime against driver. Every
// graph is launched once and its effect checked before anything is timed;
// the sides are interleaved, medians of `rounds` after 3 warm-up rounds.
// The figures behind native::same_device_batch (docs/benchmarks.md,
// "Native paths").
//
//   bench_native_paths [nodes=1000] [rounds=41]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cudag/handles.hpp"
#include "cudag/native_nodes.hpp"

namespace {

#define CHECK(call)                                                                        \
  do {                                                                                     \
    const cudaError_t code_ = (call);                                                      \
    if (code_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(code_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
#define CHECK_DRIVER(call)                                                                 \
  do {                                                                                     \
    const CUresult code_ = (call);                                                         \
    if (code_ != CUDA_SUCCESS) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, int(code_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

/// Adds `a` to x[0] once a launch: a chain of n nodes leaves n * a there.
__global__ void tick(float* x, float a, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && n > 0) x[0] += a;
}

/// The driver's `name` as cuda.h declares it (CUDA 13's generic add, with
/// edge data, came after 12.0).
template <class F>
F driver_function(const char* name, unsigned version = 12000) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  CHECK(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || !fn) {
    std::fprintf(stderr, "bench_native_paths: the driver has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(fn);
}

struct driver_api {
  decltype(&cuGraphAddKernelNode) add_kernel = driver_function<decltype(add_kernel)>("cuGraphAddKernelNode");
  decltype(&cuGraphAddNode) add_node = driver_function<decltype(add_node)>("cuGraphAddNode", 13000);
  decltype(&cuGraphAddEmptyNode) add_empty = driver_function<decltype(add_empty)>("cuGraphAddEmptyNode");
  decltype(&cuGraphExecKernelNodeSetParams) exec_set_kernel =
      driver_function<decltype(exec_set_kernel)>("cuGraphExecKernelNodeSetParams");
  decltype(&cuCtxGetCurrent) current_context = driver_function<decltype(current_context)>("cuCtxGetCurrent");
};

/// A way of building the chain, its times, and whether its graph was checked.
struct side {
  std::string name;
  std::function<cudaGraph_t()> build;
  std::vector<double> us;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 41;
  if (n < 2 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_native_paths [nodes >= 2] [rounds >= 1]\n");
    return 2;
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const driver_api drv;

  float* x = nullptr;
  CHECK(cudaMalloc(&x, sizeof(float)));
  float a = 1.0f;
  int count = 4096;
  void* args[] = {&x, &a, &count};
  struct alignas(8) packed_args {
    float* x;
    float a;
    int n;
  } packed{x, a, count};
  std::size_t packed_size = sizeof(packed);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  const void* stub = reinterpret_cast<const void*>(&tick);
  cudaKernel_t kernel = nullptr;
  CHECK(cudaGetKernel(&kernel, stub));
  cudaFunction_t function = nullptr;
  CHECK(cudaGetFuncBySymbol(&function, stub));
  CUcontext context = nullptr;
  CHECK_DRIVER(drv.current_context(&context));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const auto runtime_params = [&](const void* f) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(f);
    p.gridDim = dim3(1);
    p.blockDim = dim3(256);
    p.kernelParams = args;
    return p;
  };
  const auto driver_params = [&] {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 256;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
  };
  // Each side builds the whole chain: its graph, one node per step, each
  // after the one before.
  const auto runtime_chain = [&](const cudaKernelNodeParams& p) {
    cudaGraph_t g = nullptr;
    CHECK(cudaGraphCreate(&g, 0));
    std::vector<cudaGraphNode_t> nodes(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      CHECK(cudaGraphAddKernelNode(&nodes[std::size_t(i)], g, i ? &nodes[std::size_t(i) - 1] : nullptr,
                                   i ? 1 : 0, &p));
    return g;
  };
  const auto driver_chain = [&](auto&& params_of_node) {
    cudaGraph_t g = nullptr;
    CHECK(cudaGraphCreate(&g, 0));
    std::vector<CUgraphNode> nodes(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const CUDA_KERNEL_NODE_PARAMS p = params_of_node();
      CHECK_DRIVER(drv.add_kernel(&nodes[std::size_t(i)], reinterpret_cast<CUgraph>(g),
                                  i ? &nodes[std::size_t(i) - 1] : nullptr, i ? 1 : 0, &p));
    }
    return g;
  };

  std::vector<side> sides;
  sides.push_back({"runtime cudaGraphAddKernelNode, host stub", [&] { return runtime_chain(runtime_params(stub)); }, {}});
  sides.push_back({"runtime cudaGraphAddKernelNode, cudaKernel_t",
                   [&] { return runtime_chain(runtime_params(reinterpret_cast<const void*>(kernel))); }, {}});
  sides.push_back({"runtime cudaGraphAddKernelNode, packed arguments", [&] {
                     cudaKernelNodeParams p = runtime_params(stub);
                     p.kernelParams = nullptr;
                     p.extra = extra;
                     return runtime_chain(p);
                   }, {}});
  sides.push_back({"runtime cudaGraphAddNode (generic)", [&] {
                     cudaGraph_t g = nullptr;
                     CHECK(cudaGraphCreate(&g, 0));
                     std::vector<cudaGraphNode_t> nodes(static_cast<std::size_t>(n));
                     cudaGraphNodeParams p{};
                     p.type = cudaGraphNodeTypeKernel;
                     p.kernel.func = const_cast<void*>(stub);
                     p.kernel.gridDim = dim3(1);
                     p.kernel.blockDim = dim3(256);
                     p.kernel.kernelParams = args;
                     for (int i = 0; i < n; ++i)
                       CHECK(cudaGraphAddNode(&nodes[std::size_t(i)], g, i ? &nodes[std::size_t(i) - 1] : nullptr,
                                              nullptr, i ? 1 : 0, &p));
                     return g;
                   }, {}});
  sides.push_back({"runtime, nodes first, then cudaGraphAddDependencies once", [&] {
                     cudaGraph_t g = nullptr;
                     CHECK(cudaGraphCreate(&g, 0));
                     std::vector<cudaGraphNode_t> nodes(static_cast<std::size_t>(n));
                     const cudaKernelNodeParams p = runtime_params(stub);
                     for (int i = 0; i < n; ++i) CHECK(cudaGraphAddKernelNode(&nodes[std::size_t(i)], g, nullptr, 0, &p));
                     CHECK(cudaGraphAddDependencies(g, nodes.data(), nodes.data() + 1, nullptr, std::size_t(n) - 1));
                     return g;
                   }, {}});
  sides.push_back({"driver cuGraphAddKernelNode, CUfunction resolved once", [&] {
                     return driver_chain([&] {
                       CUDA_KERNEL_NODE_PARAMS p = driver_params();
                       p.func = reinterpret_cast<CUfunction>(function);
                       return p;
                     });
                   }, {}});
  sides.push_back({"driver, CUfunction, packed arguments", [&] {
                     return driver_chain([&] {
                       CUDA_KERNEL_NODE_PARAMS p = driver_params();
                       p.func = reinterpret_cast<CUfunction>(function);
                       p.kernelParams = nullptr;
                       p.extra = extra;
                       return p;
                     });
                   }, {}});
  sides.push_back({"driver, CUkernel and its context", [&] {
                     return driver_chain([&] {
                       CUDA_KERNEL_NODE_PARAMS p = driver_params();
                       p.kern = reinterpret_cast<CUkernel>(kernel);
                       p.ctx = context;
                       return p;
                     });
                   }, {}});
  sides.push_back({"driver, CUfunction resolved on every call", [&] {
                     return driver_chain([&] {
                       cudaFunction_t f = nullptr;
                       CHECK(cudaGetFuncBySymbol(&f, stub));
                       CUDA_KERNEL_NODE_PARAMS p = driver_params();
                       p.func = reinterpret_cast<CUfunction>(f);
                       return p;
                     });
                   }, {}});
  sides.push_back({"driver cuGraphAddNode (generic), CUfunction", [&] {
                     cudaGraph_t g = nullptr;
                     CHECK(cudaGraphCreate(&g, 0));
                     std::vector<CUgraphNode> nodes(static_cast<std::size_t>(n));
                     CUgraphNodeParams p{};
                     p.type = CU_GRAPH_NODE_TYPE_KERNEL;
                     p.kernel.func = reinterpret_cast<CUfunction>(function);
                     p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
                     p.kernel.blockDimX = 256;
                     p.kernel.blockDimY = p.kernel.blockDimZ = 1;
                     p.kernel.kernelParams = args;
                     for (int i = 0; i < n; ++i)
                       CHECK_DRIVER(drv.add_node(&nodes[std::size_t(i)], reinterpret_cast<CUgraph>(g),
                                                 i ? &nodes[std::size_t(i) - 1] : nullptr, nullptr, i ? 1 : 0, &p));
                     return g;
                   }, {}});
  sides.push_back({"cudag native::add_kernel in a same_device_batch", [&] {
                     cudaGraph_t g = nullptr;
                     CHECK(cudaGraphCreate(&g, 0));
                     std::vector<cudaGraphNode_t> nodes(static_cast<std::size_t>(n));
                     const cudaKernelNodeParams p = runtime_params(stub);
                     const cudag::native::same_device_batch batch;
                     for (int i = 0; i < n; ++i)
                       nodes[std::size_t(i)] = cudag::native::add_kernel(
                           g, i ? cudag::native::deps_span(&nodes[std::size_t(i) - 1], 1) : cudag::native::deps_span(),
                           p, "tick");
                     return g;
                   }, {}});
  sides.push_back({"stream capture of the launches", [&] {
                     CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
                     for (int i = 0; i < n; ++i) tick<<<1, 256, 0, stream>>>(x, a, count);
                     cudaGraph_t g = nullptr;
                     CHECK(cudaStreamEndCapture(stream, &g));
                     return g;
                   }, {}});

  // Each side's graph, launched once: n nodes, n - 1 edges, x[0] = n.
  for (side& s : sides) {
    CHECK(cudaMemset(x, 0, sizeof(float)));
    cudaGraph_t g = s.build();
    cudaGraphExec_t e = nullptr;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphLaunch(e, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    float result = -1;
    CHECK(cudaMemcpy(&result, x, sizeof(float), cudaMemcpyDeviceToHost));
    std::size_t nodes = 0, edges = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &nodes));
    CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges));
    if (result != float(n) || nodes != std::size_t(n) || edges != std::size_t(n) - 1) {
      std::fprintf(stderr, "bench_native_paths: %s built a wrong graph (x[0] = %g, %zu nodes, %zu edges)\n",
                   s.name.c_str(), double(result), nodes, edges);
      return 1;
    }
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
  }
  for (int r = 0; r < rounds + 3; ++r)
    for (std::size_t k = 0; k < sides.size(); ++k) {
      side& s = sides[(k + std::size_t(r)) % sides.size()];
      const auto start = std::chrono::steady_clock::now();
      cudaGraph_t g = s.build();
      const auto stop = std::chrono::steady_clock::now();
      CHECK(cudaGraphDestroy(g));
      if (r >= 3) s.us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }

  // The executable graph's kernel setter on every node, and chains of empty
  // nodes, runtime against driver (interleaved in the same way).
  cudaGraph_t chain = sides[0].build();
  std::vector<cudaGraphNode_t> nodes(static_cast<std::size_t>(n));
  std::size_t node_count = std::size_t(n);
  CHECK(cudaGraphGetNodes(chain, nodes.data(), &node_count));
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, chain, 0));
  std::vector<side> more;
  more.push_back({"runtime cudaGraphExecKernelNodeSetParams on every node", [&] {
                    const cudaKernelNodeParams p = runtime_params(stub);
                    for (const cudaGraphNode_t node : nodes) CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &p));
                    return cudaGraph_t{};
                  }, {}});
  more.push_back({"driver cuGraphExecKernelNodeSetParams on every node", [&] {
                    CUDA_KERNEL_NODE_PARAMS p = driver_params();
                    p.func = reinterpret_cast<CUfunction>(function);
                    for (const cudaGraphNode_t node : nodes)
                      CHECK_DRIVER(drv.exec_set_kernel(reinterpret_cast<CUgraphExec>(exec),
                                                       reinterpret_cast<CUgraphNode>(node), &p));
                    return cudaGraph_t{};
                  }, {}});
  more.push_back({"runtime cudaGraphAddEmptyNode chain", [&] {
                    cudaGraph_t g = nullptr;
                    CHECK(cudaGraphCreate(&g, 0));
                    std::vector<cudaGraphNode_t> empty(static_cast<std::size_t>(n));
                    for (int i = 0; i < n; ++i)
                      CHECK(cudaGraphAddEmptyNode(&empty[std::size_t(i)], g, i ? &empty[std::size_t(i) - 1] : nullptr,
                                                  i ? 1 : 0));
                    return g;
                  }, {}});
  more.push_back({"driver cuGraphAddEmptyNode chain", [&] {
                    cudaGraph_t g = nullptr;
                    CHECK(cudaGraphCreate(&g, 0));
                    std::vector<CUgraphNode> empty(static_cast<std::size_t>(n));
                    for (int i = 0; i < n; ++i)
                      CHECK_DRIVER(drv.add_empty(&empty[std::size_t(i)], reinterpret_cast<CUgraph>(g),
                                                 i ? &empty[std::size_t(i) - 1] : nullptr, i ? 1 : 0));
                    return g;
                  }, {}});
  for (int r = 0; r < rounds + 3; ++r)
    for (std::size_t k = 0; k < more.size(); ++k) {
      side& s = more[(k + std::size_t(r)) % more.size()];
      const auto start = std::chrono::steady_clock::now();
      cudaGraph_t g = s.build();
      const auto stop = std::chrono::steady_clock::now();
      if (g) CHECK(cudaGraphDestroy(g));
      if (r >= 3) s.us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
  // The setters left every node as it was: the exec still adds n.
  CHECK(cudaMemset(x, 0, sizeof(float)));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  float result = -1;
  CHECK(cudaMemcpy(&result, x, sizeof(float), cudaMemcpyDeviceToHost));
  if (result != float(n)) {
    std::fprintf(stderr, "bench_native_paths: the exec after its setters gave %g\n", double(result));
    return 1;
  }

  std::printf("%s, %d-node chain, %d interleaved rounds, median us (ratio to the first line)\n", prop.name, n,
              rounds);
  const double base = median(sides[0].us);
  for (const side& s : sides)
    std::printf("  %-58s %9.1f  %.3f\n", s.name.c_str(), median(s.us), median(s.us) / base);
  for (const side& s : more) std::printf("  %-58s %9.1f\n", s.name.c_str(), median(s.us));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(chain));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(x));
  return 0;
}
