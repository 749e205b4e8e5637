// Launch attributes on the GPU: a kernel launched in thread-block clusters
// reads its neighbour block's shared memory through distributed shared
// memory, replay after replay, and computes what the host computes; CUDA
// holds each attribute cudag sent (read back from the lowered graph's node);
// a cooperative kernel with a memory-sync domain and a carveout runs; a
// cooperative grid synchronizes as a whole, and one a block too large is
// refused before it runs; an access-policy window reaches CUDA.
#include <cooperative_groups.h>
#include <gtest/gtest.h>

#include <algorithm>
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

namespace {

// Each block writes its index, the whole grid synchronizes, and each block
// then reads the block after it: right only if every block was resident at
// once (a cooperative launch).
__global__ void read_next_block(int* marks, int* out) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) marks[blockIdx.x] = static_cast<int>(blockIdx.x) * 3 + 1;
  grid.sync();
  const unsigned next = (blockIdx.x + 1) % gridDim.x;
  if (threadIdx.x == 0) out[blockIdx.x] = marks[next];
}

TEST(LaunchAttributesGpu, ACooperativeGridSynchronizesAsAWholeReplayAfterReplay) {
  CUDAG_REQUIRE_GPU();
  int device = 0, multiprocessors = 0, per_multiprocessor = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, read_next_block, 128, 0), cudaSuccess);
  const int grid = multiprocessors * per_multiprocessor;  // every block resident: the most allowed
  cudag::device_buffer<int> marks(grid), out(grid);
  cudag::builder b("cooperative");
  auto m = b.param<int*>("marks");
  auto o = b.param<int*>("out");
  b.kernel("ring", CUDAG_KERNEL(read_next_block), cudag::launch(grid, 128).cooperative(), m, o);
  const cudag::binding binds[] = {cudag::bind("marks", marks.data()), cudag::bind("out", out.data())};
  const cudag::graph_spec spec = b.build();
  auto e = cudag::instantiate(spec, binds);
  auto s = cudag::make_stream();
  std::vector<int> want(grid);
  for (int i = 0; i < grid; ++i) want[i] = ((i + 1) % grid) * 3 + 1;
  for (int replay = 0; replay < 5; ++replay) {
    fill(marks, poison);
    fill(out, poison);
    e.launch(s.get());
    e.synchronize(s.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(read_back(out), want) << "replay " << replay;
  }

  // One block more than can be resident: refused at instantiation, naming
  // the node, where CUDA would fail only the launch.
  cudag::builder too_many("cooperative");
  too_many.kernel("ring", CUDAG_KERNEL(read_next_block), cudag::launch(grid + 1, 128).cooperative(),
                  too_many.param<int*>("marks"), too_many.param<int*>("out"));
  try {
    (void)cudag::instantiate(too_many.build(), binds);
    FAIL() << "a cooperative grid of " << grid + 1 << " blocks was instantiated";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "ring");
    EXPECT_EQ(err.code(), cudaErrorCooperativeLaunchTooLarge);
    EXPECT_NE(std::string(err.what()).find("cooperative launch of " + std::to_string(grid + 1) +
                                           " blocks, but at most " + std::to_string(grid)),
              std::string::npos)
        << err.what();
  }
  CUDAG_EXPECT_CUDA(cudaGetLastError());
}

TEST(LaunchAttributesGpu, AnAccessPolicyWindowReachesCudaAndTheKernelComputesAlike) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = blocks * threads;
  cudag::device_buffer<int> data(n);
  fill(data, 9);
  int device = 0, max_window = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device), cudaSuccess);
  if (max_window <= 0) GTEST_SKIP() << "device " << device << " has no L2 access-policy window";
  const std::size_t bytes = std::min<std::size_t>(n * sizeof(int), static_cast<std::size_t>(max_window));
  cudag::builder b("window");
  b.kernel("add", CUDAG_KERNEL(add_one),
           cudag::launch(blocks, threads).access_policy(data.data(), bytes, 0.5f), b.param<int*>("data"), n);
  const cudag::binding binds[] = {cudag::bind("data", data.data())};
  const cudag::graph_spec spec = b.build();
  cudag::lowered_graph lowered = cudag::lower(spec, binds);
  cudaLaunchAttributeValue v{};
  CUDAG_EXPECT_CUDA(cudaGraphKernelNodeGetAttribute(only_node(lowered.graph.get()),
                                                    cudaLaunchAttributeAccessPolicyWindow, &v));
  EXPECT_EQ(v.accessPolicyWindow.base_ptr, static_cast<void*>(data.data()));
  EXPECT_EQ(v.accessPolicyWindow.num_bytes, bytes);
  EXPECT_FLOAT_EQ(v.accessPolicyWindow.hitRatio, 0.5f);
  EXPECT_EQ(v.accessPolicyWindow.hitProp, cudaAccessPropertyPersisting);
  EXPECT_EQ(v.accessPolicyWindow.missProp, cudaAccessPropertyStreaming);
  auto e = cudag::instantiate(spec, binds);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.launch(s.get());
  e.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(data), std::vector<int>(n, 11));
}

}  // namespace

namespace {

// Writes the size of its block's cluster (1 without clusters).
__global__ void cluster_size(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(cg::this_cluster().num_blocks());
#else
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
#endif
}

cudag::graph_spec sized(const cudag::launch_config& config) {
  cudag::builder b("sized");
  b.kernel("size", CUDAG_KERNEL(cluster_size), config, b.param<int*>("out"));
  return b.build();
}

// cudaGraphExecUpdate accepts a template whose cluster changed, yet on an
// H200 (CUDA 13.0) the exec went on launching the old cluster (2 after an
// update to 4, to none, to 8): exec::update refuses the change, naming the
// node, rather than report one that did not happen, and
// update_or_reinstantiate launches the new cluster.
TEST(LaunchAttributesGpu, AClusterChangeIsRefusedByUpdateAndTakenByReinstantiation) {
  REQUIRE_CLUSTERS();
  constexpr int grid = 8;
  cudag::device_buffer<int> out(grid);
  const cudag::binding binds[] = {cudag::bind("out", out.data())};
  auto e = cudag::instantiate(sized(cudag::launch(grid, 32).cluster(2)), binds);
  auto s = cudag::make_stream();
  const auto seen = [&]() -> std::vector<int> {
    fill(out, poison);
    e.launch(s.get());
    e.synchronize(s.get());
    const cudaError_t last = cudaGetLastError();
    EXPECT_EQ(last, cudaSuccess) << cudaGetErrorName(last);
    return read_back(out);
  };
  EXPECT_EQ(seen(), std::vector<int>(grid, 2));
  EXPECT_THROW(e.update(sized(cudag::launch(grid, 32).cluster(4)), binds), cudag::error);
  EXPECT_EQ(seen(), std::vector<int>(grid, 2));
  EXPECT_TRUE(e.update_or_reinstantiate(sized(cudag::launch(grid, 32).cluster(4)), binds));
  EXPECT_EQ(seen(), std::vector<int>(grid, 4));
  EXPECT_TRUE(e.update_or_reinstantiate(sized(cudag::launch(grid, 32)), binds));
  EXPECT_EQ(seen(), std::vector<int>(grid, 1));
}

}  // namespace
