// Kernel nodes added and set within a native::same_device_batch go through
// the driver's entry points with each kernel's function resolved once. The
// effects must be those of the runtime's calls: every launch dimension and
// argument arrives, a kernel the runtime knows only as a cudaKernel_t keeps
// working, more kernels than the batch remembers are each resolved right,
// and whatever the driver refuses fails exactly as the runtime's call does.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_nodes.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr int poison = -7777;

/// One thread of each block writes what it sees of its launch, so that a
/// dimension or argument lost on the way fails the comparison.
__global__ void report_launch(int* out, int tag) {
  const bool first_thread = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  if (!first_thread) return;
  const int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned shared_bytes = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared_bytes));
  int* row = out + 8 * block;
  row[0] = tag;
  row[1] = int(gridDim.x);
  row[2] = int(gridDim.y);
  row[3] = int(gridDim.z);
  row[4] = int(blockDim.x);
  row[5] = int(blockDim.y);
  row[6] = int(blockDim.z);
  row[7] = int(shared_bytes);
}

/// Distinct kernels (one stub each), more than a batch remembers at once.
template <int K>
__global__ void add_tagged(int* slots) {
  atomicAdd(slots + K, K + 1);
}
constexpr int kernel_kinds = 20;

template <int... K>
std::vector<const void*> tagged_kernels(std::integer_sequence<int, K...>) {
  return {reinterpret_cast<const void*>(&add_tagged<K>)...};
}

cudaKernelNodeParams params_of(const void* function, dim3 grid, dim3 block, unsigned shared,
                               void** args) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(function);
  p.gridDim = grid;
  p.blockDim = block;
  p.sharedMemBytes = shared;
  p.kernelParams = args;
  return p;
}

void run_graph(cudaGraph_t graph) {
  cudaGraphExec_t exec = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CUDAG_EXPECT_CUDA(cudaGraphLaunch(exec, nullptr));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  CUDAG_EXPECT_CUDA(cudaGraphExecDestroy(exec));
}

std::vector<int> expected_rows(int tag, dim3 grid, dim3 block, unsigned shared) {
  std::vector<int> rows;
  for (unsigned b = 0; b < grid.x * grid.y * grid.z; ++b)
    rows.insert(rows.end(), {tag, int(grid.x), int(grid.y), int(grid.z), int(block.x), int(block.y),
                             int(block.z), int(shared)});
  return rows;
}

}  // namespace

TEST(NativeBatch, AKernelAskedForAgainGoesThroughTheDriver) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> out(8 * 4);
  int* at = out.data();
  int tag = 1;
  void* args[] = {&at, &tag};
  const cudaKernelNodeParams p =
      params_of(reinterpret_cast<const void*>(&report_launch), dim3(1), dim3(32), 0, args);
  auto chain_of = [&](cudaGraph_t g, int nodes) {
    cudaGraphNode_t previous = nullptr;
    for (int i = 0; i < nodes; ++i)
      previous = cudag::native::add_kernel(
          g, previous ? cudag::native::deps_span(&previous, 1) : cudag::native::deps_span(), p, "k");
  };
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  cudag::unique_graph outside = cudag::make_graph();
  chain_of(outside.get(), 4);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before);
  cudag::unique_graph inside = cudag::make_graph();
  {
    const cudag::native::same_device_batch batch;
    chain_of(inside.get(), 4);
  }
  // The first node resolves nothing (a batch of one node keeps the runtime's
  // call); the three after it go through the driver.
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 3);
  fill(out, poison);
  run_graph(inside.get());
  std::vector<int> expected = expected_rows(1, dim3(1), dim3(32), 0);
  expected.resize(32, poison);
  EXPECT_EQ(read_back(out), expected);
}

TEST(NativeBatch, EveryLaunchDimensionAndArgumentArrives) {
  CUDAG_REQUIRE_GPU();
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const unsigned shared = 96;
  const int blocks = 12;
  cudag::device_buffer<int> first_out(8 * blocks), out(8 * blocks);
  fill(first_out, poison);
  fill(out, poison);
  int* first_at = first_out.data();
  int* at = out.data();
  int first_tag = 11, tag = 4242;
  void* first_args[] = {&first_at, &first_tag};
  void* args[] = {&at, &tag};
  const void* fn = reinterpret_cast<const void*>(&report_launch);

  cudag::unique_graph graph = cudag::make_graph();
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    // The first through the runtime, the second (the same kernel) through the driver.
    cudaGraphNode_t first = cudag::native::add_kernel(
        graph.get(), {}, params_of(fn, dim3(2), dim3(8), 4, first_args), "first");
    cudaGraphNode_t second =
        cudag::native::add_kernel(graph.get(), cudag::native::deps_span(&first, 1),
                                  params_of(fn, grid, block, shared, args), "second");
    // Its own arguments: the node copied them when it was added.
    tag = -1;
    (void)cudag::native::add_empty(graph.get(), cudag::native::deps_span(&second, 1), "after");
  }
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 2);
  run_graph(graph.get());
  std::vector<int> first_expected = expected_rows(11, dim3(2), dim3(8), 4);
  first_expected.resize(8 * blocks, poison);
  EXPECT_EQ(read_back(first_out), first_expected);
  EXPECT_EQ(read_back(out), expected_rows(4242, grid, block, shared));
}

TEST(NativeBatch, ExecAndTemplateSettersInABatchChangeTheLaunch) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> out(8 * 8);
  int* at = out.data();
  int tag = 1;
  void* args[] = {&at, &tag};
  const void* fn = reinterpret_cast<const void*>(&report_launch);
  cudag::unique_graph graph = cudag::make_graph();
  const cudaGraphNode_t node = cudag::native::add_kernel(
      graph.get(), {}, params_of(fn, dim3(1), dim3(32), 0, args), "report");
  cudaGraphExec_t exec = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphInstantiate(&exec, graph.get(), 0));

  // On the executable graph.
  fill(out, poison);
  tag = 77;
  std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    // Twice: the second call is the driver's.
    cudag::native::set_kernel(cudag::native::param_target::on_exec(exec), node,
                              params_of(fn, dim3(1), dim3(1), 0, args), "report");
    cudag::native::set_kernel(cudag::native::param_target::on_exec(exec), node,
                              params_of(fn, dim3(2, 2, 1), dim3(8, 2, 1), 64, args), "report");
  }
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 1);
  CUDAG_EXPECT_CUDA(cudaGraphLaunch(exec, nullptr));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  std::vector<int> expected = expected_rows(77, dim3(2, 2, 1), dim3(8, 2, 1), 64);
  expected.resize(64, poison);
  EXPECT_EQ(read_back(out), expected);

  // On the template, then a whole-graph update.
  fill(out, poison);
  tag = 78;
  before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    cudag::native::set_kernel(cudag::native::param_target::on_template(), node,
                              params_of(fn, dim3(1), dim3(1), 0, args), "report");
    cudag::native::set_kernel(cudag::native::param_target::on_template(), node,
                              params_of(fn, dim3(1, 1, 2), dim3(4, 4, 4), 128, args), "report");
  }
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 1);
  cudaGraphExecUpdateResultInfo info{};
  CUDAG_EXPECT_CUDA(cudaGraphExecUpdate(exec, graph.get(), &info));
  CUDAG_EXPECT_CUDA(cudaGraphLaunch(exec, nullptr));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(nullptr));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  expected = expected_rows(78, dim3(1, 1, 2), dim3(4, 4, 4), 128);
  expected.resize(64, poison);
  EXPECT_EQ(read_back(out), expected);
  CUDAG_EXPECT_CUDA(cudaGraphExecDestroy(exec));
}

TEST(NativeBatch, MoreKernelsThanABatchRemembersAreEachResolvedRight) {
  CUDAG_REQUIRE_GPU();
  const std::vector<const void*> kernels =
      tagged_kernels(std::make_integer_sequence<int, kernel_kinds>{});
  cudag::device_buffer<int> slots(kernel_kinds);
  fill(slots, 1000);
  int* at = slots.data();
  void* args[] = {&at};
  cudag::unique_graph graph = cudag::make_graph();
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    cudaGraphNode_t previous = nullptr;
    // Three passes over the 20 kernels, in orders that evict and refetch.
    for (int pass = 0; pass < 3; ++pass)
      for (int i = 0; i < kernel_kinds; ++i) {
        const int k = pass == 1 ? kernel_kinds - 1 - i : (i * 7) % kernel_kinds;
        const cudaKernelNodeParams p = params_of(kernels[std::size_t(k)], dim3(1), dim3(1), 0, args);
        previous = cudag::native::add_kernel(
            graph.get(), previous ? cudag::native::deps_span(&previous, 1) : cudag::native::deps_span(),
            p, "tagged");
      }
  }
  // Each kernel asked for again while the batch still remembered it went
  // through the driver: 31 of the 60 nodes, for this order and 16 entries
  // replaced in turn.
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 31);
  run_graph(graph.get());
  std::vector<int> expected(kernel_kinds);
  for (int k = 0; k < kernel_kinds; ++k) expected[std::size_t(k)] = 1000 + 3 * (k + 1);
  EXPECT_EQ(read_back(slots), expected);
}

TEST(NativeBatch, AKernelGivenAsACudaKernelIsResolvedByTheDriver) {
  CUDAG_REQUIRE_GPU();
  cudaKernel_t handle = nullptr;
  CUDAG_EXPECT_CUDA(cudaGetKernel(&handle, reinterpret_cast<const void*>(&report_launch)));
  cudag::device_buffer<int> out(8 * 2);
  fill(out, poison);
  int* at = out.data();
  int tag = 99;
  void* args[] = {&at, &tag};
  cudag::unique_graph graph = cudag::make_graph();
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    // Twice: the second one is resolved by the driver (cuKernelGetFunction).
    cudaGraphNode_t first = cudag::native::add_kernel(
        graph.get(), {},
        params_of(reinterpret_cast<const void*>(handle), dim3(1), dim3(2, 2), 16, args), "by_handle");
    (void)cudag::native::add_kernel(
        graph.get(), cudag::native::deps_span(&first, 1),
        params_of(reinterpret_cast<const void*>(handle), dim3(2), dim3(2, 2), 16, args), "again");
  }
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 1);
  // The handle was not asked of the runtime as a stub (an API error).
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  run_graph(graph.get());
  EXPECT_EQ(read_back(out), expected_rows(99, dim3(2), dim3(2, 2), 16));
}

TEST(NativeBatch, APendingErrorOfTheCallersIsNotCleared) {
  CUDAG_REQUIRE_GPU();
  // A non-sticky error the caller has not read yet.
  void* nowhere = nullptr;
  ASSERT_EQ(cudaMalloc(&nowhere, ~std::size_t{0} >> 1), cudaErrorMemoryAllocation);
  cudag::device_buffer<int> out(8);
  int* at = out.data();
  int tag = 5;
  void* args[] = {&at, &tag};
  cudag::unique_graph graph = cudag::make_graph();
  {
    const cudag::native::same_device_batch batch;
    const cudaKernelNodeParams p =
        params_of(reinterpret_cast<const void*>(&report_launch), dim3(1), dim3(1), 0, args);
    cudaGraphNode_t first = cudag::native::add_kernel(graph.get(), {}, p, "k");
    (void)cudag::native::add_kernel(graph.get(), cudag::native::deps_span(&first, 1), p, "again");
  }
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

/// The code and message of native::add_kernel for `p` the second time a
/// graph is given it (within a batch: the driver's call, the function
/// resolved), the thread's last error after it, and the nodes added.
struct add_outcome {
  int code = -1;  ///< -1: it did not fail
  std::string message;
  cudaError_t last_error = cudaSuccess;
  std::size_t nodes = 0;
};
add_outcome add_outcome_of(const cudaKernelNodeParams& p, bool in_batch) {
  add_outcome out;
  cudag::unique_graph graph = cudag::make_graph();
  {
    std::optional<cudag::native::same_device_batch> batch;
    if (in_batch) batch.emplace();
    for (int time = 0; time < 2; ++time) {
      out = add_outcome{};
      try {
        (void)cudag::native::add_kernel(graph.get(), {}, p, "too_big");
      } catch (const cudag::error& e) {
        out.code = int(e.code());
        out.message = e.what();
      }
    }
  }
  out.last_error = cudaGetLastError();
  if (cudaGraphGetNodes(graph.get(), nullptr, &out.nodes) != cudaSuccess) out.nodes = ~std::size_t{0};
  return out;
}

void not_a_kernel(int*, int) {}

TEST(NativeBatch, WhatTheDriverRefusesFailsAsTheRuntimeCallDoes) {
  CUDAG_REQUIRE_GPU();
  int* at = nullptr;
  int tag = 0;
  void* args[] = {&at, &tag};
  // More dynamic shared memory than any device has, a block of more threads
  // than any device runs, and a host function given as the kernel.
  const cudaKernelNodeParams refused[] = {
      params_of(reinterpret_cast<const void*>(&report_launch), dim3(1), dim3(1), 1u << 30, args),
      params_of(reinterpret_cast<const void*>(&report_launch), dim3(1), dim3(4096), 0, args),
      params_of(reinterpret_cast<const void*>(&not_a_kernel), dim3(1), dim3(1), 0, args)};
  for (const cudaKernelNodeParams& p : refused) {
    // The runtime's own verdict.
    cudag::unique_graph plain = cudag::make_graph();
    cudaGraphNode_t n = nullptr;
    const cudaError_t runtime_code = cudaGraphAddKernelNode(&n, plain.get(), nullptr, 0, &p);
    (void)cudaGetLastError();
    EXPECT_NE(runtime_code, cudaSuccess);
    const add_outcome without = add_outcome_of(p, false);
    const add_outcome with = add_outcome_of(p, true);
    EXPECT_EQ(without.code, int(runtime_code));
    EXPECT_EQ(with.code, without.code);
    EXPECT_EQ(with.message, without.message);
    EXPECT_EQ(with.last_error, without.last_error);
    EXPECT_EQ(with.nodes, without.nodes);
    EXPECT_NE(with.message.find("too_big"), std::string::npos) << with.message;
    EXPECT_NE(with.message.find("cudaGraphAddKernelNode"), std::string::npos) << with.message;
  }
}

TEST(NativeBatch, ABuilderGraphLowersAndRebindsThroughTheBatch) {
  CUDAG_REQUIRE_GPU();
  constexpr int n = 4096;
  cudag::device_buffer<float> x(n);
  upload(x, std::vector<float>(n, -1.0f));
  cudag::builder b("batched");
  auto px = b.param<float*>("x");
  auto pn = b.param<int>("n");
  auto factor = b.param<float>("factor");
  auto fill_x = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch_over(pn, 256), px, 1.0f, pn);
  auto once = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch_over(pn, 128), px, factor, pn);
  auto twice = b.kernel("scale_again", CUDAG_KERNEL(scale), cudag::launch_over(pn, 64), px, 0.5f, pn);
  b.chain(fill_x, once, twice);
  const cudag::binding binds[] = {cudag::bind("x", x.data()), cudag::bind("n", n),
                                  cudag::bind("factor", 2.0f)};
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  auto e = cudag::instantiate(b.build(), binds);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 1);  // scale_again
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  std::vector<float> h = read_back(x);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[std::size_t(i)], 2.0f * 0.5f * (1.0f + float(i))) << i;
  // A rebind of one reader: the exec remembers the kernel across rebinds,
  // so the first sets it through the runtime and the later ones through
  // the driver.
  const std::uint64_t before_rebinds = cudag::native::same_device_batch::driver_calls();
  e.rebind("factor", 5.0f);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before_rebinds);
  e.rebind("factor", 4.0f);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before_rebinds + 1);
  e.rebind("factor", 3.0f);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before_rebinds + 2);
  e.rebind("n", n / 2);
  e.launch(s.get());
  e.synchronize(s.get());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  h = read_back(x);
  for (int i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(h[std::size_t(i)], i < n / 2 ? 3.0f * 0.5f * (1.0f + float(i)) : 2.0f * 0.5f * (1.0f + float(i)))
        << i;
}

// A captured node's recording is the caller's code: it may change the
// device or build graphs of its own, so it runs with the batch closed, and
// what the batch resolved before is forgotten after it.
TEST(NativeBatch, UserCodeInARecordingRunsWithTheBatchClosed) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> out(8 * 3);
  int* at = out.data();
  int tag = 5;
  void* args[] = {&at, &tag};
  const cudaKernelNodeParams p =
      params_of(reinterpret_cast<const void*>(&report_launch), dim3(1), dim3(32), 0, args);
  cudag::unique_graph outer = cudag::make_graph();
  cudag::unique_graph users = cudag::make_graph();
  cudaStream_t stream = nullptr;
  CUDAG_EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::uint64_t inside_recording = 0, after_recording = 0;
  const std::uint64_t before = cudag::native::same_device_batch::driver_calls();
  {
    const cudag::native::same_device_batch batch;
    (void)cudag::native::add_kernel(outer.get(), {}, p, "k0");
    (void)cudag::native::add_kernel(outer.get(), {}, p, "k1");  // resolved: the driver's
    cudag::unique_graph recorded = cudag::native::record_by_capture(stream, "rec", [&](cudaStream_t) {
      const std::uint64_t start = cudag::native::same_device_batch::driver_calls();
      // The caller's own graph, built while the recording runs: no batch.
      (void)cudag::native::add_kernel(users.get(), {}, p, "u0");
      (void)cudag::native::add_kernel(users.get(), {}, p, "u1");
      inside_recording = cudag::native::same_device_batch::driver_calls() - start;
    });
    const std::uint64_t start = cudag::native::same_device_batch::driver_calls();
    (void)cudag::native::add_kernel(outer.get(), {}, p, "k2");  // forgotten: asked anew
    after_recording = cudag::native::same_device_batch::driver_calls() - start;
  }
  CUDAG_EXPECT_CUDA(cudaStreamDestroy(stream));
  EXPECT_EQ(inside_recording, 0u);
  EXPECT_EQ(after_recording, 0u);
  EXPECT_EQ(cudag::native::same_device_batch::driver_calls(), before + 1);
  for (cudaGraph_t g : {outer.get(), users.get()}) {
    fill(out, poison);
    run_graph(g);
    std::vector<int> expected = expected_rows(5, dim3(1), dim3(32), 0);
    expected.resize(24, poison);
    EXPECT_EQ(read_back(out), expected);
  }
}
