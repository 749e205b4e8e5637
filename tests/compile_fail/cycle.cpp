// n8 -> n16 -> n8.
// expect-error: cycle_through<.*"n16 -> n8 -> n16"|cycle_through<.*"n8 -> n16 -> n8"
// expect-name: n16 -> n8
// expect-error clang: non-constexpr constructor 'cycle_through' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"n1", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"n8", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"n16", cf::scale>(1, 32, x, 2.0f, n),
                         chain<"n1", "n8", "n16">, edge<"n16", "n8">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
