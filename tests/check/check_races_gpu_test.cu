// A race the check refuses is a real one: the same graph built with CUDA's
// own calls (no check) gives results that differ from replay to replay; the
// graph with the edge the check asks for gives the right result on every
// one of 100 replays.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "gpu_support.hpp"

namespace {

constexpr int elements = 1 << 20;
constexpr int block = 256;
constexpr int blocks = elements / block;
constexpr float poison = -1.0f;

// Each block first waits a while that differs from block to block and from
// run to run (the clock's low bits), then writes its elements.
__global__ void produce(float* x, int n) {
  const long long start = clock64();
  const long long wait = (start ^ (static_cast<long long>(blockIdx.x) * 2654435761LL)) & 0x3fff;
  while (clock64() - start < wait) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<float>(i % 1000 + 1);
}

__global__ void consume(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

__global__ void reset(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = poison;
}

/// What a replay left in y: how many elements saw produce's value, and a
/// checksum of which.
struct outcome {
  long long produced = 0;
  std::uint64_t fingerprint = 0;
  bool all_right = true;
  friend bool operator<(const outcome& a, const outcome& b) {
    return a.produced != b.produced ? a.produced < b.produced : a.fingerprint < b.fingerprint;
  }
};

outcome read_outcome(const cudag::device_buffer<float>& y) {
  std::vector<float> h(elements);
  EXPECT_EQ(cudaMemcpy(h.data(), y.data(), y.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  outcome o;
  for (int i = 0; i < elements; ++i) {
    const bool saw = h[i] == 2.0f * static_cast<float>(i % 1000 + 1);
    o.all_right &= saw;
    if (saw) {
      ++o.produced;
      o.fingerprint = o.fingerprint * 1099511628211ULL + static_cast<std::uint64_t>(i);
    } else {
      EXPECT_EQ(h[i], 2.0f * poison) << "element " << i;
    }
  }
  return o;
}

/// reset -> {produce, consume}, and produce -> consume where `ordered`.
cudag::graph_spec pipeline(bool ordered) {
  cudag::builder b("pipeline");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto n = b.param<int>("n");
  const auto launch = cudag::launch(dim3(blocks), dim3(block));
  auto r = b.kernel("reset", cudag::kernel_of(&reset, "reset"), launch, x, n);
  auto p = b.kernel("produce", cudag::kernel_of(&produce, "produce"), launch, x, n);
  auto c = b.kernel("consume", cudag::kernel_of(&consume, "consume"), launch, x, y, n);
  p.after(r);
  c.after(r);
  if (ordered) c.after(p);
  return std::move(b).build();
}

TEST(RacesGpu, ARefusedRaceDiffersFromReplayToReplayAndTheFixedGraphNever) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> x(elements), y(elements);
  cudaStream_t stream = nullptr;
  CUDAG_EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const float* xp = x.data();
  float* yp = y.data();
  int n = elements;
  const cudag::binding binds[] = {cudag::bind("x", x.data()), cudag::bind("y", y.data()),
                                  cudag::bind("n", n)};

  // The check refuses the graph without the edge, naming both nodes and x.
  try {
    (void)cudag::instantiate(pipeline(false), binds);
    ADD_FAILURE() << "the race was not refused";
  } catch (const cudag::check_error& e) {
    EXPECT_NE(std::string(e.what()).find("race: 'produce' writes 'x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("while 'consume' reads it"), std::string::npos) << e.what();
  }

  // The same graph through CUDA's own calls, forced through without the check.
  cudaGraph_t graph = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphCreate(&graph, 0));
  float* xw = x.data();
  void* reset_args[] = {&xw, &n};
  void* produce_args[] = {&xw, &n};
  void* consume_args[] = {&xp, &yp, &n};
  const auto params_of = [](void* function, void** args) {
    cudaKernelNodeParams p{};
    p.func = function;
    p.gridDim = dim3(blocks);
    p.blockDim = dim3(block);
    p.kernelParams = args;
    return p;
  };
  cudaGraphNode_t r = nullptr, p = nullptr, c = nullptr;
  const cudaKernelNodeParams rp = params_of(reinterpret_cast<void*>(&reset), reset_args);
  const cudaKernelNodeParams pp = params_of(reinterpret_cast<void*>(&produce), produce_args);
  const cudaKernelNodeParams cp = params_of(reinterpret_cast<void*>(&consume), consume_args);
  CUDAG_EXPECT_CUDA(cudaGraphAddKernelNode(&r, graph, nullptr, 0, &rp));
  CUDAG_EXPECT_CUDA(cudaGraphAddKernelNode(&p, graph, &r, 1, &pp));
  CUDAG_EXPECT_CUDA(cudaGraphAddKernelNode(&c, graph, &r, 1, &cp));
  cudaGraphExec_t racy = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphInstantiate(&racy, graph, 0));

  CUDAG_EXPECT_CUDA(cudaMemset(y.data(), 0xff, y.bytes()));  // poison: NaN everywhere
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream does not wait for the legacy one
  std::set<outcome> racy_outcomes;
  for (int replay = 0; replay < 100; ++replay) {
    CUDAG_EXPECT_CUDA(cudaGraphLaunch(racy, stream));
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(stream));
    racy_outcomes.insert(read_outcome(y));
  }
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_GE(racy_outcomes.size(), 2u) << "100 replays of the racy graph all gave one result";
  std::printf("racy graph: %zu different results in 100 replays; produce's values seen by consume in "
              "%lld to %lld of %d elements\n",
              racy_outcomes.size(), racy_outcomes.begin()->produced, racy_outcomes.rbegin()->produced,
              elements);
  CUDAG_EXPECT_CUDA(cudaGraphExecDestroy(racy));
  CUDAG_EXPECT_CUDA(cudaGraphDestroy(graph));

  // The fixed graph: right on every replay.
  cudag::exec fixed = cudag::instantiate(pipeline(true), binds);
  for (int replay = 0; replay < 100; ++replay) {
    CUDAG_EXPECT_CUDA(cudaMemset(y.data(), 0xff, y.bytes()));
    CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());
    fixed.launch(stream);
    fixed.synchronize(stream);
    const outcome o = read_outcome(y);
    ASSERT_TRUE(o.all_right) << "replay " << replay << ": " << o.produced << " of " << elements;
  }
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  CUDAG_EXPECT_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
