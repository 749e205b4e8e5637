// n is read by node "scale" but never bound.
// expect-error: missing_binding_for_parameter<.*"n"
// expect-name: "n"
// expect-error clang: '~missing_binding_for_parameter' has been explicitly marked deleted
// name-unprinted clang: clang 14 names the error type's destructor, not its template arguments, and the statement has no n
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n));
void bind(float* d) { auto e = instantiate(g, x = d); }
