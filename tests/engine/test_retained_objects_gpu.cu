// What a CUDA graph keeps alive by itself, on the GPU: a graph lowered by
// cudag, with a kernel node and a host node whose callable owns its state,
// is instantiated by CUDA itself; the spec, the lowered graph and
// everything cudag made are destroyed; the exec still runs, replay after
// replay, and computes right. When the exec goes, CUDA's destructor queues
// the objects and the program's thread releases them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/retained.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"

using namespace engine_test;

namespace {

__global__ void add_to_each(int* data, int amount, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += amount;
}

TEST(RetainedObjectsGpu, AnExecCudaInstantiatedOutlivesCudagsObjectsAndRuns) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 4096;
  cudag::device_buffer<int> data(n);
  fill(data, 3);
  std::weak_ptr<std::atomic<int>> watched;
  cudaGraphExec_t exec = nullptr;
  {
    auto total = std::make_shared<std::atomic<int>>(0);
    watched = total;
    cudag::builder b("outliving");
    auto d = b.param<int*>("data");
    auto amount = b.param<int>("amount");
    auto add = b.kernel("add", CUDAG_KERNEL(add_to_each), cudag::launch(n / 256, 256), d, amount, n);
    auto count = b.host("count", [total](int a) { total->fetch_add(a); }, amount);
    b.edge(add, count);
    const cudag::binding binds[] = {cudag::bind("data", data.data()), cudag::bind("amount", 4)};
    cudag::lowered_graph lowered = cudag::lower(b.build(), binds);
    CUDAG_EXPECT_CUDA(cudaGraphInstantiate(&exec, lowered.graph.get(), 0));
  }  // the builder, the spec, the lowered CUDA graph and `owned`: gone
  ASSERT_FALSE(watched.expired()) << "the host callable died with cudag's objects";
  cudaStream_t stream = nullptr;
  CUDAG_EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int replay = 0; replay < 3; ++replay) CUDAG_EXPECT_CUDA(cudaGraphLaunch(exec, stream));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(stream));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(data), std::vector<int>(n, 3 + 3 * 4));
  {
    const auto total = watched.lock();
    ASSERT_TRUE(total);
    EXPECT_EQ(total->load(), 12);
  }
  CUDAG_EXPECT_CUDA(cudaGraphExecDestroy(exec));
  CUDAG_EXPECT_CUDA(cudaStreamDestroy(stream));
  // CUDA calls the destructor on its own thread, when it likes: wait for it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!watched.expired() && std::chrono::steady_clock::now() < deadline) {
    (void)cudag::release_retained_objects();
    if (!watched.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(watched.expired()) << "CUDA never released the graph's user object";
}

}  // namespace
