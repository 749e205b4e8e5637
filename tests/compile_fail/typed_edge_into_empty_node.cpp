// A programmatic edge into an empty node: CUDA allows typed edges only from
// a kernel node into a kernel node.
// expect-error: edge_kind_needs_kernel_nodes<.*"programmatic edge warm -> join \(join is an empty node\)"
// expect-name: programmatic edge warm -> join
// expect-error clang: non-constexpr constructor 'edge_kind_needs_kernel_nodes' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"warm", cf::scale>(1, 32, x, 2.0f, n), empty<"join">(),
                         edge<"warm", "join", edge_kind::programmatic>);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
