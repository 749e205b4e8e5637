// Shape families, update by name and eager runs on a real GPU: every shape
// computes the right result on poisoned buffers.
#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/eager.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"

namespace {

constexpr float poison = -3.0f;

/// Element i < n gains `amount`; the rest of the buffer must keep its poison.
__global__ void add(float* x, float amount, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += amount;
}

/// Rows r < batch of a batch x 32 matrix, one block row per 8 rows: the grid's
/// y follows the batch.
__global__ void add_rows(float* x, int batch) {
  const int col = threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < batch) x[row * 32 + col] += 1.0f;
}

/// Byte i < n becomes 1; 64-bit indices, for counts past 2^31.
__global__ void mark(unsigned char* bytes, unsigned n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) bytes[i] = 1;
}

class device_buffer {
 public:
  explicit device_buffer(int n) : n_(n) { EXPECT_EQ(cudaMalloc(&p_, sizeof(float) * n), cudaSuccess); }
  ~device_buffer() { (void)cudaFree(p_); }
  float* get() const { return p_; }
  void poison_all() const {
    const std::vector<float> host(static_cast<std::size_t>(n_), poison);
    EXPECT_EQ(cudaMemcpy(p_, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<float> read() const {
    std::vector<float> host(static_cast<std::size_t>(n_));
    EXPECT_EQ(cudaMemcpy(host.data(), p_, sizeof(float) * host.size(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }

 private:
  float* p_ = nullptr;
  int n_;
};

/// Three kernels in a chain: two over n elements (grid from n, 128 a block),
/// one over rows (grid.y = ceil(batch / 8)); n = 32 * batch.
cudag::graph_spec family(float first = 1.0f) {
  cudag::builder b("family");
  auto x = b.param<float*>("x");
  auto batch = b.param<int>("batch");
  auto n = b.param<int>("n");
  auto a = b.kernel("a", &add, cudag::launch(dim3(1), dim3(128)).follow(cudag::launch_dim::grid_x, n, 1, 128),
                    x, first, n);
  auto rows = b.kernel("rows", &add_rows,
                       cudag::launch(dim3(1), dim3(32, 8)).follow(cudag::launch_dim::grid_y, batch, 1, 8),
                       x, batch);
  auto c = b.kernel("c", &add, cudag::launch_over(n, 128), x, 10.0f, n);
  b.edge(a, rows);
  b.edge(rows, c);
  return b.build();
}

std::vector<cudag::binding> shape(int batch) {
  return {cudag::bind("batch", batch), cudag::bind("n", 32 * batch)};
}

void expect_shape(const std::vector<float>& got, int batch, float first) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = int(i) < 32 * batch ? poison + first + 1.0f + 10.0f : poison;
    ASSERT_EQ(got[i], want) << "element " << i << " at batch " << batch;
  }
}

TEST(FamilyGpu, EveryReshapedShapeComputesItsResult) {
  CUDAG_REQUIRE_GPU();
  constexpr int max_batch = 300;
  device_buffer x(32 * max_batch);
  auto binds = shape(1);
  binds.push_back(cudag::bind("x", x.get()));
  cudag::exec e = cudag::instantiate(family(), binds);
  for (const int batch : {1, 7, 8, 9, 64, 255, 300, 2, 300}) {
    (void)e.reshape(shape(batch));
    x.poison_all();
    e.launch(nullptr);
    e.synchronize(nullptr);
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    expect_shape(x.read(), batch, 1.0f);
  }
  // Both paths, forced: exec setters and one whole-graph update.
  for (const auto policy : {cudag::rebind_policy::node_setters, cudag::rebind_policy::whole_graph_update}) {
    e.set_rebind_policy(policy);
    (void)e.reshape(shape(33));
    x.poison_all();
    e.launch(nullptr);
    e.synchronize(nullptr);
    expect_shape(x.read(), 33, 1.0f);
  }
}

// An unsigned count past 2^31 - 1 launches every block it needs: read as a
// signed int it was negative, one block, and all but the first 256 bytes
// kept their poison.
TEST(FamilyGpu, AnUnsignedCountPastTwoToThe31ReachesItsLastElement) {
  CUDAG_REQUIRE_GPU();
  constexpr unsigned count = 0x80000000u + 4096u;
  constexpr std::size_t tail = 8192;  // read back: the last bytes, and 256 past the count
  unsigned char* bytes = nullptr;
  CUDAG_EXPECT_CUDA(cudaMalloc(&bytes, std::size_t{count} + 256));
  std::unique_ptr<unsigned char, decltype(&cudaFree)> owned(bytes, &cudaFree);
  CUDAG_EXPECT_CUDA(cudaMemset(bytes, 0xAB, std::size_t{count} + 256));
  cudag::builder b("wide");
  auto p = b.param<unsigned char*>("bytes");
  auto n = b.param<unsigned>("n");
  b.kernel("mark", &mark, cudag::launch_over(n, 256), p, n);
  const cudag::binding binds[] = {cudag::bind("bytes", bytes), cudag::bind("n", count)};
  cudag::exec e = cudag::instantiate(b.build(), binds);
  e.launch(nullptr);
  e.synchronize(nullptr);
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  std::vector<unsigned char> host(tail + 256);
  CUDAG_EXPECT_CUDA(cudaMemcpy(host.data(), bytes + (count - tail), host.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < host.size(); ++i)
    ASSERT_EQ(int(host[i]), i < tail ? 1 : 0xAB) << "byte " << (count - tail + i);
}

TEST(FamilyGpu, UpdateByNameTakesAReorderedSpecWithAnotherValue) {
  CUDAG_REQUIRE_GPU();
  device_buffer x(32 * 40);
  auto binds = shape(40);
  binds.push_back(cudag::bind("x", x.get()));
  cudag::exec e = cudag::instantiate(family(), binds);
  cudag::graph_spec changed = family(5.0f);
  std::swap(changed.nodes[0], changed.nodes[2]);  // declared in another order
  e.update(changed, binds);
  x.poison_all();
  e.launch(nullptr);
  e.synchronize(nullptr);
  expect_shape(x.read(), 40, 5.0f);
}

TEST(FamilyGpu, EagerRunsComputeWhatTheGraphComputes) {
  CUDAG_REQUIRE_GPU();
  device_buffer x(32 * 50), y(32 * 50);
  int host_saw = 0;
  cudaEvent_t done = nullptr;
  CUDAG_EXPECT_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cudag::builder b("eager");
  auto px = b.param<float*>("x");
  auto py = b.param<float*>("y");
  auto n = b.param<int>("n");
  auto tmp = b.alloc<float>("tmp", 32 * 50);
  // Bytes alike (the runtime's memset): 0x3f3f3f3f is 0.74755f.
  auto fill = b.memset("fill", tmp.buffer, 0x3f3f3f3fu, 32 * 50);
  auto bump = b.kernel("bump", &add, cudag::launch_over(n, 128), tmp.buffer, 1.0f, n);
  auto copy = b.memcpy("copy", py, tmp.buffer, sizeof(float) * 32 * 50, cudaMemcpyDeviceToDevice);
  // Bytes not alike (the driver's 4-byte memset): 2.0f in the last 5 of x.
  auto tail = b.memset("tail", x.get() + (32 * 50 - 5), 0x40000000u, 5);
  auto release = b.free("release", tmp.buffer);
  auto k = b.kernel("k", &add, cudag::launch_over(n, 128), px, 4.0f, n);
  auto mark = b.record("mark", done);
  auto report = b.host("report", [&host_saw](int v) { host_saw = v; }, n);
  b.chain(tmp.node, fill, bump, copy, release);
  b.chain(k, mark, report, tail);
  const cudag::graph_spec spec = b.build();
  const cudag::binding binds[] = {cudag::bind("x", x.get()), cudag::bind("y", y.get()),
                                  cudag::bind("n", 32 * 50 - 5)};
  x.poison_all();
  y.poison_all();
  cudaStream_t stream = nullptr;
  CUDAG_EXPECT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudag::run_eagerly(spec, binds, stream).synchronize();
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(host_saw, 32 * 50 - 5);
  CUDAG_EXPECT_CUDA(cudaEventQuery(done));
  const std::vector<float> gx = x.read(), gy = y.read();
  for (int i = 0; i < 32 * 50; ++i) {
    ASSERT_EQ(gx[std::size_t(i)], i < 32 * 50 - 5 ? poison + 4.0f : 2.0f) << "x[" << i << "]";
    const float filled = std::bit_cast<float>(0x3f3f3f3fu);
    ASSERT_EQ(gy[std::size_t(i)], i < 32 * 50 - 5 ? filled + 1.0f : filled) << "y[" << i << "]";
  }
  // The payoff measurement runs all three ways and finds real times.
  device_buffer z(32 * 300);
  z.poison_all();  // the three ways add to it many times: from known values
  auto fbinds = shape(1);
  fbinds.push_back(cudag::bind("x", z.get()));
  const std::vector<std::vector<cudag::binding>> shapes = {shape(16), shape(300)};
  const cudag::payoff_report payoff = cudag::measure_payoff(family(), fbinds, shapes, stream, 5);
  ASSERT_EQ(payoff.rows.size(), 2u);
  for (const cudag::payoff_row& r : payoff.rows) {
    EXPECT_GT(r.eager_us, 0.0);
    EXPECT_GT(r.graph_build_us, 0.0);
    EXPECT_GT(r.graph_replay_us, 0.0);
    EXPECT_GT(r.reshaped_replay_us, 0.0);
  }
  std::printf("%s", payoff.text().c_str());
  CUDAG_EXPECT_CUDA(cudaStreamDestroy(stream));
  CUDAG_EXPECT_CUDA(cudaEventDestroy(done));
}

}  // namespace
