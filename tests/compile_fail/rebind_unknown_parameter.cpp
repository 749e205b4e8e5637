// Rebinding a parameter the graph does not have.
// expect-error: graph_has_no_parameter<.*"count"
// expect-name: "count"
// expect-error clang: '~graph_has_no_parameter' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void rebind(float* d) {
  auto e = instantiate(g, x = d, n = 4);
  e.rebind(param<"count", int> = 8);
}
