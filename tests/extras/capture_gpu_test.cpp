// Capture guard, capture into an existing graph, and import of captured
// graphs, on a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudag/blas.hpp"
#include "cudag/capture.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/import.hpp"
#include "gpu_support.hpp"
#include "test_kernels.hpp"

namespace {

using scale_kernel_t = cudag::rtc::kernel<void(float*, float, int)>;

void launch_scale(const scale_kernel_t& k, cudaStream_t s, float* x, float a, int n) {
  void* args[] = {&x, &a, &n};
  CUDAG_CUDA(cudaLaunchKernel(k.function, dim3((n + 127) / 128), dim3(128), args, 0, s));
}

std::vector<float> download(const float* device, std::size_t count) {
  std::vector<float> host(count, -7.0f);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

void upload(float* device, const std::vector<float>& host) {
  ASSERT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  // Launch streams are non-blocking: finish this legacy-stream work first.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

std::size_t node_count(cudaGraph_t g) {
  std::size_t n = 0;
  EXPECT_EQ(cudaGraphGetNodes(g, nullptr, &n), cudaSuccess);
  return n;
}

std::map<cudag::node_kind, std::size_t> kinds_of(const cudag::graph_spec& spec) {
  std::map<cudag::node_kind, std::size_t> kinds;
  for (const auto& n : spec.nodes) ++kinds[n.kind()];
  return kinds;
}

void run_native(cudaGraph_t g, cudaStream_t s) {
  cudaGraphExec_t raw = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&raw, g, 0), cudaSuccess);
  cudag::unique_graph_exec exec(raw);
  ASSERT_EQ(cudaGraphLaunch(raw, s), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
}

}  // namespace

TEST(CaptureGpu, CudaFailureInsideCaptureLeavesTheThreadUsable) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  cudag::device_buffer<float> x(256);
  try {
    cudag::capture_guard guard(stream.get());
    launch_scale(scale, stream.get(), x.data(), 2.0f, 256);
    void* forbidden = nullptr;
    // Allocating while this thread captures in thread-local mode is illegal:
    // CUDA refuses and invalidates the capture; CUDAG_CUDA throws.
    CUDAG_CUDA(cudaMalloc(&forbidden, 1024));
    FAIL() << "cudaMalloc succeeded inside a thread-local capture";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.call(), "cudaMalloc") << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FALSE(cudag::is_capturing(stream.get()));

  void* later = nullptr;
  CUDAG_EXPECT_CUDA(cudaMalloc(&later, 4096));
  CUDAG_EXPECT_CUDA(cudaFree(later));

  // A new capture on the same stream and thread works and runs.
  upload(x.data(), std::vector<float>(256, 1.5f));
  cudag::unique_graph g = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    launch_scale(scale, s, x.data(), 4.0f, 256);
  });
  ASSERT_TRUE(g);
  EXPECT_EQ(node_count(g.get()), 1u);
  run_native(g.get(), stream.get());
  for (float v : download(x.data(), 256)) ASSERT_EQ(v, 6.0f);
}

TEST(CaptureGpu, UserExceptionInsideCaptureLeavesTheStreamUsable) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  cudag::device_buffer<float> x(128);
  upload(x.data(), std::vector<float>(128, 3.0f));
  EXPECT_THROW((void)cudag::capture_graph(stream.get(),
                                          [&](cudaStream_t s) {
                                            launch_scale(scale, s, x.data(), 100.0f, 128);
                                            throw std::runtime_error("user code failed mid-capture");
                                          }),
               std::runtime_error);
  EXPECT_FALSE(cudag::is_capturing(stream.get()));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // The abandoned capture never ran: x is as uploaded.
  launch_scale(scale, stream.get(), x.data(), 2.0f, 128);
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(stream.get()));
  for (float v : download(x.data(), 128)) ASSERT_EQ(v, 6.0f);
}

TEST(CaptureGpu, CaptureIntoAnExistingGraph) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 512;
  cudag::device_buffer<float> x(count);
  upload(x.data(), std::vector<float>(count, -9.0f));  // poison: the memset must run first

  cudag::unique_graph g = cudag::make_graph();
  cudaMemsetParams fill{};
  fill.dst = x.data();
  fill.value = 0x40000000u;  // 2.0f
  fill.elementSize = 4;
  fill.width = count;
  fill.height = 1;
  cudaGraphNode_t memset_node = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphAddMemsetNode(&memset_node, g.get(), nullptr, 0, &fill));

  // An abandoned region leaves the graph as it was.
  {
    cudag::capture_guard region(g.get(), stream.get(), std::span(&memset_node, 1));
    launch_scale(scale, stream.get(), x.data(), 10.0f, count);
    region.abandon();
  }
  EXPECT_EQ(node_count(g.get()), 1u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  cudag::capture_guard region(g.get(), stream.get(), std::span(&memset_node, 1));
  EXPECT_THROW((void)region.end(), cudag::error);  // end() is for new graphs
  ASSERT_TRUE(region.active());
  launch_scale(scale, stream.get(), x.data(), 3.0f, count);
  launch_scale(scale, stream.get(), x.data(), 0.5f, count);
  const std::vector<cudaGraphNode_t> leaves = region.end_into();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(node_count(g.get()), 3u);

  run_native(g.get(), stream.get());
  for (float v : download(x.data(), count)) ASSERT_EQ(v, 3.0f);

  const cudag::graph_spec spec = cudag::import_graph(g.get());
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.nodes[0].name, "memset_0");
  EXPECT_EQ(spec.nodes[1].name, "kernel_0");
  EXPECT_EQ(spec.nodes[1].deps, std::vector<std::string>{"memset_0"});
  EXPECT_EQ(spec.nodes[2].deps, std::vector<std::string>{"kernel_0"});
}

TEST(CaptureGpu, ImportCapturedKernelsMemcpyAndCublas) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int dim = 32, count = dim * dim;
  std::vector<float> source(count);
  for (int i = 0; i < count; ++i) source[i] = 0.5f + float(i % 13) * 0.125f;
  cudag::device_buffer<float> staged(count), x(count), product(count);
  upload(staged.data(), source);

  // memcpy -> scale -> GEMM (product = x * x) -> scale product
  cudag::blas::gemm_call gemm({.m = dim, .n = dim, .k = dim}, "captured_gemm");
  cudag::unique_graph g = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    CUDAG_CUDA(cudaMemcpyAsync(x.data(), staged.data(), x.bytes(), cudaMemcpyDeviceToDevice, s));
    launch_scale(scale, s, x.data(), 2.0f, count);
    gemm(s, x.data(), x.data(), product.data(), 1.0f, 0.0f);
    launch_scale(scale, s, product.data(), 0.25f, count);
  });

  auto poison_outputs = [&] {
    ASSERT_EQ(cudaMemset(x.data(), 0xFF, x.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMemset(product.data(), 0xFF, product.bytes()), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the launch stream is non-blocking
  };
  poison_outputs();
  run_native(g.get(), stream.get());
  const std::vector<float> expected_x = download(x.data(), count);
  const std::vector<float> expected_product = download(product.data(), count);
  ASSERT_EQ(expected_x[5], source[5] * 2.0f);

  const cudag::graph_spec spec = cudag::import_graph(g.get(), {.name = "captured"});
  EXPECT_EQ(spec.name, "captured");
  EXPECT_EQ(spec.nodes.size(), node_count(g.get()));
  auto kinds = kinds_of(spec);
  EXPECT_EQ(kinds[cudag::node_kind::memcpy], 1u);
  // Our two kernels plus at least one from cuBLAS (read, or kept opaque).
  EXPECT_GE(kinds[cudag::node_kind::kernel] + kinds[cudag::node_kind::captured], 3u);
  EXPECT_EQ(spec.nodes[0].name, "memcpy_0");
  EXPECT_EQ(spec.nodes[1].name, "kernel_0");
  EXPECT_EQ(spec.nodes[1].deps, std::vector<std::string>{"memcpy_0"});
  const auto& first_kernel = std::get<cudag::kernel_node>(spec.nodes[1].params);
  EXPECT_EQ(first_kernel.grid.x, unsigned((count + 127) / 128));
  EXPECT_EQ(first_kernel.block.x, 128u);
  ASSERT_EQ(first_kernel.args.size(), 3u);  // float*, float, int as literal bytes
  const auto& a_bytes = std::get<cudag::literal>(first_kernel.args[1].source).bytes;
  float a = 0;
  ASSERT_EQ(a_bytes.size(), sizeof a);
  std::memcpy(&a, a_bytes.data(), sizeof a);
  EXPECT_EQ(a, 2.0f);
  EXPECT_NE(first_kernel.function_name.find("scale"), std::string::npos) << first_kernel.function_name;

  // The analyses apply to the imported graph.
  EXPECT_NO_THROW(cudag::check(spec));
  const cudag::graph_analysis shape = cudag::analyze(spec);
  EXPECT_EQ(shape.order.size(), spec.nodes.size());
  EXPECT_GE(shape.critical_path, 4u);
  EXPECT_EQ(shape.width, 1u);  // one stream: a chain

  // Round trip: the imported spec, lowered and run, has the same effect.
  poison_outputs();
  auto exec = cudag::instantiate(spec, {});
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  EXPECT_EQ(download(x.data(), count), expected_x);
  EXPECT_EQ(download(product.data(), count), expected_product);
}

TEST(CaptureGpu, ImportGraphWithAllocFreeAndChild) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 256;
  cudag::device_buffer<float> out(count);
  upload(out.data(), std::vector<float>(count, 1.0f));

  cudag::unique_graph inner = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    launch_scale(scale, s, out.data(), 5.0f, count);
  });
  cudag::unique_graph g = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    float* scratch = nullptr;
    CUDAG_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&scratch), count * sizeof(float), s));
    CUDAG_CUDA(cudaMemcpyAsync(scratch, out.data(), count * sizeof(float), cudaMemcpyDeviceToDevice, s));
    launch_scale(scale, s, scratch + 16, 3.0f, count - 16);
    CUDAG_CUDA(cudaMemcpyAsync(out.data(), scratch, count * sizeof(float), cudaMemcpyDeviceToDevice, s));
    CUDAG_CUDA(cudaFreeAsync(scratch, s));
  });
  cudaGraphNode_t child = nullptr;
  std::size_t n = node_count(g.get());
  std::vector<cudaGraphNode_t> nodes(n);
  CUDAG_EXPECT_CUDA(cudaGraphGetNodes(g.get(), nodes.data(), &n));
  CUDAG_EXPECT_CUDA(cudaGraphAddChildGraphNode(&child, g.get(), &nodes.back(), 1, inner.get()));

  const cudag::graph_spec spec = cudag::import_graph(g.get());
  auto kinds = kinds_of(spec);
  EXPECT_EQ(kinds[cudag::node_kind::mem_alloc], 1u);
  EXPECT_EQ(kinds[cudag::node_kind::mem_free], 1u);
  EXPECT_EQ(kinds[cudag::node_kind::child], 1u);
  const auto& alloc = std::get<cudag::mem_alloc_node>(spec.find("mem_alloc_0")->params);
  EXPECT_EQ(alloc.bytes, count * sizeof(float));
  EXPECT_EQ(std::get<cudag::mem_free_node>(spec.find("mem_free_0")->params).buffer, "mem_alloc_0");
  const auto& kernel = std::get<cudag::kernel_node>(spec.find("kernel_0")->params);
  const auto& scratch_arg = std::get<cudag::buffer_ref>(kernel.args[0].source);
  EXPECT_EQ(scratch_arg.name, "mem_alloc_0");
  EXPECT_EQ(scratch_arg.offset_bytes, 16 * sizeof(float));
  const auto& child_spec = *std::get<cudag::child_node>(spec.find("child_0")->params).graph;
  ASSERT_EQ(child_spec.nodes.size(), 1u);
  EXPECT_EQ(child_spec.nodes[0].kind(), cudag::node_kind::kernel);
  EXPECT_NO_THROW(cudag::check(spec));  // the buffer checks see the kernel's use of the allocation

  // Round trip through cudag's own lowering: alloc, copy, scale, copy, free, child.
  auto exec = cudag::instantiate(spec, {});
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  const auto result = download(out.data(), count);
  for (int i = 0; i < count; ++i) ASSERT_EQ(result[i], (i < 16 ? 1.0f : 3.0f) * 5.0f) << i;
}
