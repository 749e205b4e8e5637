// A launch-completion edge from a memset node: CUDA allows typed edges only
// from a kernel node into a kernel node.
// expect-error: edge_kind_needs_kernel_nodes<.*"launch_completion edge clear_y -> combine \(clear_y is a memset node\)"
// expect-name: launch_completion edge clear_y -> combine
// expect-error clang: non-constexpr constructor 'edge_kind_needs_kernel_nodes' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(memset<"clear_y">(y, 0, 1024),
                         synchronizes_grid_dependencies(kernel<"combine", cf::axpy>(1, 32, x, y, 3.0f, n)),
                         edge<"clear_y", "combine", edge_kind::launch_completion>);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d, float* e) { use_graph(g, x = d, y = e, n = 4); (void)child<"inner">(g); }
