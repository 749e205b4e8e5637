// A programmatic edge into a kernel node whose kernel is not marked with
// synchronizes_grid_dependencies(): it could read x before warm writes it.
// expect-error: kernel_does_not_synchronize_grid_dependencies<.*"combine \(programmatic edge warm -> combine\)"
// expect-name: programmatic edge warm -> combine
// expect-error clang: non-constexpr constructor 'kernel_does_not_synchronize_grid_dependencies' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"warm", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"combine", cf::axpy>(1, 32, x, y, 3.0f, n),
                         edge<"warm", "combine", edge_kind::programmatic>);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d, float* e) { use_graph(g, x = d, y = e, n = 4); (void)child<"inner">(g); }
