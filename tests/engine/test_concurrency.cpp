// Separate execs used from separate threads at once: each thread builds,
// instantiates, rebinds and launches its own graph while the others do the
// same. The native table below stands in for CUDA (thread-safe, unlike the
// recorder) and keeps, per executable graph, the kernel arguments it last
// received, so that each thread can check that its rebinds reached its own
// exec and no other. One exec is not meant for two threads at once (like a
// standard container): see docs/engine.md.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

std::atomic<std::uintptr_t> next_handle{0x10000};
template <class H>
H fresh() {
  return reinterpret_cast<H>(next_handle.fetch_add(16));
}

std::mutex table_mutex;
/// Per template node: the pointer argument it was created with.
std::map<cudaGraphNode_t, float*> created_with;
/// Per (exec, node): the pointer argument it holds now.
std::map<std::pair<cudaGraphExec_t, cudaGraphNode_t>, float*> exec_args;
std::map<cudaGraph_t, std::vector<cudaGraphNode_t>> graph_nodes;
std::map<cudaGraphExec_t, int> launches;

float* first_pointer(const cudaKernelNodeParams* p) {
  float* x = nullptr;
  std::memcpy(&x, p->kernelParams[0], sizeof x);
  return x;
}

cudaError_t graph_create(cudaGraph_t* g, unsigned) {
  *g = fresh<cudaGraph_t>();
  std::lock_guard lock(table_mutex);
  graph_nodes[*g];
  return cudaSuccess;
}
cudaError_t graph_destroy(cudaGraph_t g) {
  std::lock_guard lock(table_mutex);
  return graph_nodes.erase(g) ? cudaSuccess : cudaErrorInvalidValue;
}
cudaError_t add_kernel(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t*, std::size_t,
                       const cudaKernelNodeParams* p) {
  *n = fresh<cudaGraphNode_t>();
  std::lock_guard lock(table_mutex);
  created_with[*n] = first_pointer(p);
  graph_nodes[g].push_back(*n);
  return cudaSuccess;
}
cudaError_t instantiate(cudaGraphExec_t* x, cudaGraph_t g, cudaGraphInstantiateParams* p) {
  *x = fresh<cudaGraphExec_t>();
  p->result_out = cudaGraphInstantiateSuccess;
  p->errNode_out = nullptr;
  std::lock_guard lock(table_mutex);
  for (cudaGraphNode_t n : graph_nodes[g]) exec_args[{*x, n}] = created_with[n];
  return cudaSuccess;
}
cudaError_t exec_set_kernel(cudaGraphExec_t x, cudaGraphNode_t n, const cudaKernelNodeParams* p) {
  std::lock_guard lock(table_mutex);
  auto it = exec_args.find({x, n});
  if (it == exec_args.end()) return cudaErrorInvalidValue;
  it->second = first_pointer(p);
  return cudaSuccess;
}
cudaError_t exec_destroy(cudaGraphExec_t x) {
  std::lock_guard lock(table_mutex);
  std::erase_if(exec_args, [&](const auto& e) { return e.first.first == x; });
  launches.erase(x);
  return cudaSuccess;
}
cudaError_t launch(cudaGraphExec_t x, cudaStream_t) {
  std::lock_guard lock(table_mutex);
  ++launches[x];
  return cudaSuccess;
}
cudaError_t synchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t get_device(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t last_error() { return cudaSuccess; }

cudag::native::api_table thread_safe_table() {
  cudag::native::api_table t = cudag::native::cuda_runtime_api();
  t.graph_create = graph_create;
  t.graph_destroy = graph_destroy;
  t.add_kernel_node = add_kernel;
  t.instantiate = instantiate;
  t.exec_kernel_node_set_params = exec_set_kernel;
  t.exec_destroy = exec_destroy;
  t.launch = launch;
  t.stream_synchronize = synchronize;
  t.get_device = get_device;
  t.get_last_error = last_error;
  return t;
}

float* fake_buffer(int thread, int round) {
  return reinterpret_cast<float*>(std::uintptr_t{0x100000} * (thread + 1) + 64 * round);
}

TEST(Concurrency, SeparateExecsBuildRebindAndLaunchFromSeparateThreads) {
  const cudag::native::api_table table = thread_safe_table();
  const cudag::native::api_table* previous = cudag::native::install_api(&table);
  constexpr int threads = 8;
  constexpr int rounds = 500;
  constexpr int chain = 16;
  std::vector<std::string> failures(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([t, &failures] {
      try {
        cudag::builder b("chain_" + std::to_string(t));
        auto x = b.param<float*>("x");
        std::optional<cudag::node_ref> previous_node;
        for (int k = 0; k < chain; ++k) {
          auto node = b.kernel("k" + std::to_string(k), &scale, cudag::launch(1, 64), x, 1.0f, 64);
          if (previous_node) b.edge(*previous_node, node);
          previous_node = node;
        }
        const cudag::binding binds[] = {cudag::bind("x", fake_buffer(t, 0))};
        auto e = cudag::instantiate(b.build(), binds);
        for (int r = 1; r <= rounds; ++r) {
          if (e.rebind("x", fake_buffer(t, r)) != cudag::rebind_path::node_setters)
            throw std::runtime_error("rebind took another path");
          e.launch(nullptr);
        }
        e.synchronize(nullptr);
        std::lock_guard lock(table_mutex);
        if (launches[e.native_exec()] != rounds) throw std::runtime_error("launches were lost");
        for (int k = 0; k < chain; ++k) {
          const auto it = exec_args.find({e.native_exec(), e.node_handle("k" + std::to_string(k))});
          if (it == exec_args.end() || it->second != fake_buffer(t, rounds))
            throw std::runtime_error("node k" + std::to_string(k) + " holds another thread's value");
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& w : workers) w.join();
  cudag::native::install_api(previous);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  std::lock_guard lock(table_mutex);
  EXPECT_TRUE(exec_args.empty()) << "every exec was destroyed";
  EXPECT_TRUE(graph_nodes.empty()) << "every graph was destroyed";
}

}  // namespace
