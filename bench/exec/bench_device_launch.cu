// A scheduler on the device against one on the host. Two graphs, A (a step
// kernel adding 1) and B (a step kernel tripling, mod a prime), run `steps`
// times in an order decided after each step (B after every third step, A
// otherwise):
// - host: each graph ends with a kernel writing its decision to mapped host
//   memory; the host synchronizes, reads it and launches the next graph
//   (one synchronization each step);
// - device, through cudag: each graph (instantiated for device launch) ends
//   with a kernel that tail-launches the next one (cudag::tail_launch) from
//   the device handles both graphs hold as parameters; the host launches
//   the first and synchronizes once;
// - device, hand-written: the same graphs made with CUDA's API.
// Every variant's result is compared with the host's computation.
//
// Usage: bench_device_launch [steps=1000] [rounds=7]
// Prints us a step (medians of `rounds` interleaved runs) and per-round
// ratio medians. Exit codes: 0 measured and verified, or no GPU (said so);
// 1 a CUDA call failed; 2 bad command line; 3 a wrong result.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../common/measure.hpp"
#include "cudag/builder.hpp"
#include "cudag/device_graph.hpp"
#include "cudag/exec.hpp"

namespace {

#define CHECK(call) BENCH_CHECK("bench_device_launch", call)

constexpr int n = 256;
constexpr int prime = 1000003;

__global__ void add_one(int* data) { data[threadIdx.x] += 1; }
__global__ void triple(int* data) { data[threadIdx.x] = (data[threadIdx.x] * 3) % prime; }

/// Whether B follows the step just counted.
__host__ __device__ inline bool b_follows(int done) { return done % 3 == 0; }

// The device's decision: count the step, tail-launch the next graph.
__global__ void decide_on_device(cudag::device_graph a, cudag::device_graph b, int* steps, int limit) {
  const int done = ++*steps;
  if (done < limit && cudag::tail_launch(b_follows(done) ? b : a) != cudaSuccess) *steps = -1 << 30;
}
// The host's: count the step, tell the host (mapped memory).
__global__ void decide_on_host(int* steps, int* counted) { *static_cast<volatile int*>(counted) = ++*steps; }

std::vector<int> expected(int steps) {
  std::vector<int> d(n);
  for (int i = 0; i < n; ++i) d[std::size_t(i)] = i + 1;
  bool b = false;
  for (int done = 1; done <= steps; ++done) {
    for (int& v : d) v = b ? (v * 3) % prime : v + 1;
    b = b_follows(done);
  }
  return d;
}

void reset(int* data, int* steps) {
  std::vector<int> d(n);
  for (int i = 0; i < n; ++i) d[std::size_t(i)] = i + 1;
  CHECK(cudaMemcpy(data, d.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(steps, 0, sizeof(int)));
  CHECK(cudaDeviceSynchronize());
}

void verify(const char* what, int* data, int* steps, int limit) {
  std::vector<int> got(n);
  int counted = 0;
  CHECK(cudaMemcpy(got.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&counted, steps, sizeof(int), cudaMemcpyDeviceToHost));
  if (counted != limit || got != expected(limit)) {
    std::fprintf(stderr, "bench_device_launch: %s ran %d steps of %d, or computed otherwise than the host\n",
                 what, counted, limit);
    std::exit(3);
  }
}

/// One graph of the device scheduler, by hand: the step, then the decision.
/// The graph stays alive: its decide node is set on the exec later.
cudaGraphExec_t hand_device_graph(bool is_b, int* data, int* steps, int limit, cudag::device_graph& a,
                                  cudag::device_graph& b, cudaGraph_t& g, cudaGraphNode_t& decide_node) {
  CHECK(cudaGraphCreate(&g, 0));
  void* step_args[] = {&data};
  cudaKernelNodeParams p{};
  p.func = is_b ? reinterpret_cast<void*>(&triple) : reinterpret_cast<void*>(&add_one);
  p.gridDim = dim3(1);
  p.blockDim = dim3(n);
  p.kernelParams = step_args;
  cudaGraphNode_t step_node = nullptr;
  CHECK(cudaGraphAddKernelNode(&step_node, g, nullptr, 0, &p));
  void* decide_args[] = {&a, &b, &steps, &limit};
  p.func = reinterpret_cast<void*>(&decide_on_device);
  p.blockDim = dim3(1);
  p.kernelParams = decide_args;
  CHECK(cudaGraphAddKernelNode(&decide_node, g, &step_node, 1, &p));
  cudaGraphExec_t x = nullptr;
  CHECK(cudaGraphInstantiateWithFlags(&x, g, cudaGraphInstantiateFlagDeviceLaunch));
  return x;
}

cudag::graph_spec cudag_device_graph(bool is_b) {
  cudag::builder b(is_b ? "B" : "A");
  auto data = b.param<int*>("data");
  auto steps = b.param<int*>("steps");
  auto step = is_b ? b.kernel("step", CUDAG_KERNEL(triple), cudag::launch(1, n), data)
                   : b.kernel("step", CUDAG_KERNEL(add_one), cudag::launch(1, n), data);
  auto decide = b.kernel("decide", CUDAG_KERNEL(decide_on_device), cudag::launch(1, 1),
                         b.param<cudag::device_graph>("a"), b.param<cudag::device_graph>("b"), steps,
                         b.param<int>("limit"));
  b.edge(step, decide);
  return b.build();
}

cudag::graph_spec cudag_host_graph(bool is_b) {
  cudag::builder b(is_b ? "B" : "A");
  auto data = b.param<int*>("data");
  auto step = is_b ? b.kernel("step", CUDAG_KERNEL(triple), cudag::launch(1, n), data)
                   : b.kernel("step", CUDAG_KERNEL(add_one), cudag::launch(1, n), data);
  auto decide = b.kernel("decide", CUDAG_KERNEL(decide_on_host), cudag::launch(1, 1), b.param<int*>("steps"),
                         b.param<int*>("counted"));
  b.edge(step, decide);
  return b.build();
}

using bench::median;

}  // namespace

int main(int argc, char** argv) {
  int limit = 1000, rounds = 7;
  try {
    if (argc > 1) limit = std::stoi(argv[1]);
    if (argc > 2) rounds = std::stoi(argv[2]);
  } catch (...) {
    limit = 0;
  }
  if (limit < 2 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_device_launch [steps=1000] [rounds=7]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    std::printf("no GPU: nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int *data = nullptr, *steps = nullptr, *counted = nullptr, *counted_device = nullptr;
  CHECK(cudaMalloc(&data, n * sizeof(int)));
  CHECK(cudaMalloc(&steps, sizeof(int)));
  CHECK(cudaHostAlloc(&counted, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&counted_device), counted, 0));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Host scheduler (cudag execs, launched as the host decides).
  const cudag::binding host_binds[] = {cudag::bind("data", data), cudag::bind("steps", steps),
                                       cudag::bind("counted", counted_device)};
  cudag::exec host_a = cudag::instantiate(cudag_host_graph(false), host_binds);
  cudag::exec host_b = cudag::instantiate(cudag_host_graph(true), host_binds);
  const auto run_host = [&] {
    cudag::exec* next = &host_a;
    for (int done = 0; done < limit;) {
      next->launch(s);
      CHECK(cudaStreamSynchronize(s));
      done = *static_cast<volatile int*>(counted);
      next = b_follows(done) ? &host_b : &host_a;
    }
  };

  // Device scheduler through cudag: each holds both handles.
  cudag::instantiate_options for_device;
  for_device.device_launch = true;
  const cudag::binding device_binds[] = {cudag::bind("data", data), cudag::bind("steps", steps),
                                         cudag::bind("a", cudag::device_graph{}),
                                         cudag::bind("b", cudag::device_graph{}), cudag::bind("limit", limit)};
  cudag::exec dev_a = cudag::instantiate(cudag_device_graph(false), device_binds, for_device);
  cudag::exec dev_b = cudag::instantiate(cudag_device_graph(true), device_binds, for_device);
  for (cudag::exec* e : {&dev_a, &dev_b}) {
    const cudag::binding handles[] = {cudag::bind("a", dev_a.device_handle()),
                                      cudag::bind("b", dev_b.device_handle())};
    e->rebind(handles);
  }
  const auto run_cudag_device = [&] {
    dev_a.launch(s);
    CHECK(cudaStreamSynchronize(s));
  };

  // Device scheduler by hand: the handles written into the decide nodes.
  cudag::device_graph hand_handles[2] = {};
  cudaGraphNode_t decide_nodes[2] = {};
  cudaGraph_t hand_graphs[2] = {};
  cudaGraphExec_t hand[2];
  for (int g = 0; g < 2; ++g)
    hand[g] = hand_device_graph(g == 1, data, steps, limit, hand_handles[0], hand_handles[1], hand_graphs[g],
                                decide_nodes[g]);
  hand_handles[0].exec = hand[0];
  hand_handles[1].exec = hand[1];
  for (int g = 0; g < 2; ++g) {
    void* decide_args[] = {&hand_handles[0], &hand_handles[1], &steps, &limit};
    cudaKernelNodeParams p{};
    p.func = reinterpret_cast<void*>(&decide_on_device);
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = decide_args;
    CHECK(cudaGraphExecKernelNodeSetParams(hand[g], decide_nodes[g], &p));
    CHECK(cudaGraphUpload(hand[g], s));
  }
  CHECK(cudaStreamSynchronize(s));
  const auto run_hand_device = [&] {
    CHECK(cudaGraphLaunch(hand[0], s));
    CHECK(cudaStreamSynchronize(s));
  };

  const std::function<void()> variants[3] = {run_host, run_cudag_device, run_hand_device};
  const char* names[3] = {"host scheduler", "cudag device scheduler", "hand-written device scheduler"};
  for (int v = 0; v < 3; ++v) {
    reset(data, steps);
    variants[v]();
    CHECK(cudaGetLastError());
    verify(names[v], data, steps, limit);
  }
  std::vector<double> t[3], host_over_device, cudag_over_hand;
  for (int r = 0; r < rounds; ++r) {
    double us[3];
    for (int k = 0; k < 3; ++k) {
      const int v = (k + r) % 3;
      reset(data, steps);
      const auto start = std::chrono::steady_clock::now();
      variants[v]();
      us[v] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / limit;
      t[v].push_back(us[v]);
    }
    host_over_device.push_back(us[0] / us[1]);
    cudag_over_hand.push_back(us[1] / us[2]);
  }
  std::printf("%s; %d steps (B after every third, A otherwise), us a step, medians of %d rounds\n\n", prop.name,
              limit, rounds);
  std::printf("| host scheduler | cudag device scheduler | hand-written device scheduler | host / cudag device | "
              "cudag device / hand device |\n| ---: | ---: | ---: | ---: | ---: |\n");
  std::printf("| %.2f | %.2f | %.2f | %.2fx | %.3f |\n", median(t[0]), median(t[1]), median(t[2]),
              median(host_over_device), median(cudag_over_hand));
  for (cudaGraphExec_t x : hand) CHECK(cudaGraphExecDestroy(x));
  for (cudaGraph_t g : hand_graphs) CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFreeHost(counted));
  CHECK(cudaFree(steps));
  CHECK(cudaFree(data));
  return 0;
}
