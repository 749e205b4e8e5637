// Raw CUDA (no cudag): a WHILE node whose body memsets and writes memory,
// the memory coming either from a mem-alloc node of the parent graph or
// from cudaMalloc. Run alone and under compute-sanitizer to tell a fault
// of a program from a limit of the tool (docs/testing.md, "compute-sanitizer").
//
//   conditional_alloc_repro graph_alloc|cuda_malloc [memset|kernel]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                  \
  do {                                                                               \
    const cudaError_t code_ = (call);                                                \
    if (code_ != cudaSuccess) {                                                      \
      std::printf("%s failed: %s\n", #call, cudaGetErrorName(code_));               \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void count_down(cudaGraphConditionalHandle h, unsigned* scratch, int* rounds) {
  scratch[0] += 1;  // reads the memset's value
  const int left = --*rounds;
  cudaGraphSetConditional(h, left > 0 ? 1u : 0u);
}

int main(int argc, char** argv) {
  const bool graph_alloc = argc > 1 && std::strcmp(argv[1], "graph_alloc") == 0;
  const bool with_memset = !(argc > 2 && std::strcmp(argv[2], "kernel") == 0);
  int* rounds = nullptr;
  CHECK(cudaMalloc(&rounds, sizeof(int)));
  const int five = 5;
  CHECK(cudaMemcpy(rounds, &five, sizeof five, cudaMemcpyHostToDevice));

  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle handle;
  CHECK(cudaGraphConditionalHandleCreate(&handle, g, 1, cudaGraphCondAssignDefault));

  unsigned* scratch = nullptr;
  cudaGraphNode_t alloc_node = nullptr, loop = nullptr, free_node = nullptr;
  if (graph_alloc) {
    cudaMemAllocNodeParams a{};
    a.poolProps.allocType = cudaMemAllocationTypePinned;
    a.poolProps.location.type = cudaMemLocationTypeDevice;
    a.poolProps.location.id = 0;
    a.bytesize = 256;
    CHECK(cudaGraphAddMemAllocNode(&alloc_node, g, nullptr, 0, &a));
    scratch = static_cast<unsigned*>(a.dptr);
  } else {
    CHECK(cudaMalloc(&scratch, 256));
  }

  cudaGraphNodeParams cp{};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = handle;
  cp.conditional.type = cudaGraphCondTypeWhile;
  cp.conditional.size = 1;
  CHECK(cudaGraphAddNode(&loop, g, alloc_node ? &alloc_node : nullptr, nullptr, alloc_node ? 1 : 0, &cp));
  cudaGraph_t body = cp.conditional.phGraph_out[0];

  cudaGraphNode_t set = nullptr, k = nullptr;
  if (with_memset) {
    cudaMemsetParams m{};
    m.dst = scratch;
    m.value = 7;
    m.elementSize = 4;
    m.width = 1;
    m.height = 1;
    m.pitch = 4;
    CHECK(cudaGraphAddMemsetNode(&set, body, nullptr, 0, &m));
  }
  void* args[] = {&handle, &scratch, &rounds};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(count_down);
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(1);
  kp.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&k, body, set ? &set : nullptr, set ? 1 : 0, &kp));
  if (graph_alloc) CHECK(cudaGraphAddMemFreeNode(&free_node, g, &loop, 1, scratch));

  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  int left = -1;
  CHECK(cudaMemcpy(&left, rounds, sizeof left, cudaMemcpyDeviceToHost));
  std::printf("%s, %s: loop ended with %d rounds left (expected 0): %s\n",
              graph_alloc ? "graph_alloc" : "cuda_malloc", with_memset ? "memset" : "kernel", left,
              left == 0 ? "OK" : "WRONG");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  if (!graph_alloc) CHECK(cudaFree(scratch));
  CHECK(cudaFree(rounds));
  return left == 0 ? 0 : 1;
}
