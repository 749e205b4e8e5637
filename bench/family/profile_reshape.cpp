// CPU cost of exec::reshape with every native call answered by a null table:
// what cudag adds on top of the driver's setters and cudaGraphExecUpdate
// when a shape family switches shape (bench/family/bench_family times the
// whole on a GPU). The family is bench_family's: a chain of kernels whose
// grid follows "batch" and whose element count is parameter "n". No GPU
// needed; run under `perf record` to see where the time goes. Thread CPU
// time per switch, median of batches (wall-clock time with --wall). Also
// the own cost of the family's instantiation (copy of the spec, check,
// lowering; the driver's calls answered by the null table), the other part
// of bench_family's "ready" row.
//
//   profile_reshape [kernels=200] [switches=20000] [--wall]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"
#include "../common/null_native_table.hpp"

namespace {

__attribute__((noinline)) void step(float*, int) {}

cudag::graph_spec family_spec(int kernels) {
  cudag::builder b("chain_family");
  auto x = b.param<float*>("x");
  auto batch = b.param<int>("batch");
  auto n = b.param<int>("n");
  const auto shape = cudag::launch(dim3(1), dim3(256)).follow(cudag::launch_dim::grid_x, batch);
  cudag::node_ref previous = b.kernel("step0", CUDAG_KERNEL(step), shape, x, n);
  for (int k = 1; k < kernels; ++k) {
    cudag::node_ref next = b.kernel("step" + std::to_string(k), CUDAG_KERNEL(step), shape, x, n);
    b.edge(previous, next);
    previous = next;
  }
  return std::move(b).build();
}

cudaError_t null_set_kernel(cudaGraphNode_t, const cudaKernelNodeParams*) { return cudaSuccess; }
cudaError_t null_exec_set_kernel(cudaGraphExec_t, cudaGraphNode_t, const cudaKernelNodeParams*) {
  return cudaSuccess;
}
cudaError_t null_instantiate(cudaGraphExec_t* e, cudaGraph_t, cudaGraphInstantiateParams* p) {
  *e = bench_null::fresh<cudaGraphExec_t>();
  if (p) p->result_out = cudaGraphInstantiateSuccess;
  return cudaSuccess;
}
cudaError_t null_exec_destroy(cudaGraphExec_t) { return cudaSuccess; }
cudaError_t null_update(cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo* info) {
  if (info) info->result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
}

double now(bool wall) {
  if (wall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const int kernels = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  const int switches = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20000;
  const bool wall = argc > 3 && std::string(argv[3]) == "--wall";
  cudag::native::api_table table = bench_null::table();
  table.kernel_node_set_params = null_set_kernel;
  table.exec_kernel_node_set_params = null_exec_set_kernel;
  table.instantiate = null_instantiate;
  table.exec_destroy = null_exec_destroy;
  table.exec_update = null_update;
  cudag::native::install_api(&table);

  float* x = reinterpret_cast<float*>(std::uintptr_t{4096});
  const auto bindings = [](int batch) {
    return std::vector<cudag::binding>{cudag::bind("batch", batch), cudag::bind("n", batch * 256)};
  };
  std::vector<cudag::binding> first = bindings(4);
  first.push_back(cudag::bind("x", x));
  const cudag::graph_spec spec = family_spec(kernels);
  std::vector<double> instantiate_us;
  for (int i = 0; i < 41; ++i) {
    const double start = now(wall);
    { const cudag::exec once = cudag::instantiate(spec, first); }
    instantiate_us.push_back((now(wall) - start) * 1e6);
  }
  std::sort(instantiate_us.begin(), instantiate_us.end());
  std::printf("%d kernels: cudag's own cost %.1f us an instantiation and destruction (median of 41)\n",
              kernels, instantiate_us[instantiate_us.size() / 2]);
  cudag::exec family = cudag::instantiate(spec, first);

  const int batches = std::min(switches, 21);
  const int per_batch = std::max(1, switches / batches);
  std::vector<double> us;
  int shape = 0;
  std::size_t paths = 0;
  for (int b = 0; b < batches; ++b) {
    const double start = now(wall);
    for (int s = 0; s < per_batch; ++s) {
      shape = (shape + 17) % 67;
      paths += static_cast<std::size_t>(family.reshape(bindings(4 * (shape + 1))));
    }
    us.push_back((now(wall) - start) * 1e6 / per_batch);
  }
  std::sort(us.begin(), us.end());
  std::printf("%d kernels, %d batches of %d switches: cudag's own cost %.2f us a switch "
              "(%.1f ns a node; range %.2f-%.2f us) [%zu]\n",
              kernels, batches, per_batch, us[us.size() / 2], us[us.size() / 2] * 1e3 / kernels,
              us.front(), us.back(), paths % 2);
}
