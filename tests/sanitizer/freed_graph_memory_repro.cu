// Raw CUDA (no cudag): graph A allocates 256 bytes and never frees them
// (auto-free-on-launch), is launched three times, and the last launch's
// allocation is freed outside any graph; then graph B allocates 1024 bytes,
// which may get the same address, and a kernel writes all of them. Run alone
// and under compute-sanitizer memcheck (docs/testing.md, "compute-sanitizer").
//
//   freed_graph_memory_repro cuda_free|free_node
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#define CHECK(call)                                                                  \
  do {                                                                               \
    const cudaError_t code_ = (call);                                                \
    if (code_ != cudaSuccess) {                                                      \
      std::printf("%s failed: %s\n", #call, cudaGetErrorName(code_));               \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(i);
}

static cudaMemAllocNodeParams alloc_params(std::size_t bytes) {
  cudaMemAllocNodeParams a{};
  a.poolProps.allocType = cudaMemAllocationTypePinned;
  a.poolProps.location.type = cudaMemLocationTypeDevice;
  a.poolProps.location.id = 0;
  a.bytesize = bytes;
  return a;
}

/// An alloc node of `n` floats and a kernel node after it writing all of them.
static cudaError_t add_alloc_and_fill(cudaGraph_t g, int n, void** allocation,
                                      cudaGraphNode_t* kernel) {
  cudaMemAllocNodeParams a = alloc_params(n * sizeof(float));
  cudaGraphNode_t alloc = nullptr;
  if (const cudaError_t code = cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &a); code != cudaSuccess)
    return code;
  *allocation = a.dptr;
  float* p = static_cast<float*>(a.dptr);
  void* args[] = {&p, &n};
  cudaKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(fill);
  kp.gridDim = dim3(1);
  kp.blockDim = dim3(n);
  kp.kernelParams = args;
  return cudaGraphAddKernelNode(kernel, g, &alloc, 1, &kp);
}

int main(int argc, char** argv) {
  const bool free_node = argc > 1 && std::strcmp(argv[1], "free_node") == 0;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Graph A: alloc 64 floats, fill, no free; auto-free-on-launch.
  void* first = nullptr;
  {
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t k = nullptr;
    CHECK(add_alloc_and_fill(g, 64, &first, &k));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
  }
  if (free_node) {  // a second graph's free node gives the last allocation back
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t f = nullptr;
    CHECK(cudaGraphAddMemFreeNode(&f, g, nullptr, 0, first));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
  } else {
    CHECK(cudaFree(first));
  }

  // Graph B: alloc 256 floats, fill all, free.
  void* second = nullptr;
  float host[256];
  {
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t k = nullptr, copy = nullptr, release = nullptr;
    CHECK(add_alloc_and_fill(g, 256, &second, &k));
    CHECK(cudaGraphAddMemcpyNode1D(&copy, g, &k, 1, host, second, sizeof host, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddMemFreeNode(&release, g, &copy, 1, second));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
  }
  int wrong = 0;
  for (int i = 0; i < 256; ++i) wrong += host[i] != static_cast<float>(i);
  std::printf("%s: second allocation %s the first's address; %d of 256 values wrong: %s\n",
              free_node ? "free_node" : "cuda_free", second == first ? "reuses" : "does not reuse",
              wrong, wrong == 0 ? "OK" : "WRONG");
  CHECK(cudaStreamDestroy(s));
  return wrong == 0 ? 0 : 1;
}
