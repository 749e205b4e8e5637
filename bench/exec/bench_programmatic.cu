// Replay of a chain of dependent kernels with full edges and with
// programmatic edges, hand-written (cudaGraphAddKernelNode; cudaGraphAddNode
// with cudaGraphEdgeData) and through cudag's builder, at three widths: one
// block a kernel, one wave (a block per SM) and eight waves. Each kernel
// releases its dependents at its start and waits for its predecessors
// before it reads (cudaTriggerProgrammaticLaunchCompletion,
// cudaGridDependencySynchronize). Then choose_edge_kinds' verdict for each
// width: which edges a user should ship.
//
// Usage: bench_programmatic [kernels=1000] [rounds=15] [launches=10] [threads=256]
// (threads: a block's; a wave is as many blocks as the device holds at once)
// Prints us a kernel (medians of `rounds` interleaved samples of `launches`
// replays each) and per-round ratio medians. Exit codes: 0 measured and
// verified, or no GPU able to run it (said so); 1 a CUDA call failed; 2 bad
// command line; 3 a graph computed a wrong result.
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
#include "cudag/edge_payoff.hpp"
#include "cudag/exec.hpp"

namespace {

#define CHECK(call) BENCH_CHECK("bench_programmatic", call)

__global__ void step(float* data, int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 0.5f + 1.0f;
}

unsigned threads = 256;  // a block's, from the command line

/// The hand-written chain: every edge full, or every edge programmatic.
cudaGraphExec_t hand_written(int kernels, unsigned blocks, float* data, int n, bool programmatic) {
  cudaGraph_t g = nullptr;
  CHECK(cudaGraphCreate(&g, 0));
  void* args[] = {&data, &n};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&step);
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  cudaGraphNodeParams generic{};
  generic.type = cudaGraphNodeTypeKernel;
  generic.kernel.func = p.func;
  generic.kernel.gridDim = p.gridDim;
  generic.kernel.blockDim = p.blockDim;
  generic.kernel.kernelParams = args;
  cudaGraphEdgeData edge{};
  edge.type = cudaGraphDependencyTypeProgrammatic;
  edge.from_port = cudaGraphKernelNodePortProgrammatic;
  cudaGraphNode_t previous = nullptr;
  for (int k = 0; k < kernels; ++k) {
    cudaGraphNode_t node = nullptr;
    const std::size_t deps = previous ? 1 : 0;
    if (programmatic)
      CHECK(cudaGraphAddNode(&node, g, &previous, previous ? &edge : nullptr, deps, &generic));
    else
      CHECK(cudaGraphAddKernelNode(&node, g, &previous, deps, &p));
    previous = node;
  }
  cudaGraphExec_t x = nullptr;
  CHECK(cudaGraphInstantiate(&x, g, 0));
  CHECK(cudaGraphDestroy(g));
  return x;
}

/// The same chain through cudag's builder.
cudag::graph_spec builder_chain(int kernels, unsigned blocks, int n, cudag::edge_kind kind) {
  cudag::builder b("chain");
  b.reserve(std::size_t(kernels), std::size_t(kernels));
  auto data = b.param<float*>("data");
  std::optional<cudag::node_ref> previous;
  for (int k = 0; k < kernels; ++k) {
    auto node = b.kernel("k" + std::to_string(k), cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(step)),
                         cudag::launch(blocks, threads), data, n);
    if (previous) b.edge(*previous, node, kind);
    previous = node;
  }
  return b.build();
}

using bench::median;

/// Resets `data` to 0..n-1, replays once, and compares with the host.
void verify(const char* what, const std::function<void()>& replay, float* data, int n, int kernels,
            cudaStream_t s) {
  std::vector<float> host(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) host[std::size_t(i)] = static_cast<float>(i % 1024);
  CHECK(cudaMemcpy(data, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  replay();
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::vector<float> got(host.size());
  CHECK(cudaMemcpy(got.data(), data, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < host.size(); ++i) {
    float want = host[i];
    for (int k = 0; k < kernels; ++k) want = want * 0.5f + 1.0f;
    if (got[i] != want) {
      std::fprintf(stderr, "bench_programmatic: %s computed data[%zu] = %g, expected %g\n", what, i,
                   static_cast<double>(got[i]), static_cast<double>(want));
      std::exit(3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int kernels = 1000, rounds = 15, launches = 10;
  try {
    if (argc > 1) kernels = std::stoi(argv[1]);
    if (argc > 2) rounds = std::stoi(argv[2]);
    if (argc > 3) launches = std::stoi(argv[3]);
    if (argc > 4) threads = static_cast<unsigned>(std::stoi(argv[4]));
  } catch (...) {
    kernels = 0;
  }
  if (kernels < 2 || rounds < 1 || launches < 1 || threads < 32 || threads > 1024) {
    std::fprintf(stderr, "usage: bench_programmatic [kernels=1000] [rounds=15] [launches=10] [threads=256]\n");
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
  if (prop.major < 9) {
    std::printf("%s (sm_%d%d): programmatic dependent launch needs sm_90 or newer: nothing measured\n",
                prop.name, prop.major, prop.minor);
    return 0;
  }
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  int resident = 0;  // blocks of `step` an SM holds at once
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, step, static_cast<int>(threads), 0));
  const unsigned wave = sms * static_cast<unsigned>(resident);
  std::printf("%s, %u SMs, %d blocks of %u threads an SM (a wave: %u blocks); chain of %d kernels; "
              "us a kernel, medians of %d rounds of %d replays\n\n",
              prop.name, sms, resident, threads, wave, kernels, rounds, launches);
  std::printf("| blocks | hand full | hand programmatic | cudag full | cudag programmatic | "
              "hand prog/full | cudag prog / hand prog | cudag full / hand full | chooser |\n"
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const unsigned blocks : {1u, wave, 8 * wave}) {
    const int n = static_cast<int>(blocks * threads);
    float* data = nullptr;
    CHECK(cudaMalloc(&data, std::size_t(n) * sizeof(float)));
    cudaGraphExec_t hand_full = hand_written(kernels, blocks, data, n, false);
    cudaGraphExec_t hand_prog = hand_written(kernels, blocks, data, n, true);
    const cudag::binding binds[] = {cudag::bind("data", data)};
    const cudag::graph_spec programmatic = builder_chain(kernels, blocks, n, cudag::edge_kind::programmatic);
    cudag::exec ours_full = cudag::instantiate(builder_chain(kernels, blocks, n, cudag::edge_kind::full), binds);
    cudag::exec ours_prog = cudag::instantiate(programmatic, binds);

    const std::function<void()> replay[4] = {
        [&] { CHECK(cudaGraphLaunch(hand_full, s)); }, [&] { CHECK(cudaGraphLaunch(hand_prog, s)); },
        [&] { ours_full.launch(s); }, [&] { ours_prog.launch(s); }};
    const char* names[4] = {"hand-written full", "hand-written programmatic", "cudag full",
                            "cudag programmatic"};
    for (int v = 0; v < 4; ++v) verify(names[v], replay[v], data, n, kernels, s);

    std::vector<double> t[4], prog_over_full, ours_over_hand, ours_full_over_hand;
    for (int v = 0; v < 4; ++v) {  // warm-up
      replay[v]();
      CHECK(cudaStreamSynchronize(s));
    }
    for (int r = 0; r < rounds; ++r) {
      double round_time[4];
      for (int k = 0; k < 4; ++k) {
        const int v = (k + r) % 4;  // the order turns each round
        const auto start = std::chrono::steady_clock::now();
        for (int l = 0; l < launches; ++l) replay[v]();
        CHECK(cudaStreamSynchronize(s));
        round_time[v] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                        (double(launches) * kernels);
        t[v].push_back(round_time[v]);
      }
      prog_over_full.push_back(round_time[1] / round_time[0]);
      ours_over_hand.push_back(round_time[3] / round_time[1]);
      ours_full_over_hand.push_back(round_time[2] / round_time[0]);
    }
    const cudag::edge_kind_choice choice = cudag::choose_edge_kinds(programmatic, binds, s, rounds, launches);
    std::printf("| %u | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s (%.2fx) |\n", blocks,
                median(t[0]), median(t[1]), median(t[2]), median(t[3]), median(prog_over_full),
                median(ours_over_hand), median(ours_full_over_hand),
                choice.keep_typed ? "programmatic" : "full",
                choice.full_replay_us / choice.typed_replay_us);
    CHECK(cudaGraphExecDestroy(hand_full));
    CHECK(cudaGraphExecDestroy(hand_prog));
    CHECK(cudaFree(data));
  }
  CHECK(cudaStreamDestroy(s));
  std::printf("\nEvery graph verified: each element after one replay equals the host's.\n");
  return 0;
}
