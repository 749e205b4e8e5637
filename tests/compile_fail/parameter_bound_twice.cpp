// n is bound twice in one instantiation.
// expect-error: parameter_bound_twice<.*"n"
// expect-name: "n"
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(float* d) { auto e = instantiate(g, x = d, n = 4, n = 8); }
