// A node named "".
// expect-error: node_with_empty_name<.*"#1 \(kernel node\)"
// expect-name: #1 (kernel node)
// expect-error clang: non-constexpr constructor 'node_with_empty_name' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(empty<"start">(), kernel<"", cf::scale>(1, 32, x, 1.0f, n));
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
