// x is a float*; a double* is bound to it.
// expect-error: parameter_bound_with_wrong_type<.*"x"\}.*Declared ?= ?float\*.*Given ?= ?double\*
// expect-name: "x"
// expect-error clang: '~parameter_bound_with_wrong_type' has been explicitly marked deleted
// expect-name clang: x = d
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(double* d) { auto e = instantiate(g, x = d, n = 4); }
