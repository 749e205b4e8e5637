// Uses an installed cudag from CMake the way an application would: a graph
// from the builder (this file, g++) and one from the DSL (device_graph.cu,
// nvcc), both checked and drawn. Exits non-zero when anything is off.
#include <cudag/cudag.hpp>

#include <cstdio>
#include <string>

std::string device_graph_problem();

static void step(float*, int) {}

int main() {
  cudag::builder b("consumer");
  auto x = b.param<float*>("x");
  auto first = b.kernel("first", CUDAG_KERNEL(step), cudag::launch(1, 32), x, 32);
  auto second = b.kernel("second", CUDAG_KERNEL(step), cudag::launch(1, 32), x, 32);
  b.edge(first, second);
  const cudag::graph_spec spec = b.build();
  cudag::check(spec);
  std::string problem = cudag::to_dot(spec).find("first") == std::string::npos ||
                                cudag::analyze(spec).critical_path != 2
                            ? "the builder's graph is not what was declared"
                            : device_graph_problem();
  std::printf("cmake consumer: %s\n", problem.empty() ? "ok" : problem.c_str());
  return problem.empty() ? 0 : 1;
}
