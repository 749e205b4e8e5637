#pragma once
// What every example does before it runs anything: check its graph, print
// the graph's shape and draw it. None of this needs a GPU.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "cudag/check.hpp"
#include "cudag/dot.hpp"

namespace examples {

/// Checks `spec`, prints its shape, writes `dot_path` and, where Graphviz is
/// installed, the SVG beside it.
inline void check_and_draw(const cudag::graph_spec& spec, const std::string& dot_path) {
  cudag::check(spec);
  const cudag::graph_analysis shape = cudag::analyze(spec);
  std::printf("graph '%s': %zu nodes (%zu with nested graphs), critical path %zu, width %zu\n",
              spec.name.c_str(), spec.nodes.size(), spec.total_nodes(), shape.critical_path,
              shape.width);
  cudag::write_dot(spec, dot_path);
  const std::string svg = dot_path.substr(0, dot_path.rfind('.')) + ".svg";
  if (cudag::render_svg(dot_path, svg))
    std::printf("drew %s and %s\n", dot_path.c_str(), svg.c_str());
  else
    std::printf("drew %s (Graphviz not found: no SVG)\n", dot_path.c_str());
}

/// True when a CUDA device is usable; otherwise says plainly that nothing ran.
inline bool gpu_present() {
  int devices = 0;
  const cudaError_t code = cudaGetDeviceCount(&devices);
  if (code == cudaSuccess && devices > 0) return true;
  (void)cudaGetLastError();
  std::printf("NO GPU: %s. The graph was built, checked and drawn; nothing ran on a GPU.\n",
              code != cudaSuccess ? cudaGetErrorName(code) : "no CUDA device");
  return false;
}

/// The exit status when nothing could run: 0 for a person (it is no error
/// on a machine without a GPU), 77 under the test runner ("--as-test"),
/// which reports that as skipped.
inline int nothing_ran_status(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--as-test") return 77;
  return 0;
}

}  // namespace examples
