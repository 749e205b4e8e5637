// No node is named "sacle".
// expect-error: graph_has_no_node<.*"sacle"
// expect-name: sacle
// expect-error clang: '~graph_has_no_node' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void handle(float* d) {
  auto e = instantiate(g, x = d, n = 4);
  (void)e.node_handle<"sacle">();
}
