// The graph has no parameter "z".
// expect-error: graph_has_no_parameter<.*"z"
// expect-name: "z"
// expect-error clang: '~graph_has_no_parameter' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(float* d) { auto e = instantiate(g, x = d, n = 4, param<"z", int> = 1); }
