// DSL graphs of every node kind, run on the GPU with real data: outputs are
// poisoned first, inputs are never zeros, every CUDA call is checked, and
// rebinding is checked across replays.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "cudag/dsl.hpp"
#include "cudag/handles.hpp"
#include "gpu_support.hpp"

namespace {

constexpr int N = 1000;
constexpr float poison = -777.0f;

__global__ void scale_kernel(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void axpy_kernel(const float* x, float* y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
__global__ void fill_kernel(float* out, float v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}
__global__ void add_kernel(float* out, float v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += v;
}
__global__ void loop_step(cudaGraphConditionalHandle more, int* counter, int limit) {
  if (threadIdx.x == 0) {
    const int c = ++*counter;
    cudaGraphSetConditional(more, c < limit ? 1u : 0u);
  }
}
__global__ void set_condition(cudaGraphConditionalHandle h, const unsigned* value) {
  if (threadIdx.x == 0) cudaGraphSetConditional(h, *value);
}
/// No bounds guard: thread 0 of every block launched writes blockIdx.x + 1
/// to its slot and counts the block.
__global__ void mark_blocks(unsigned* slot, unsigned* blocks_seen, int n) {
  (void)n;  // sizes the grid only
  if (threadIdx.x == 0) {
    slot[blockIdx.x] = blockIdx.x + 1;
    atomicAdd(blocks_seen, 1u);
  }
}

using namespace cudag::dsl;

std::vector<float> download(const float* d, int n) {
  std::vector<float> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}
void upload(float* d, const std::vector<float>& v) {
  ASSERT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  // Launch streams are non-blocking: finish this legacy-stream work first.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}
void poison_buffer(float* d, int n) { upload(d, std::vector<float>(n, poison)); }
std::vector<float> iota_plus_one(int n, float factor = 1.0f) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = factor * float(i + 1);
  return v;
}

constexpr auto x = param<"x", float*>;
constexpr auto y = param<"y", float*>;
constexpr auto n = param<"n", int>;

// clang-format off
constexpr auto saxpy = graph(
    memset<"clear_y">(y, 0, N),
    kernel<"scale", scale_kernel>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<"axpy", axpy_kernel>(blocks_for(n, 256), 256, x, y, 3.0f, n),
    edge<"clear_y", "axpy">, edge<"scale", "axpy">);
// clang-format on

TEST(DslGpu, SaxpyRunsAndRebindsAcrossReplays) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> dx(N), dx2(N), dy(N);
  upload(dx.data(), iota_plus_one(N));
  upload(dx2.data(), iota_plus_one(N, 10.0f));
  poison_buffer(dy.data(), N);
  auto stream = cudag::make_stream();

  auto ex = instantiate(saxpy, x = dx.data(), y = dy.data(), n = N);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  auto out = download(dy.data(), N);
  for (int i = 0; i < N; ++i) ASSERT_FLOAT_EQ(out[i], 6.0f * float(i + 1)) << i;  // y = 3 * (2 x)

  // x read by 2 of 3 nodes: too few for a whole-graph update to pay off.
  EXPECT_EQ(ex.rebind(x = dx2.data()), rebind_path::node_setters);
  poison_buffer(dy.data(), N);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  out = download(dy.data(), N);
  for (int i = 0; i < N; ++i) ASSERT_FLOAT_EQ(out[i], 60.0f * float(i + 1)) << i;
  auto x2 = download(dx2.data(), N);
  EXPECT_FLOAT_EQ(x2[N - 1], 20.0f * N);  // scaled once in place

  // A smaller n shrinks the grid too (counted block by block in
  // BlocksForFollowsTheCountOnBothPaths): the tail stays poisoned.
  poison_buffer(dy.data(), N);
  EXPECT_EQ(ex.rebind(n = 100), rebind_path::node_setters);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  out = download(dy.data(), N);
  EXPECT_FLOAT_EQ(out[99], 6.0f * 20.0f * 100.0f);
  EXPECT_FLOAT_EQ(out[100], 0.0f);  // cleared by memset (width is fixed), not written
  EXPECT_EQ(ex.replay_count(), 3u);
  EXPECT_FALSE(ex.driver_dot().empty());
}

constexpr auto slots = param<"slots", unsigned*>;
constexpr auto blocks_seen = param<"blocks_seen", unsigned*>;
constexpr auto marking =
    graph(kernel<"mark", mark_blocks>(blocks_for(n, 256), 256, slots, blocks_seen, n));

TEST(DslGpu, BlocksForFollowsTheCountOnBothPaths) {
  CUDAG_REQUIRE_GPU();
  constexpr unsigned max_blocks = 32, unwritten = 0xEEEEEEEEu;
  cudag::device_buffer<unsigned> slot(max_blocks), seen(1);
  auto stream = cudag::make_stream();
  auto ex = instantiate(marking, slots = slot.data(), blocks_seen = seen.data(), n = 1000);
  // The kernel has no bounds guard: the slots written are the blocks launched.
  auto expect_blocks = [&](unsigned blocks) {
    CUDAG_EXPECT_CUDA(cudaMemset(slot.data(), 0xEE, max_blocks * sizeof(unsigned)));
    CUDAG_EXPECT_CUDA(cudaMemset(seen.data(), 0, sizeof(unsigned)));
    CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
    ex.launch(stream.get());
    ex.synchronize(stream.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    std::vector<unsigned> h(max_blocks);
    unsigned counted = 0;
    CUDAG_EXPECT_CUDA(cudaMemcpy(h.data(), slot.data(), max_blocks * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost));
    CUDAG_EXPECT_CUDA(cudaMemcpy(&counted, seen.data(), sizeof counted, cudaMemcpyDeviceToHost));
    EXPECT_EQ(counted, blocks);
    for (unsigned k = 0; k < max_blocks; ++k)
      ASSERT_EQ(h[k], k < blocks ? k + 1 : unwritten)
          << "slot " << k << " of " << blocks << " blocks";
  };
  ASSERT_NO_FATAL_FAILURE(expect_blocks(4));  // ceil(1000 / 256)
  EXPECT_EQ(ex.rebind(n = 100), rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(1));
  EXPECT_EQ(ex.rebind(n = 257), rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(2));
  ex.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(ex.rebind(n = int(256 * max_blocks)), rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(max_blocks));
  EXPECT_EQ(ex.rebind(n = 512), rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(2));
  ex.set_rebind_policy(cudag::rebind_policy::node_setters);
  EXPECT_EQ(ex.rebind(n = 1), rebind_path::node_setters);
  ASSERT_NO_FATAL_FAILURE(expect_blocks(1));
}

constexpr auto acc = param<"acc", float*>;
constexpr auto side = param<"side", float*>;
// clang-format off
constexpr auto ten = graph(
    kernel<"a0", add_kernel>(4, 256, acc, 1.0f, N), kernel<"a1", add_kernel>(4, 256, acc, 1.0f, N),
    kernel<"a2", add_kernel>(4, 256, acc, 1.0f, N), kernel<"a3", add_kernel>(4, 256, acc, 1.0f, N),
    kernel<"a4", add_kernel>(4, 256, acc, 1.0f, N), kernel<"a5", add_kernel>(4, 256, acc, 1.0f, N),
    kernel<"a6", add_kernel>(4, 256, acc, 1.0f, N), kernel<"a7", add_kernel>(4, 256, acc, 1.0f, N),
    kernel<"a8", add_kernel>(4, 256, acc, 1.0f, N), kernel<"mark", fill_kernel>(4, 256, side, 42.0f, N),
    chain<"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "mark">);
// clang-format on

TEST(DslGpu, RebindChoosesSettersOrWholeUpdateAndKeepsBoth) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<float> a(N), b(N), s1(N), s2(N);
  upload(a.data(), iota_plus_one(N));
  upload(b.data(), iota_plus_one(N, 2.0f));
  poison_buffer(s1.data(), N);
  poison_buffer(s2.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(ten, acc = a.data(), side = s1.data());

  // side: one reader of ten nodes: per-node exec setter.
  EXPECT_EQ(ex.rebind(side = s2.data()), rebind_path::node_setters);
  // acc: nine readers, forced through a whole-graph update, which must keep
  // side's earlier per-node rebind.
  ex.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(ex.rebind(acc = b.data()), rebind_path::whole_graph_update);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  const auto out_a = download(a.data(), N), out_b = download(b.data(), N);
  const auto out_s1 = download(s1.data(), N), out_s2 = download(s2.data(), N);
  for (int i = 0; i < N; ++i) {
    ASSERT_FLOAT_EQ(out_a[i], float(i + 1)) << i;             // not touched
    ASSERT_FLOAT_EQ(out_b[i], 2.0f * float(i + 1) + 9.0f) << i;
    ASSERT_FLOAT_EQ(out_s1[i], poison) << i;
    ASSERT_FLOAT_EQ(out_s2[i], 42.0f) << i;
  }
  // Rebind between two replays, no host sync between them: stream order.
  ex.launch(stream.get());
  EXPECT_EQ(ex.rebind(acc = a.data()), rebind_path::whole_graph_update);  // still forced
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(b.data(), N)[0], 2.0f + 18.0f);
  EXPECT_FLOAT_EQ(download(a.data(), N)[0], 1.0f + 9.0f);

  // Disable one node: its work is skipped; enable it again.
  ex.set_enabled<"a4">(false);
  EXPECT_FALSE(ex.enabled<"a4">());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(a.data(), N)[0], 10.0f + 8.0f);
  ex.set_enabled<"a4">(true);
  EXPECT_TRUE(ex.enabled<"a4">());
}

constexpr auto bytes_out = param<"bytes_out", unsigned char*>;
constexpr auto halves_out = param<"halves_out", unsigned short*>;
constexpr auto floats_out = param<"floats_out", float*>;
constexpr auto tile_out = param<"tile_out", unsigned*>;
constexpr auto src = param<"src", const float*>;
constexpr auto fill_value = param<"fill_value", float>;

TEST(DslGpu, MemsetAndMemcpyNodes) {
  CUDAG_REQUIRE_GPU();
  constexpr int pitch = 64 * sizeof(unsigned);
  cudag::device_buffer<unsigned char> b(128);
  cudag::device_buffer<unsigned short> h(128);
  cudag::device_buffer<float> f(128), f2(128), in(128);
  cudag::device_buffer<unsigned> t(64 * 4);
  CUDAG_EXPECT_CUDA(cudaMemset(b.data(), 0x11, 128));
  CUDAG_EXPECT_CUDA(cudaMemset(h.data(), 0x11, 256));
  CUDAG_EXPECT_CUDA(cudaMemset(t.data(), 0x11, 64 * 4 * sizeof(unsigned)));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
  poison_buffer(f.data(), 128);
  poison_buffer(f2.data(), 128);
  upload(in.data(), iota_plus_one(128));
  auto stream = cudag::make_stream();
  constexpr auto g2 = graph(
      memset<"bytes">(bytes_out, static_cast<unsigned char>(0xAB), 100),
      memset<"halves">(halves_out, static_cast<unsigned short>(0xBEEF), 100),
      memset<"floats">(floats_out, fill_value, 100),
      memset_2d<"tile">(tile_out, pitch, 0xC0FFEEu, 16, 4),
      memcpy<"copy">(floats_out, src, 50 * sizeof(float)), edge<"floats", "copy">);
  auto ex = instantiate(g2, bytes_out = b.data(), halves_out = h.data(), floats_out = f.data(),
                        tile_out = t.data(), src = static_cast<const float*>(in.data()),
                        fill_value = 2.5f);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  std::vector<unsigned char> hb(128);
  std::vector<unsigned short> hh(128);
  std::vector<unsigned> ht(64 * 4);
  CUDAG_EXPECT_CUDA(cudaMemcpy(hb.data(), b.data(), 128, cudaMemcpyDeviceToHost));
  CUDAG_EXPECT_CUDA(cudaMemcpy(hh.data(), h.data(), 256, cudaMemcpyDeviceToHost));
  CUDAG_EXPECT_CUDA(cudaMemcpy(ht.data(), t.data(), ht.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(hb[99], 0xAB);
  EXPECT_EQ(hb[100], 0x11);
  EXPECT_EQ(hh[99], 0xBEEF);
  EXPECT_EQ(hh[100], 0x1111);
  for (int row = 0; row < 4; ++row) {
    EXPECT_EQ(ht[row * 64 + 15], 0xC0FFEEu) << row;
    EXPECT_EQ(ht[row * 64 + 16], 0x11111111u) << row;
  }
  auto hf = download(f.data(), 128);
  EXPECT_FLOAT_EQ(hf[0], 1.0f);    // copied over the fill
  EXPECT_FLOAT_EQ(hf[49], 50.0f);
  EXPECT_FLOAT_EQ(hf[50], 2.5f);   // filled
  EXPECT_FLOAT_EQ(hf[100], poison);

  // memset destination and value, memcpy destination: all follow a rebind
  // (two readers of five nodes: per-node setters).
  EXPECT_EQ(ex.rebind(floats_out = f2.data(), fill_value = 7.5f), rebind_path::node_setters);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  auto hf2 = download(f2.data(), 128);
  EXPECT_FLOAT_EQ(hf2[10], 11.0f);
  EXPECT_FLOAT_EQ(hf2[60], 7.5f);
  EXPECT_FLOAT_EQ(download(f.data(), 128)[60], 2.5f);  // old target unchanged
}

TEST(DslGpu, HostNodeSeesBoundValuesAndReportsFailuresByName) {
  CUDAG_REQUIRE_GPU();
  constexpr auto sink = param<"sink", int*>;
  constexpr auto value = param<"value", int>;
  constexpr auto g = graph(host<"store">([](int* out, int v, int k) { *out = v * 10 + k; }, sink, value, 3),
                           host<"check">([](int v) {
                             if (v < 0) throw std::runtime_error("negative value");
                           }, value),
                           edge<"store", "check">);
  int seen = -1;
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, sink = &seen, value = 4);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_EQ(seen, 43);
  EXPECT_EQ(ex.rebind(value = 9), rebind_path::node_setters);  // 2 readers: fewer than 16
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_EQ(seen, 93);
  EXPECT_EQ(ex.rebind(value = -1), rebind_path::node_setters);
  ex.launch(stream.get());
  try {
    ex.synchronize(stream.get());
    FAIL() << "the host node's exception was not reported";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "check");
  }
}

TEST(DslGpu, CapturedNodeIsRecordedAgainOnRebind) {
  CUDAG_REQUIRE_GPU();
  constexpr auto dst = param<"dst", float*>;
  constexpr auto count = param<"count", int>;
  constexpr auto g = graph(
      captured<"async_fill", "fill_kernel + add_kernel">(
          [](cudaStream_t s, float* out, int c) {
            fill_kernel<<<(c + 255) / 256, 256, 0, s>>>(out, 5.0f, c);
            add_kernel<<<(c + 255) / 256, 256, 0, s>>>(out, 0.5f, c);
          },
          dst, count),
      kernel<"after", add_kernel>(blocks_for(count, 256), 256, dst, 1.0f, count),
      edge<"async_fill", "after">);
  cudag::device_buffer<float> d1(N), d2(N);
  poison_buffer(d1.data(), N);
  poison_buffer(d2.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, dst = d1.data(), count = N);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_FLOAT_EQ(download(d1.data(), N)[N - 1], 6.5f);
  // Re-recorded and set with cudaGraphExecChildGraphNodeSetParams.
  EXPECT_EQ(ex.rebind(dst = d2.data()), rebind_path::node_setters);
  poison_buffer(d1.data(), N);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d2.data(), N)[0], 6.5f);
  EXPECT_FLOAT_EQ(download(d1.data(), N)[0], poison);
}

TEST(DslGpu, ChildGraphReadsOuterParameters) {
  CUDAG_REQUIRE_GPU();
  constexpr auto out = param<"out", float*>;
  constexpr auto inner = graph(kernel<"inner_fill", fill_kernel>(4, 256, out, 3.0f, N),
                               kernel<"inner_add", add_kernel>(4, 256, out, 0.25f, N),
                               edge<"inner_fill", "inner_add">);
  constexpr auto g = graph(empty<"start">(), child<"sub">(inner),
                           kernel<"outer_add", add_kernel>(4, 256, out, 1.0f, N),
                           chain<"start", "sub", "outer_add">);
  cudag::device_buffer<float> d1(N), d2(N);
  poison_buffer(d1.data(), N);
  poison_buffer(d2.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, out = d1.data());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d1.data(), N)[7], 4.25f);
  // Read inside the child: updated through the template graph.
  EXPECT_EQ(ex.rebind(out = d2.data()), rebind_path::whole_graph_update);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d2.data(), N)[N - 1], 4.25f);
}

TEST(DslGpu, EventRecordAndWaitNodes) {
  CUDAG_REQUIRE_GPU();
  constexpr auto event = param<"event", cudaEvent_t>;
  constexpr auto out = param<"out", float*>;
  constexpr auto g = graph(kernel<"work", fill_kernel>(4, 256, out, 8.0f, N), record<"signal">(event),
                           wait<"hold">(event), kernel<"more", add_kernel>(4, 256, out, 1.0f, N),
                           chain<"work", "signal", "hold", "more">);
  auto e1 = cudag::make_event(), e2 = cudag::make_event();
  cudag::device_buffer<float> d(N);
  poison_buffer(d.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, event = e1.get(), out = d.data());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_FLOAT_EQ(download(d.data(), N)[3], 9.0f);
  // Both event nodes read `event`: two of four nodes, per-node setters.
  // (Whether the nodes really record and wait is checked by races in
  // dsl_events_gpu_test.cu: an event query cannot tell.)
  EXPECT_EQ(ex.rebind(event = e2.get()), rebind_path::node_setters);
  poison_buffer(d.data(), N);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_FLOAT_EQ(download(d.data(), N)[3], 9.0f);
}

TEST(DslGpu, GraphOwnedAllocation) {
  CUDAG_REQUIRE_GPU();
  constexpr auto tmp = buffer<"tmp", float>;
  constexpr auto out = param<"out", float*>;
  // clang-format off
  constexpr auto g = graph(
      mem_alloc<"alloc_tmp">(tmp, 2 * N),
      kernel<"fill_tmp", fill_kernel>(8, 256, tmp, 4.0f, 2 * N),
      kernel<"bump_upper", add_kernel>(4, 256, tmp + N, 2.0f, N),
      memcpy<"drain">(out, tmp + N / 2, N * sizeof(float)),
      mem_free<"free_tmp">(tmp),
      chain<"alloc_tmp", "fill_tmp", "bump_upper", "drain", "free_tmp">);
  // clang-format on
  cudag::device_buffer<float> d(N);
  poison_buffer(d.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, out = d.data());
  for (int replay = 0; replay < 2; ++replay) {
    ex.launch(stream.get());
    ex.synchronize(stream.get());
  }
  const auto host = download(d.data(), N);
  EXPECT_FLOAT_EQ(host[0], 4.0f);             // tmp[N/2]
  EXPECT_FLOAT_EQ(host[N / 2 - 1], 4.0f);
  EXPECT_FLOAT_EQ(host[N / 2], 6.0f);         // tmp[N], bumped
  EXPECT_FLOAT_EQ(host[N - 1], 6.0f);
}

constexpr auto more = condition<"more", 1>;
constexpr auto flag = condition<"flag">;
constexpr auto flag_value = param<"flag_value", const unsigned*>;
constexpr auto counter = param<"counter", int*>;
constexpr auto out = param<"out", float*>;

TEST(DslGpu, WhileLoopRunsUntilTheBodyClearsTheCondition) {
  CUDAG_REQUIRE_GPU();
  constexpr auto body = graph(kernel<"step", loop_step>(1, 32, more, counter, 7),
                              kernel<"accumulate", add_kernel>(4, 256, out, 1.0f, N),
                              edge<"step", "accumulate">);
  constexpr auto g = graph(kernel<"start", fill_kernel>(4, 256, out, 0.5f, N),
                           while_loop<"iterate">(more, body), edge<"start", "iterate">);
  cudag::device_buffer<int> c(1);
  cudag::device_buffer<float> d(N);
  CUDAG_EXPECT_CUDA(cudaMemset(c.data(), 0, sizeof(int)));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
  poison_buffer(d.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, counter = c.data(), out = d.data());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  int count = 0;
  CUDAG_EXPECT_CUDA(cudaMemcpy(&count, c.data(), sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(count, 7);
  EXPECT_FLOAT_EQ(download(d.data(), N)[N - 1], 7.5f);
}

TEST(DslGpu, IfElseAndSwitchFollowTheCondition) {
  CUDAG_REQUIRE_GPU();
  constexpr auto then_body = graph(kernel<"then_fill", fill_kernel>(4, 256, out, 1.0f, N));
  constexpr auto else_body = graph(kernel<"else_fill", fill_kernel>(4, 256, out, 2.0f, N));
  constexpr auto only_if = graph(kernel<"if_add", add_kernel>(4, 256, out, 100.0f, N));
  // A conditional handle belongs to one conditional node: the if node tests
  // a second condition, set by its own kernel from the same value.
  constexpr auto also = condition<"also">;
  constexpr auto g = graph(kernel<"decide", set_condition>(1, 32, flag, flag_value),
                           kernel<"decide_also", set_condition>(1, 32, also, flag_value),
                           if_else<"branch">(flag, then_body, else_body),
                           if_then<"maybe_add">(also, only_if),
                           chain<"decide", "branch", "maybe_add">, edge<"decide_also", "maybe_add">);
  constexpr auto which = condition<"which">;
  constexpr auto c0 = graph(kernel<"case0", fill_kernel>(4, 256, out, 10.0f, N));
  constexpr auto c1 = graph(kernel<"case1", fill_kernel>(4, 256, out, 20.0f, N));
  constexpr auto c2 = graph(kernel<"case2", fill_kernel>(4, 256, out, 30.0f, N));
  constexpr auto s = graph(kernel<"choose", set_condition>(1, 32, which, flag_value),
                           switch_case<"pick">(which, c0, c1, c2), edge<"choose", "pick">);

  cudag::device_buffer<unsigned> one(1), zero(1), two(1);
  const unsigned v1 = 1, v0 = 0, v2 = 2;
  CUDAG_EXPECT_CUDA(cudaMemcpy(one.data(), &v1, sizeof v1, cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaMemcpy(zero.data(), &v0, sizeof v0, cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaMemcpy(two.data(), &v2, sizeof v2, cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking
  cudag::device_buffer<float> d(N);
  poison_buffer(d.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, flag_value = static_cast<const unsigned*>(one.data()), out = d.data());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d.data(), N)[5], 101.0f);
  poison_buffer(d.data(), N);
  EXPECT_EQ(ex.rebind(flag_value = static_cast<const unsigned*>(zero.data())),
            rebind_path::node_setters);
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d.data(), N)[5], 2.0f);

  poison_buffer(d.data(), N);
  auto sw = instantiate(s, flag_value = static_cast<const unsigned*>(two.data()), out = d.data());
  sw.launch(stream.get());
  sw.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d.data(), N)[9], 30.0f);
}

TEST(DslGpu, RunTimeKernelReference) {
  CUDAG_REQUIRE_GPU();
  const cudag::kernel_ref<void(float*, float, int)> fill{
      reinterpret_cast<const void*>(&fill_kernel), "fill_kernel", nullptr};
  const auto g = graph(kernel<"rt_fill">(fill, 4, 256, out, 12.0f, N));
  cudag::device_buffer<float> d(N);
  poison_buffer(d.data(), N);
  auto stream = cudag::make_stream();
  auto ex = instantiate(g, out = d.data());
  ex.launch(stream.get());
  ex.synchronize(stream.get());
  EXPECT_FLOAT_EQ(download(d.data(), N)[N - 1], 12.0f);
  EXPECT_EQ(std::get<cudag::kernel_node>(to_spec(g).nodes[0].params).function_name, "fill_kernel");
}

}  // namespace
