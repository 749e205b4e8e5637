// The graph reads x as a float*; the binding names a parameter "x" declared
// double* (its own declaration, so the binding itself converts).
// expect-error: binding_type_differs_from_graph_parameter<.*"x"
// expect-name: "x"
// expect-error clang: '~binding_type_differs_from_graph_parameter' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(double* d) { auto e = instantiate(g, param<"x", double*> = d, n = 4); }
