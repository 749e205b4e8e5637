// n is bound twice in one instantiation.
// expect-error: parameter_bound_twice<.*"n"
// expect-name: "n"
// expect-error clang: '~parameter_bound_twice' has been explicitly marked deleted
// expect-name clang: n = 4, n = 8
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(float* d) { auto e = instantiate(g, x = d, n = 4, n = 8); }
