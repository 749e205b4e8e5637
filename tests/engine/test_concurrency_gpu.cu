// Separate execs launched and rebound from several threads at once, on a
// real device: each thread owns its exec, stream and buffers, and every
// replay's output is checked, so a rebind that reached another thread's exec
// (or a launch that used stale values) shows as a wrong element. Half the
// execs are instances sharing one template (rebound by exec setters, the
// default: see docs/engine.md, "Threads").
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr int n = 1 << 14;
constexpr int threads = 8;
constexpr int rounds = 40;
constexpr float poison = -999.0f;

cudag::graph_spec fill_then_scale() {
  cudag::builder b("fill_then_scale");
  auto px = b.param<float*>("x");
  auto ps = b.param<float>("start");
  auto pf = b.param<float>("factor");
  auto fill = b.kernel("fill", CUDAG_KERNEL(fill_iota), cudag::launch(n / 256, 256), px, ps, n);
  auto times = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(n / 256, 256), px, pf, n);
  b.edge(fill, times);
  return std::move(b).build();
}

/// What round `r` of thread `t` writes: distinct per thread and round.
float start_of(int t, int r) { return static_cast<float>(t * 100000 + r * 16); }
float factor_of(int t) { return static_cast<float>(t + 2); }

/// One thread's work: `rounds` times rebind (start, factor, and which of two
/// buffers), launch, wait, and check the buffer written and the one not.
/// Returns "" or what went wrong first.
std::string run_rounds(int t, cudag::exec& e) {
  try {
    cudag::device_buffer<float> a(n), b(n);
    fill(a, poison);
    fill(b, poison);
    auto stream = cudag::make_stream();
    e.rebind("factor", factor_of(t));
    for (int r = 0; r < rounds; ++r) {
      const cudag::device_buffer<float>& written = r % 2 == 0 ? a : b;
      const cudag::device_buffer<float>& other = r % 2 == 0 ? b : a;
      e.rebind("x", written.data());
      e.rebind("start", start_of(t, r));
      e.launch(stream.get());
      e.synchronize(stream.get());
      const std::vector<float> out = read_back(written);
      const std::vector<float> untouched = read_back(other);
      for (int i = 0; i < n; ++i) {
        const float want = (start_of(t, r) + static_cast<float>(i)) * factor_of(t);
        if (out[i] != want) {
          std::ostringstream why;
          why << "thread " << t << " round " << r << " element " << i << ": " << out[i]
              << ", expected " << want;
          return why.str();
        }
        const float before = r == 0 ? poison : (start_of(t, r - 1) + static_cast<float>(i)) * factor_of(t);
        if (untouched[i] != before) {
          std::ostringstream why;
          why << "thread " << t << " round " << r << ": the other buffer changed at " << i
              << " (" << untouched[i] << ", expected " << before << ")";
          return why.str();
        }
      }
    }
    if (const cudaError_t last = cudaGetLastError(); last != cudaSuccess)
      return std::string("thread ") + std::to_string(t) + ": " + cudaGetErrorName(last);
    return {};
  } catch (const std::exception& failure) {
    return std::string("thread ") + std::to_string(t) + ": " + failure.what();
  }
}

}  // namespace

TEST(ConcurrencyGpu, EightThreadsEachRebindAndLaunchTheirOwnExec) {
  CUDAG_REQUIRE_GPU();
  const cudag::graph_spec spec = fill_then_scale();
  cudag::device_buffer<float> scratch(n);
  const cudag::binding binds[] = {cudag::bind("x", scratch.data()), cudag::bind("start", 0.0f),
                                  cudag::bind("factor", 1.0f)};
  // Even threads build their own exec (on their thread); odd threads get an
  // instance of one shared template, made here before they start.
  cudag::exec shared = cudag::instantiate(spec, binds);
  std::vector<std::optional<cudag::exec>> instances(threads);
  for (int t = 1; t < threads; t += 2) instances[t].emplace(shared.instance(binds));

  std::vector<std::string> failures(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      if (t % 2 == 1) {
        failures[t] = run_rounds(t, *instances[t]);
        return;
      }
      try {
        cudag::exec own = cudag::instantiate(spec, binds);
        failures[t] = run_rounds(t, own);
      } catch (const std::exception& failure) {
        failures[t] = std::string("thread ") + std::to_string(t) + ": " + failure.what();
      }
    });
  for (auto& w : workers) w.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}
