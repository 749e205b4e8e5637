// n is read by node "scale" but never bound.
// expect-error: missing_binding_for_parameter<.*"n"
// expect-name: "n"
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(float* d) { auto e = instantiate(g, x = d); }
