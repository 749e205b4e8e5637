// Device-side graph launch on the GPU (relocatable device code, the device
// runtime): two graphs instantiated for device launch hand each other their
// device handles as typed parameters (rebound after both exist, each rebind
// uploaded again); launched once from the host, their kernels tail-launch
// each other until a counter reaches its limit, and the data show every
// step ran, in turn. A kernel launches a third graph fire-and-forget. The
// DSL's exec does the same.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/builder.hpp"
#include "cudag/device_graph.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"

using namespace engine_test;

namespace {

__global__ void add_amount(int* data, int amount, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += amount;
}

// Counts the step; launches `next` after this graph while steps remain.
__global__ void continue_with(cudag::device_graph next, int* steps, int limit) {
  const int done = ++*steps;
  if (done < limit && cudag::tail_launch(next) != cudaSuccess) *steps = -1000;
}

// Launches `other` at once, beside this graph's work.
__global__ void start_beside(cudag::device_graph other, int* status) {
  *status = cudag::fire_and_forget(other) == cudaSuccess ? 1 : -1;
}

constexpr int n = 1024;

cudag::graph_spec stepping(const char* name, int amount) {
  cudag::builder b(name);
  auto data = b.param<int*>("data");
  auto steps = b.param<int*>("steps");
  auto next = b.param<cudag::device_graph>("next");
  auto limit = b.param<int>("limit");
  auto add = b.kernel("add", CUDAG_KERNEL(add_amount), cudag::launch(n / 256, 256), data, amount, n);
  auto go_on = b.kernel("go_on", CUDAG_KERNEL(continue_with), cudag::launch(1, 1), next, steps, limit);
  b.edge(add, go_on);
  return b.build();
}

cudag::instantiate_options for_device() {
  cudag::instantiate_options o;
  o.device_launch = true;
  return o;
}

TEST(DeviceLaunchGpu, TwoGraphsTailLaunchEachOtherUntilTheLimit) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> data(n), steps(1);
  const cudag::binding binds[] = {cudag::bind("data", data.data()), cudag::bind("steps", steps.data()),
                                  cudag::bind("next", cudag::device_graph{}), cudag::bind("limit", 6)};
  auto ones = cudag::instantiate(stepping("ones", 1), binds, for_device());
  auto tens = cudag::instantiate(stepping("tens", 10), binds, for_device());
  ones.rebind("next", tens.device_handle());
  tens.rebind("next", ones.device_handle());
  auto s = cudag::make_stream();
  for (const int limit : {6, 3}) {
    ones.rebind("limit", limit);
    tens.rebind("limit", limit);
    fill(data, 5);
    fill(steps, 0);
    ones.launch(s.get());  // from the host; the rest from the device
    ones.synchronize(s.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(read_back(steps), std::vector<int>{limit}) << "limit " << limit;
    // ones, tens, ones, ...: (limit + 1) / 2 ones and limit / 2 tens.
    EXPECT_EQ(read_back(data), std::vector<int>(n, 5 + (limit + 1) / 2 + 10 * (limit / 2)))
        << "limit " << limit;
  }
}

TEST(DeviceLaunchGpu, AKernelStartsAnotherGraphFireAndForget) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> data(n), status(1);
  cudag::builder w("beside");
  w.kernel("add", CUDAG_KERNEL(add_amount), cudag::launch(n / 256, 256), w.param<int*>("data"), 7, n);
  const cudag::binding data_bind[] = {cudag::bind("data", data.data())};
  auto beside = cudag::instantiate(w.build(), data_bind, for_device());
  cudag::builder l("launcher");
  l.kernel("start", CUDAG_KERNEL(start_beside), cudag::launch(1, 1), l.param<cudag::device_graph>("other"),
           l.param<int*>("status"));
  const cudag::binding binds[] = {cudag::bind("other", beside.device_handle()),
                                  cudag::bind("status", status.data())};
  auto launcher = cudag::instantiate(l.build(), binds, for_device());
  auto s = cudag::make_stream();
  fill(data, 1);
  fill(status, 0);
  launcher.launch(s.get());
  launcher.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(status), std::vector<int>{1});
  EXPECT_EQ(read_back(data), std::vector<int>(n, 8));
}

namespace dsl = cudag::dsl;
constexpr auto d_data = dsl::param<"data", int*>;
constexpr auto d_steps = dsl::param<"steps", int*>;
constexpr auto d_next = dsl::param<"next", cudag::device_graph>;
constexpr auto d_limit = dsl::param<"limit", int>;
constexpr auto dsl_self_loop =
    dsl::graph(dsl::kernel<"add", add_amount>(n / 256, 256, d_data, 2, n),
               dsl::kernel<"go_on", continue_with>(1, 1, d_next, d_steps, d_limit), dsl::edge<"add", "go_on">);

TEST(DeviceLaunchGpu, ADslGraphTailLaunchesItself) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> data(n), steps(1);
  auto e = dsl::instantiate_with(dsl_self_loop, for_device(), d_data = data.data(), d_steps = steps.data(),
                                 d_next = cudag::device_graph{}, d_limit = 4);
  (void)e.rebind(d_next = e.device_handle());
  fill(data, 3);
  fill(steps, 0);
  auto s = cudag::make_stream();
  e.launch(s.get());
  e.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(steps), std::vector<int>{4});
  EXPECT_EQ(read_back(data), std::vector<int>(n, 11));
}

}  // namespace
