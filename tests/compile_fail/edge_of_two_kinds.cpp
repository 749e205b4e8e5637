// One edge declared twice, programmatic and then full (in a chain).
// expect-error: edge_declared_with_two_kinds<.*"warm -> combine \(programmatic and full\)"
// expect-name: warm -> combine (programmatic and full)
// expect-error clang: non-constexpr constructor 'edge_declared_with_two_kinds' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"warm", cf::scale>(1, 32, x, 2.0f, n),
                         synchronizes_grid_dependencies(kernel<"combine", cf::axpy>(1, 32, x, y, 3.0f, n)),
                         kernel<"finish", cf::scale>(1, 32, y, 1.0f, n),
                         edge<"warm", "combine", edge_kind::programmatic>,
                         chain<"warm", "combine", "finish">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d, float* e) { use_graph(g, x = d, y = e, n = 4); (void)child<"inner">(g); }
