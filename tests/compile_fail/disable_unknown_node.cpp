// No node is named "scael".
// expect-error: graph_has_no_node<.*"scael"
// expect-name: scael
// expect-error clang: '~graph_has_no_node' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void toggle(float* d) {
  auto e = instantiate(g, x = d, n = 4);
  e.set_enabled<"scael">(false);
}
