// n is an int; rebinding it with a double narrows.
// expect-error: parameter_bound_with_wrong_type<.*"n"\}.*Declared ?= ?int.*Given ?= ?double
// expect-name: "n"
// expect-error clang: '~parameter_bound_with_wrong_type' has been explicitly marked deleted
// expect-name clang: n = 2.5
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void rebind(float* d) {
  auto e = instantiate(g, x = d, n = 4);
  e.rebind(n = 2.5);
}
