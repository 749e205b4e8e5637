// Launch attributes on the GPU: a kernel launched in thread-block clusters
// reads its neighbour block's shared memory through distributed shared
// memory, replay after replay, and computes what the host computes; CUDA
// holds each attribute cudag sent (read back from the lowered graph's node);
// a cooperative kernel with a memory-sync domain and a carveout runs.
#include <cooperative_groups.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"

using namespace engine_test;

namespace {

constexpr int blocks = 16;
constexpr int threads = 64;
constexpr int poison = -7;

// Each block writes its rank in the cluster into its shared memory; every
// thread then reads the next block's (in the cluster) through distributed
// shared memory and writes 100 * own rank + neighbour's rank.
__global__ void neighbour_ranks(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ int rank;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned me = cluster.block_rank();
  if (threadIdx.x == 0) rank = static_cast<int>(me);
  cluster.sync();  // every block's rank written before any is read
  const unsigned next = (me + 1) % cluster.num_blocks();
  const int* theirs = cluster.map_shared_rank(&rank, next);
  out[blockIdx.x * blockDim.x + threadIdx.x] = 100 * static_cast<int>(me) + *theirs;
  cluster.sync();  // no block leaves while another still reads its shared memory
#else
  (void)out;
#endif
}

__global__ void add_one(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

std::vector<int> expected_ranks(unsigned cluster) {
  std::vector<int> want(blocks * threads);
  for (int b = 0; b < blocks; ++b) {
    const int me = b % static_cast<int>(cluster);
    const int next = (me + 1) % static_cast<int>(cluster);
    for (int t = 0; t < threads; ++t) want[b * threads + t] = 100 * me + next;
  }
  return want;
}

bool device_supports_clusters() {
  int major = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
         major >= 9;
}

#define REQUIRE_CLUSTERS()                                                             \
  do {                                                                                 \
    CUDAG_REQUIRE_GPU();                                                               \
    if (!device_supports_clusters())                                                   \
      GTEST_SKIP() << "thread-block clusters need compute capability 9.0 or newer";    \
  } while (0)

/// The one kernel node of `graph`.
cudaGraphNode_t only_node(cudaGraph_t graph) {
  std::size_t count = 0;
  EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  EXPECT_EQ(count, 1u);
  cudaGraphNode_t node = nullptr;
  count = 1;
  EXPECT_EQ(cudaGraphGetNodes(graph, &node, &count), cudaSuccess);
  return node;
}

TEST(LaunchAttributesGpu, ClusterBlocksReadTheirNeighboursSharedMemory) {
  REQUIRE_CLUSTERS();
  for (const unsigned cluster : {2u, 4u, 8u}) {
    SCOPED_TRACE("cluster of " + std::to_string(cluster));
    cudag::device_buffer<int> out(blocks * threads);
    fill(out, poison);
    cudag::builder b("clusters");
    auto o = b.param<int*>("out");
    b.kernel("ranks", CUDAG_KERNEL(neighbour_ranks), cudag::launch(blocks, threads).cluster(cluster), o);
    const cudag::binding binds[] = {cudag::bind("out", out.data())};
    const cudag::resolved_graph graph = std::move(b).resolve();

    // CUDA holds the cluster cudag sent.
    cudag::lowered_graph lowered = cudag::lower(graph, binds);
    cudaLaunchAttributeValue v{};
    CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(only_node(lowered.graph.get()),
                                                      cudaLaunchAttributeClusterDimension, &v));
    EXPECT_EQ(v.clusterDim.x, cluster);
    EXPECT_EQ(v.clusterDim.y, 1u);
    EXPECT_EQ(v.clusterDim.z, 1u);

    auto e = cudag::instantiate(graph, binds);
    auto s = cudag::make_stream();
    for (int replay = 0; replay < 3; ++replay) {
      fill(out, poison);
      e.launch(s.get());
      e.synchronize(s.get());
      CUDAG_EXPECT_CUDA(cudaGetLastError());
      EXPECT_EQ(read_back(out), expected_ranks(cluster)) << "replay " << replay;
    }
  }
}

TEST(LaunchAttributesGpu, CooperativeMemSyncDomainAndCarveoutReachCudaAndRun) {
  REQUIRE_CLUSTERS();
  constexpr int n = blocks * threads;
  cudag::device_buffer<int> data(n);
  fill(data, 41);
  cudag::builder b("attributes");
  auto d = b.param<int*>("data");
  b.kernel("add", CUDAG_KERNEL(add_one),
           cudag::launch(blocks, threads)
               .cooperative()
               .mem_sync_domain(cudaLaunchMemSyncDomainRemote)
               .shared_carveout(50),
           d, n);
  const cudag::binding binds[] = {cudag::bind("data", data.data())};
  const cudag::resolved_graph graph = std::move(b).resolve();
  cudag::lowered_graph lowered = cudag::lower(graph, binds);
  const cudaGraphNode_t node = only_node(lowered.graph.get());
  cudaLaunchAttributeValue v{};
  CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributeCooperative, &v));
  EXPECT_NE(v.cooperative, 0);
  v = {};
  CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributeMemSyncDomain, &v));
  EXPECT_EQ(v.memSyncDomain, cudaLaunchMemSyncDomainRemote);
  v = {};
  CUDAG_EXPECT_CUDA(
      cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributePreferredSharedMemoryCarveout, &v));
  EXPECT_EQ(v.sharedMemCarveout, 50u);

  auto e = cudag::instantiate(graph, binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(data), std::vector<int>(n, 42));
}

}  // namespace
