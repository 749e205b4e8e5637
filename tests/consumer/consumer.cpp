// Uses cudag the way an application would: builds a graph, checks it,
// draws it. Exits non-zero when anything is off.
#include <cudag/builder.hpp>
#include <cudag/check.hpp>
#include <cudag/dot.hpp>

#include <cstdio>

static void step(float*, int) {}

int main() {
  cudag::builder b("consumer");
  auto x = b.param<float*>("x");
  auto first = b.kernel("first", CUDAG_KERNEL(step), cudag::launch(1, 32), x, 32);
  auto second = b.kernel("second", CUDAG_KERNEL(step), cudag::launch(1, 32), x, 32);
  b.edge(first, second);
  const cudag::graph_spec spec = b.build();
  cudag::check(spec);
  const std::string dot = cudag::to_dot(spec);
  const bool ok = dot.find("first") != std::string::npos && cudag::analyze(spec).critical_path == 2;
  std::printf("consumer: %s\n", ok ? "ok" : "unexpected result");
  return ok ? 0 : 1;
}
