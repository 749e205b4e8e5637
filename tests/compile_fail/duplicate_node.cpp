// Two nodes named "scale_twice".
// expect-error: duplicate_node_name<.*"scale_twice"
// expect-name: scale_twice
// expect-error clang: non-constexpr constructor 'duplicate_node_name' cannot be used in a constant expression
#include "common.hpp"
constexpr auto g = graph(kernel<"scale_twice", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"scale_twice", cf::scale>(1, 32, y, 2.0f, n));
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
