// An edge to a node that was never declared.
// expect-error: unknown_node_in_edge<.*"n10 -> n_typo"
// expect-name: n10 -> n_typo
// expect-error clang: non-constexpr constructor 'unknown_node_in_edge' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"n10", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"n11", cf::scale>(1, 32, x, 2.0f, n), edge<"n10", "n_typo">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
