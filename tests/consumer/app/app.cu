// A one-file application: a DSL graph in a .cu file, compiled with no flag
// of the application's own beyond its GPU architecture (the DSL's nvcc flag
// comes with dependency('cudag')), checked and drawn on the host. Exits
// non-zero when anything is off; needs no GPU.
#include <cudag/cudag.hpp>

#include <cstdio>
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

int main() {
  const cudag::graph_spec spec = to_spec(twice, "twice");
  cudag::check(spec);
  const bool ok = cudag::analyze(spec).critical_path == 2 &&
                  cudag::to_dot(spec).find("second") != std::string::npos;
  std::printf("subproject app: %s\n", ok ? "ok" : "the DSL graph is not what was declared");
  return ok ? 0 : 1;
}
