// The device half of the CMake consumer: a kernel compiled by nvcc, put in
// a graph by the compile-time DSL through the umbrella header (which needs
// CUDA C++20 and --expt-relaxed-constexpr from cudag::cudag).
#include <cudag/cudag.hpp>

#include <string>

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

namespace {
using namespace cudag::dsl;
constexpr auto x = param<"x", float*>;
constexpr auto n = param<"n", int>;
// clang-format off
constexpr auto twice = graph(
    kernel<"first", scale>(blocks_for(n, 128), 128, x, 2.0f, n),
    kernel<"second", scale>(blocks_for(n, 128), 128, x, 3.0f, n),
    edge<"first", "second">);
// clang-format on
}  // namespace

// The DSL graph as a spec, checked: "" when all is well, else the reason.
std::string device_graph_problem() {
  const cudag::graph_spec spec = to_spec(twice, "twice");
  cudag::check(spec);
  if (cudag::analyze(spec).critical_path != 2) return "the DSL graph's critical path is not 2";
  if (cudag::to_dot(spec).find("second") == std::string::npos) return "the picture lacks a node";
  return {};
}
