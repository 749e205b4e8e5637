// Capture guard, capture into an existing graph, and import of captured
// graphs, on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

using axpy_kernel_t = cudag::rtc::kernel<void(const float*, float*, float, int)>;

void launch_axpy(const axpy_kernel_t& k, cudaStream_t s, const float* x, float* y, float a, int n) {
  void* args[] = {&x, &y, &a, &n};
  CUDAG_CUDA(cudaLaunchKernel(k.function, dim3((n + 127) / 128), dim3(128), args, 0, s));
}

/// Every element within `relative` of the expectation; NaN fails.
void expect_all_near(const std::vector<float>& got, const std::vector<double>& want, double relative,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(double(got[i]) - want[i]);
    ASSERT_TRUE(d <= relative * std::fabs(want[i])) << what << "[" << i << "] = " << got[i]
                                                    << ", expected " << want[i];
  }
}

std::vector<cudaGraphNode_t> dependencies_of(cudaGraphNode_t node) {
  std::size_t count = 0;
  EXPECT_EQ(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> deps(count);
  if (count) {
    EXPECT_EQ(cudaGraphNodeGetDependencies(node, deps.data(), nullptr, &count), cudaSuccess);
  }
  return deps;
}

std::vector<cudaGraphNode_t> dependents_of(cudaGraphNode_t node) {
  std::size_t count = 0;
  EXPECT_EQ(cudaGraphNodeGetDependentNodes(node, nullptr, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> deps(count);
  if (count) {
    EXPECT_EQ(cudaGraphNodeGetDependentNodes(node, deps.data(), nullptr, &count), cudaSuccess);
  }
  return deps;
}

cudaGraphNodeType type_of(cudaGraphNode_t node) {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  EXPECT_EQ(cudaGraphNodeGetType(node, &type), cudaSuccess);
  return type;
}

/// This thread's capture mode, read without changing it.
cudaStreamCaptureMode current_capture_mode() {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  EXPECT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);  // mode: the previous one
  cudaStreamCaptureMode restore = mode;
  EXPECT_EQ(cudaThreadExchangeStreamCaptureMode(&restore), cudaSuccess);
  return mode;
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
  // Expectations from the CPU alone: x = 2 source; product = (x x) / 4, x
  // column-major. x holds quarters in [1, 4]: every product and partial sum
  // is a multiple of 1/16 far below 2^20, exact in float in any summation
  // order, so the tolerance is a formality.
  std::vector<double> expected_x(count), expected_product(count);
  for (int i = 0; i < count; ++i) expected_x[i] = 2.0 * double(source[i]);
  for (int col = 0; col < dim; ++col)
    for (int row = 0; row < dim; ++row) {
      double sum = 0;
      for (int p = 0; p < dim; ++p) sum += expected_x[p * dim + row] * expected_x[col * dim + p];
      expected_product[col * dim + row] = 0.25 * sum;
    }

  poison_outputs();
  run_native(g.get(), stream.get());
  expect_all_near(download(x.data(), count), expected_x, 1e-6, "x (native run)");
  expect_all_near(download(product.data(), count), expected_product, 1e-6, "product (native run)");

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
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  expect_all_near(download(x.data(), count), expected_x, 1e-6, "x (imported spec)");
  expect_all_near(download(product.data(), count), expected_product, 1e-6, "product (imported spec)");
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

TEST(CaptureGpu, ImportGraphWhoseAllocationsShareAnAddress) {
  // malloc a, malloc b, free a, malloc c, free c, free b, captured: CUDA
  // gives c the address of a. Import pairs each free (and each use) with
  // the allocation live along its dependency path, so check() accepts the
  // graph and a re-lowered spec does the same work.
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 512;
  constexpr std::size_t bytes = count * sizeof(float);
  std::vector<float> first(count), second(count), third(count);
  for (int i = 0; i < count; ++i) {
    first[i] = 1.0f + float(i % 7);
    second[i] = 2.0f + float(i % 5) * 0.5f;
    third[i] = -3.0f + float(i % 11) * 0.25f;
  }
  cudag::device_buffer<float> in1(count), in2(count), in3(count), out1(count), out2(count), out3(count);
  upload(in1.data(), first);
  upload(in2.data(), second);
  upload(in3.data(), third);

  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudag::unique_graph g = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    CUDAG_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&a), bytes, s));
    CUDAG_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&b), bytes, s));
    CUDAG_CUDA(cudaMemcpyAsync(a, in1.data(), bytes, cudaMemcpyDeviceToDevice, s));
    CUDAG_CUDA(cudaMemcpyAsync(b, in3.data(), bytes, cudaMemcpyDeviceToDevice, s));
    launch_scale(scale, s, a, 2.0f, count);
    CUDAG_CUDA(cudaMemcpyAsync(out1.data(), a, bytes, cudaMemcpyDeviceToDevice, s));
    CUDAG_CUDA(cudaFreeAsync(a, s));
    CUDAG_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&c), bytes, s));
    CUDAG_CUDA(cudaMemcpyAsync(c, in2.data(), bytes, cudaMemcpyDeviceToDevice, s));
    launch_scale(scale, s, c, 3.0f, count);
    CUDAG_CUDA(cudaMemcpyAsync(out2.data(), c, bytes, cudaMemcpyDeviceToDevice, s));
    CUDAG_CUDA(cudaFreeAsync(c, s));
    launch_scale(scale, s, b, 5.0f, count);
    CUDAG_CUDA(cudaMemcpyAsync(out3.data(), b, bytes, cudaMemcpyDeviceToDevice, s));
    CUDAG_CUDA(cudaFreeAsync(b, s));
  });
  // The case this test exists for: without the reuse it would pass vacuously.
  EXPECT_EQ(c, a) << "CUDA did not give the second allocation the freed first one's address";
  EXPECT_NE(b, a);

  auto poison_outputs = [&] {
    for (auto* out : {&out1, &out2, &out3}) {
      ASSERT_EQ(cudaMemset(out->data(), 0xFF, bytes), cudaSuccess);  // NaN
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  };
  auto expect_outputs = [&](const char* when) {
    const auto r1 = download(out1.data(), count), r2 = download(out2.data(), count),
               r3 = download(out3.data(), count);
    for (int i = 0; i < count; ++i) {
      ASSERT_EQ(r1[i], 2.0f * first[i]) << when << ": out1[" << i << "]";
      ASSERT_EQ(r2[i], 3.0f * second[i]) << when << ": out2[" << i << "]";
      ASSERT_EQ(r3[i], 5.0f * third[i]) << when << ": out3[" << i << "]";
    }
  };
  poison_outputs();
  run_native(g.get(), stream.get());
  expect_outputs("native run");

  const cudag::graph_spec spec = cudag::import_graph(g.get());
  auto kinds = kinds_of(spec);
  ASSERT_EQ(kinds[cudag::node_kind::mem_alloc], 3u);
  ASSERT_EQ(kinds[cudag::node_kind::mem_free], 3u);
  // Creation order: alloc a, alloc b, ..., free a, alloc c, ..., free c, ..., free b.
  auto freed = [&](const char* free_node) {
    return std::get<cudag::mem_free_node>(spec.find(free_node)->params).buffer;
  };
  EXPECT_EQ(freed("mem_free_0"), "mem_alloc_0");
  EXPECT_EQ(freed("mem_free_1"), "mem_alloc_2");
  EXPECT_EQ(freed("mem_free_2"), "mem_alloc_1");
  // The kernels read the allocation live where they run: a, c, b.
  const char* expected_buffer[] = {"mem_alloc_0", "mem_alloc_2", "mem_alloc_1"};
  for (int k = 0; k < 3; ++k) {
    const std::string kernel_name = "kernel_" + std::to_string(k);
    const auto& kernel = std::get<cudag::kernel_node>(spec.find(kernel_name)->params);
    ASSERT_FALSE(kernel.args.empty()) << kernel_name;
    const auto* ref = std::get_if<cudag::buffer_ref>(&kernel.args[0].source);
    ASSERT_NE(ref, nullptr) << kernel_name << ": its pointer was not read as a buffer";
    EXPECT_EQ(ref->name, expected_buffer[k]) << kernel_name;
  }
  EXPECT_NO_THROW(cudag::check(spec));

  // Round trip through cudag's lowering, twice (a replay reuses the memory).
  poison_outputs();
  auto exec = cudag::instantiate(spec, {});
  for (int replay = 0; replay < 2; ++replay) {
    exec.launch(stream.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
  }
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  // Each replay recomputes the outputs from the unchanged inputs.
  expect_outputs("imported spec");
}

TEST(CaptureGpu, GuardReportsItsStreamAndKind) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 64;
  cudag::device_buffer<float> x(count);

  cudag::capture_guard fresh(stream.get());
  EXPECT_TRUE(fresh.active());
  EXPECT_FALSE(fresh.into_existing_graph());
  EXPECT_EQ(fresh.stream(), stream.get());
  EXPECT_TRUE(cudag::is_capturing(stream.get()));
  launch_scale(scale, stream.get(), x.data(), 2.0f, count);
  cudag::unique_graph captured = fresh.end();
  EXPECT_FALSE(fresh.active());
  EXPECT_EQ(fresh.stream(), nullptr);
  EXPECT_FALSE(cudag::is_capturing(stream.get()));
  EXPECT_EQ(node_count(captured.get()), 1u);

  cudag::unique_graph target = cudag::make_graph();
  cudag::capture_guard into(target.get(), stream.get());
  EXPECT_TRUE(into.active());
  EXPECT_TRUE(into.into_existing_graph());
  EXPECT_EQ(into.stream(), stream.get());
  cudag::capture_guard moved(std::move(into));  // the capture travels with the guard
  EXPECT_FALSE(into.active());
  EXPECT_FALSE(into.into_existing_graph());
  EXPECT_EQ(into.stream(), nullptr);
  EXPECT_TRUE(moved.into_existing_graph());
  EXPECT_EQ(moved.stream(), stream.get());
  launch_scale(scale, stream.get(), x.data(), 2.0f, count);
  EXPECT_EQ(moved.end_into().size(), 1u);
  EXPECT_FALSE(moved.active());
  EXPECT_FALSE(moved.into_existing_graph());
  EXPECT_EQ(node_count(target.get()), 1u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CaptureGpu, MoveAssignmentAbandonsTheOverwrittenCapture) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto first = cudag::make_stream();
  auto second = cudag::make_stream();
  constexpr int count = 256;
  cudag::device_buffer<float> x(count);
  upload(x.data(), std::vector<float>(count, 1.5f));

  cudag::capture_guard kept(first.get());
  launch_scale(scale, first.get(), x.data(), 100.0f, count);  // captured, then abandoned
  cudag::capture_guard other(second.get());
  launch_scale(scale, second.get(), x.data(), 3.0f, count);
  kept = std::move(other);
  EXPECT_FALSE(cudag::is_capturing(first.get())) << "the overwritten capture was not ended";
  EXPECT_TRUE(cudag::is_capturing(second.get()));
  EXPECT_FALSE(other.active());
  EXPECT_EQ(kept.stream(), second.get());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  cudag::capture_guard& same = kept;
  kept = std::move(same);  // self-assignment keeps the capture
  EXPECT_TRUE(kept.active());
  EXPECT_TRUE(cudag::is_capturing(second.get()));

  cudag::unique_graph g = kept.end();
  ASSERT_EQ(node_count(g.get()), 1u);
  run_native(g.get(), second.get());
  // Only the surviving capture ran: 1.5 * 3, not * 100 (the abandoned
  // kernel was captured, never launched).
  for (float v : download(x.data(), count)) ASSERT_EQ(v, 4.5f);
  // The first stream is usable again.
  launch_scale(scale, first.get(), x.data(), 2.0f, count);
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(first.get()));
  for (float v : download(x.data(), count)) ASSERT_EQ(v, 9.0f);
}

TEST(CaptureGpu, CaptureModeScopeSetsAndRestoresTheThreadMode) {
  CUDAG_REQUIRE_GPU();
  const cudaStreamCaptureMode original = current_capture_mode();
  ASSERT_NE(original, cudaStreamCaptureModeRelaxed) << "test design: start from a non-relaxed mode";
  {
    cudag::capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
    EXPECT_EQ(current_capture_mode(), cudaStreamCaptureModeRelaxed);
    {
      cudag::capture_mode_scope local(cudaStreamCaptureModeThreadLocal);
      EXPECT_EQ(current_capture_mode(), cudaStreamCaptureModeThreadLocal);
    }
    EXPECT_EQ(current_capture_mode(), cudaStreamCaptureModeRelaxed);
  }
  EXPECT_EQ(current_capture_mode(), original);
}

TEST(CaptureGpu, CaptureModeScopeAllowsAllocatingDuringACapture) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 128;
  cudag::device_buffer<float> x(count);
  upload(x.data(), std::vector<float>(count, 1.25f));

  void* scratch = nullptr;
  cudag::capture_guard guard(stream.get(), cudaStreamCaptureModeThreadLocal);
  launch_scale(scale, stream.get(), x.data(), 2.0f, count);
  {
    // Thread-local capture forbids cudaMalloc on this thread unless the
    // thread's mode is relaxed.
    cudag::capture_mode_scope relaxed(cudaStreamCaptureModeRelaxed);
    CUDAG_EXPECT_CUDA(cudaMalloc(&scratch, 4096));
  }
  EXPECT_TRUE(cudag::is_capturing(stream.get())) << "the allocation invalidated the capture";
  launch_scale(scale, stream.get(), x.data(), 3.0f, count);
  cudag::unique_graph g = guard.end();  // throws if CUDA invalidated the capture
  CUDAG_EXPECT_CUDA(cudaFree(scratch));
  ASSERT_EQ(node_count(g.get()), 2u);
  run_native(g.get(), stream.get());
  for (float v : download(x.data(), count)) ASSERT_EQ(v, 7.5f);
}

TEST(CaptureGpu, AppendChildToCaptureOrdersTheChildBetweenNeighbours) {
  CUDAG_REQUIRE_GPU();
  const auto scale = extras_test::scale_kernel();
  const auto axpy = extras_test::axpy_kernel();
  auto stream = cudag::make_stream();
  constexpr int count = 300;
  std::vector<float> hx(count), hy(count);
  for (int i = 0; i < count; ++i) {
    hx[i] = 1.0f + float(i % 5);
    hy[i] = -3.0f + float(i % 4);
  }
  cudag::device_buffer<float> x(count), y(count);

  cudag::unique_graph child = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    launch_axpy(axpy, s, x.data(), y.data(), 1.0f, count);  // y += x
  });
  const std::string refused = [&] {
    try {
      (void)cudag::append_child_to_capture(stream.get(), child.get());
    } catch (const cudag::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  }();
  EXPECT_NE(refused.find("not being captured"), std::string::npos) << refused;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  cudaGraphNode_t appended = nullptr;
  cudag::unique_graph g = cudag::capture_graph(stream.get(), [&](cudaStream_t s) {
    launch_scale(scale, s, x.data(), 2.0f, count);          // x *= 2
    appended = cudag::append_child_to_capture(s, child.get());  // y += x
    launch_scale(scale, s, x.data(), 3.0f, count);          // x *= 3
  });
  child.reset();  // the graph holds its own copy
  ASSERT_NE(appended, nullptr);
  ASSERT_EQ(node_count(g.get()), 3u);
  EXPECT_EQ(type_of(appended), cudaGraphNodeTypeGraph);
  cudaGraph_t inner = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphChildGraphNodeGetGraph(appended, &inner));
  EXPECT_EQ(node_count(inner), 1u);
  const auto before = dependencies_of(appended);
  ASSERT_EQ(before.size(), 1u) << "the child does not follow the stream's last captured work";
  EXPECT_EQ(type_of(before[0]), cudaGraphNodeTypeKernel);
  EXPECT_TRUE(dependencies_of(before[0]).empty());
  const auto after = dependents_of(appended);
  ASSERT_EQ(after.size(), 1u) << "later captured work does not depend on the child";
  EXPECT_EQ(type_of(after[0]), cudaGraphNodeTypeKernel);

  // Order shows in the result: y = y0 + 2 x0 (the child between the scales),
  // not y0 + x0 (before) or y0 + 6 x0 (after); x = 6 x0.
  upload(x.data(), hx);
  upload(y.data(), hy);
  run_native(g.get(), stream.get());
  const auto rx = download(x.data(), count), ry = download(y.data(), count);
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(rx[i], 6.0f * hx[i]) << i;
    ASSERT_EQ(ry[i], hy[i] + 2.0f * hx[i]) << i;
  }
}

// ----------------------------------------------- import's opaque nodes --
namespace {

/// A 2-D copy of `rows` rows of `width` floats, `src` rows `src_pitch`
/// bytes apart into `dst` rows `dst_pitch` bytes apart: import keeps it
/// opaque (a one-node clone of its graph).
cudaMemcpy3DParms copy_2d(float* dst, std::size_t dst_pitch, const float* src,
                          std::size_t src_pitch, std::size_t width, std::size_t rows) {
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<float*>(src), src_pitch, width * sizeof(float), rows};
  p.dstPtr = cudaPitchedPtr{dst, dst_pitch, width * sizeof(float), rows};
  p.extent = cudaExtent{width * sizeof(float), rows, 1};  // width in bytes: no arrays
  p.kind = cudaMemcpyDeviceToDevice;
  return p;
}

}  // namespace

TEST(CaptureGpu, ImportedTwoDimensionalCopyIsLoweredAsAnOpaqueCloneAndRuns) {
  CUDAG_REQUIRE_GPU();
  auto stream = cudag::make_stream();
  constexpr std::size_t width = 64, rows = 8, dst_row = 2 * width;  // dst rows twice as wide
  std::vector<float> source(width * rows);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = 1.5f + float(i % 97) * 0.25f;
  cudag::device_buffer<float> src(width * rows), dst(dst_row * rows);
  upload(src.data(), source);

  cudaGraph_t raw = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphCreate(&raw, 0));
  cudag::unique_graph g(raw);
  const cudaMemcpy3DParms p =
      copy_2d(dst.data(), dst_row * sizeof(float), src.data(), width * sizeof(float), width, rows);
  cudaGraphNode_t copy = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphAddMemcpyNode(&copy, g.get(), nullptr, 0, &p));

  const cudag::graph_spec spec = cudag::import_graph(g.get());
  ASSERT_EQ(spec.nodes.size(), 1u);
  const auto* kept = std::get_if<cudag::captured_node>(&spec.find("memcpy_0")->params);
  ASSERT_NE(kept, nullptr) << "a 2-D copy was not kept opaque";
  EXPECT_EQ(kept->what, "opaque memcpy_0 (2-D/3-D or array copy)");
  g.reset();  // the imported spec holds its own clone

  // Poisoned (NaN everywhere): the copy must write each row's first
  // `width` floats and leave the rest of every row alone.
  CUDAG_EXPECT_CUDA(cudaMemset(dst.data(), 0xFF, dst_row * rows * sizeof(float)));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());
  auto exec = cudag::instantiate(spec, {});
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());

  std::vector<std::uint32_t> result(dst_row * rows, 0);
  CUDAG_EXPECT_CUDA(cudaMemcpy(result.data(), dst.data(), result.size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < dst_row; ++c) {
      const std::uint32_t got = result[r * dst_row + c];
      if (c < width) {
        float value = 0;
        std::memcpy(&value, &got, sizeof value);
        ASSERT_EQ(value, source[r * width + c]) << "row " << r << ", column " << c;
      } else {
        ASSERT_EQ(got, 0xFFFFFFFFu) << "row " << r << ", column " << c << " was written";
      }
    }
}

TEST(CaptureGpu, ImportedOpaqueNodeOfAGraphThatCannotBeClonedIsRefusedWhenLowered) {
  CUDAG_REQUIRE_GPU();
  constexpr std::size_t width = 16, rows = 4;
  cudag::device_buffer<float> src(width * rows), dst(width * rows);
  int device = 0;
  CUDAG_EXPECT_CUDA(cudaGetDevice(&device));

  // An allocation and its free beside a 2-D copy: CUDA clones no graph
  // holding memory nodes, so import cannot keep the copy.
  cudaGraph_t raw = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphCreate(&raw, 0));
  cudag::unique_graph g(raw);
  cudaMemAllocNodeParams alloc{};
  alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc.poolProps.location.type = cudaMemLocationTypeDevice;
  alloc.poolProps.location.id = device;
  alloc.bytesize = 1024;
  cudaGraphNode_t alloc_node = nullptr, free_node = nullptr, copy = nullptr;
  CUDAG_EXPECT_CUDA(cudaGraphAddMemAllocNode(&alloc_node, g.get(), nullptr, 0, &alloc));
  CUDAG_EXPECT_CUDA(cudaGraphAddMemFreeNode(&free_node, g.get(), &alloc_node, 1, alloc.dptr));
  const cudaMemcpy3DParms p =
      copy_2d(dst.data(), width * sizeof(float), src.data(), width * sizeof(float), width, rows);
  CUDAG_EXPECT_CUDA(cudaGraphAddMemcpyNode(&copy, g.get(), nullptr, 0, &p));

  const cudag::graph_spec spec = cudag::import_graph(g.get());
  ASSERT_NE(std::get_if<cudag::captured_node>(&spec.find("memcpy_0")->params), nullptr);
  EXPECT_TRUE(std::holds_alternative<cudag::mem_alloc_node>(spec.find("mem_alloc_0")->params));
  CUDAG_EXPECT_CUDA(cudaGetLastError());  // the refused clone left no error behind
  try {
    (void)cudag::lower(spec, {});
    ADD_FAILURE() << "an opaque node without a clone was lowered";
  } catch (const cudag::error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("imported node 'memcpy_0' is opaque (2-D/3-D or array copy) and its "
                            "graph cannot be cloned (cudaGraphClone failed: ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("), so it cannot be lowered"), std::string::npos) << message;
    EXPECT_EQ(e.node(), "memcpy_0");
    EXPECT_EQ(e.call(), "cudaGraphClone");
    EXPECT_EQ(e.code(), cudaErrorNotSupported);
  }
  CUDAG_EXPECT_CUDA(cudaGetLastError());  // the thread can go on
}
