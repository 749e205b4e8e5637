// The DSL exec's public surface beyond launch: node_handle<"name">() (the
// CUDA node of each declared node, of the declared kind, in the exec's own
// graph), native_graph and native_exec, upload, instantiate_with and its
// options as the executable graph sees them, and lower() + instantiate().
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cudag/dsl.hpp"
#include "cudag/handles.hpp"
#include "engine/order_check.hpp"
#include "gpu_support.hpp"
#include "graph_memory_support.hpp"

namespace {

constexpr int n = 64;
constexpr float poison = -555.0f;

__global__ void scale_kernel(float* x, float a, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) x[i] *= a;
}
__global__ void iota_kernel(float* out, float start, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = start + float(i);
}
__global__ void set_condition(cudaGraphConditionalHandle h, const unsigned* value) {
  cudaGraphSetConditional(h, *value);
}

using namespace cudag::dsl;

constexpr auto out = param<"out", float*>;
constexpr auto side = param<"side", float*>;
constexpr auto event = param<"event", cudaEvent_t>;
constexpr auto choice = param<"choice", const unsigned*>;
constexpr auto runs = param<"runs", int*>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto take = condition<"take">;

constexpr auto inner = graph(kernel<"inner_double", scale_kernel>(1, n, out, 2.0f, n));
constexpr auto body = graph(kernel<"times_ten", scale_kernel>(1, n, out, 10.0f, n));

// Every node kind at the top level, declared out of order.
// clang-format off
constexpr auto every_kind = graph(
    if_then<"maybe">(take, body),
    mem_alloc<"alloc">(tmp, n),
    memcpy<"drain">(out, tmp, n * sizeof(float)),
    memset<"set_tmp">(tmp, 1.5f, n),
    kernel<"work", scale_kernel>(1, n, tmp, 2.0f, n),
    mem_free<"release">(tmp),
    host<"note">([](int* count) { ++*count; }, runs),
    child<"sub">(inner),
    captured<"lib", "iota_kernel">(
        [](cudaStream_t s, float* p) { iota_kernel<<<1, n, 0, s>>>(p, 3.0f, n); }, side),
    empty<"join">(),
    record<"rec">(event),
    wait<"hold">(event),
    kernel<"decide", set_condition>(1, 1, take, choice),
    chain<"alloc", "set_tmp", "work", "drain", "release">,
    edges<"drain -> sub -> maybe -> join -> note", "hold -> decide -> maybe",
          "lib -> join -> rec">);
// clang-format on

template <fixed_string... Names, class Exec>
std::vector<cudaGraphNode_t> handles_by_name(const Exec& ex) {
  return {ex.template node_handle<Names>()...};
}

std::vector<float> download(const float* d) {
  std::vector<float> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}
void poison_buffer(float* d) {
  const std::vector<float> h(n, poison);
  CUDAG_EXPECT_CUDA(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
}

TEST(DslExecApi, NodeHandlesAreTheNodesOfTheNativeGraph) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> d_out(n), d_side(n);
  cudag::device_buffer<unsigned> d_choice(1);
  ASSERT_NO_FATAL_FAILURE(poison_buffer(d_out.data()));
  ASSERT_NO_FATAL_FAILURE(poison_buffer(d_side.data()));
  const unsigned yes = 1;
  CUDAG_EXPECT_CUDA(cudaMemcpy(d_choice.data(), &yes, sizeof yes, cudaMemcpyHostToDevice));
  int host_runs = 0;
  auto ev = cudag::make_event();
  auto ex = instantiate(every_kind, out = d_out.data(), side = d_side.data(), event = ev.get(),
                        choice = static_cast<const unsigned*>(d_choice.data()), runs = &host_runs);
  ASSERT_NE(ex.native_exec(), nullptr);
  ASSERT_NE(ex.native_graph(), nullptr);

  // clang-format off
  const std::vector<cudaGraphNode_t> handles = handles_by_name<
      "maybe", "alloc", "drain", "set_tmp", "work", "release", "note", "sub", "lib", "join",
      "rec", "hold", "decide">(ex);
  // clang-format on
  const std::vector<std::pair<std::string, cudaGraphNodeType>> kinds = {
      {"maybe", cudaGraphNodeTypeConditional}, {"alloc", cudaGraphNodeTypeMemAlloc},
      {"drain", cudaGraphNodeTypeMemcpy},      {"set_tmp", cudaGraphNodeTypeMemset},
      {"work", cudaGraphNodeTypeKernel},       {"release", cudaGraphNodeTypeMemFree},
      {"note", cudaGraphNodeTypeHost},         {"sub", cudaGraphNodeTypeGraph},
      {"lib", cudaGraphNodeTypeGraph},         {"join", cudaGraphNodeTypeEmpty},
      {"rec", cudaGraphNodeTypeEventRecord},   {"hold", cudaGraphNodeTypeWaitEvent},
      {"decide", cudaGraphNodeTypeKernel}};
  ASSERT_EQ(handles.size(), kinds.size());
  ASSERT_EQ(ex.node_count, kinds.size());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    ASSERT_NE(handles[i], nullptr) << kinds[i].first;
    cudaGraphNodeType actual{};
    CUDAG_EXPECT_CUDA(cudaGraphNodeGetType(handles[i], &actual));
    EXPECT_EQ(actual, kinds[i].second) << kinds[i].first;
    for (std::size_t k = 0; k < i; ++k) EXPECT_NE(handles[i], handles[k]) << kinds[i].first;
    names.push_back(kinds[i].first);
  }
  auto id = [&](const char* name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const order_test::edge_list declared = {
      {id("alloc"), id("set_tmp")}, {id("set_tmp"), id("work")}, {id("work"), id("drain")},
      {id("drain"), id("release")}, {id("drain"), id("sub")},    {id("sub"), id("maybe")},
      {id("maybe"), id("join")},    {id("join"), id("note")},    {id("hold"), id("decide")},
      {id("decide"), id("maybe")},  {id("lib"), id("join")},     {id("join"), id("rec")}};
  ASSERT_NO_FATAL_FAILURE(
      order_test::expect_native_order(ex.native_graph(), handles, declared, names));

  auto s = cudag::make_stream();
  ex.launch(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  ex.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  const auto h = download(d_out.data()), hs = download(d_side.data());
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(h[i], 1.5f * 2.0f * 2.0f * 10.0f) << i;  // set_tmp, work, sub, maybe
    ASSERT_FLOAT_EQ(hs[i], 3.0f + float(i)) << i;
  }
  EXPECT_EQ(host_runs, 1);
}

constexpr auto start = param<"start", float>;
constexpr auto simple = graph(kernel<"fill", iota_kernel>(1, n, out, start, n));

TEST(DslExecApi, UploadThenLaunchOnAnotherStream) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> d(n);
  ASSERT_NO_FATAL_FAILURE(poison_buffer(d.data()));
  auto ex = instantiate(simple, out = d.data(), start = 5.0f);
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  ex.upload(s1.get());
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(ex.replay_count(), 0u) << "an upload is not a replay";
  ex.launch(s2.get());
  ex.synchronize(s2.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  auto h = download(d.data());
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 5.0f + float(i)) << i;

  // Uploading after a rebind keeps the rebound value.
  EXPECT_EQ(ex.rebind(start = 50.0f), rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(poison_buffer(d.data()));
  ex.upload(s2.get());
  ex.launch(s2.get());
  ex.synchronize(s2.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  h = download(d.data());
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 50.0f + float(i)) << i;
  EXPECT_EQ(ex.replay_count(), 2u);
}

// Allocated and never freed by the graph: only auto-free-on-launch lets it
// be launched again.
// clang-format off
constexpr auto leaves_allocated = graph(
    mem_alloc<"alloc">(tmp, n),
    kernel<"fill_tmp", iota_kernel>(1, n, tmp, 2.0f, n),
    memcpy<"copy_out">(out, tmp, n * sizeof(float)),
    chain<"alloc", "fill_tmp", "copy_out">);
// clang-format on

template <class Exec>
void launch_three_times(Exec& ex, float* d, cudaStream_t s) {
  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_NO_FATAL_FAILURE(poison_buffer(d));
    ex.launch(s);
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    ex.synchronize(s);
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    const auto h = download(d);
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(h[i], 2.0f + float(i)) << "replay " << replay;
  }
}

TEST(DslExecApi, InstantiateWithOptions) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> d(n);
  auto s = cudag::make_stream(), upload_stream = cudag::make_stream();
  {
    auto plain = instantiate(leaves_allocated, out = d.data());
    unsigned long long flags = ~0ull;
    CUDAG_EXPECT_CUDA(cudaGraphExecGetFlags(plain.native_exec(), &flags));
    EXPECT_EQ(flags, 0ull);
  }
  const cudag::instantiate_options options{.auto_free_on_launch = true,
                                           .use_node_priority = true,
                                           .upload = true,
                                           .upload_stream = upload_stream.get()};
  {
    auto ex = instantiate_with(leaves_allocated, options, out = d.data());
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(upload_stream.get()));
    unsigned long long flags = 0;
    CUDAG_EXPECT_CUDA(cudaGraphExecGetFlags(ex.native_exec(), &flags));
    EXPECT_NE(flags & cudaGraphInstantiateFlagAutoFreeOnLaunch, 0ull) << flags;
    // The driver leaves UseNodePriority out of cudaGraphExecGetFlags (H100, CUDA 13.0,
  // driver 580): engine_recording asserts the flag reaches instantiation.
    ASSERT_NO_FATAL_FAILURE(launch_three_times(ex, d.data(), s.get()));
    // Auto-free frees a launch's allocation at the next launch: the last
    // one's is the program's to free.
    ASSERT_NO_THROW(cudag::testing::free_graph_allocation(ex.buffer(tmp)));
  }
  {
    // Lowered first, instantiated later with the same options.
    auto built = lower(leaves_allocated, out = d.data());
    const cudaGraph_t graph = built.native_graph();
    ASSERT_NE(graph, nullptr);
    std::size_t count = 0;
    CUDAG_EXPECT_CUDA(cudaGraphGetNodes(graph, nullptr, &count));
    EXPECT_EQ(count, 3u);
    auto ex = instantiate(std::move(built), options);
    EXPECT_EQ(ex.native_graph(), graph) << "the lowered graph is the exec's template graph";
    unsigned long long flags = 0;
    CUDAG_EXPECT_CUDA(cudaGraphExecGetFlags(ex.native_exec(), &flags));
    EXPECT_NE(flags & cudaGraphInstantiateFlagAutoFreeOnLaunch, 0ull) << flags;
    ASSERT_NO_FATAL_FAILURE(launch_three_times(ex, d.data(), s.get()));
    // Auto-free frees a launch's allocation at the next launch: the last
    // one's is the program's to free.
    ASSERT_NO_THROW(cudag::testing::free_graph_allocation(ex.buffer(tmp)));
  }
}

}  // namespace
