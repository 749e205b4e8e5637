// "data" is declared float* for one node and int* for another.
// expect-error: parameter_declared_with_two_types<.*"data"
// expect-name: "data"
// expect-error clang: non-constexpr constructor 'parameter_declared_with_two_types' cannot be used in a constant expression
#include "common.hpp"
constexpr auto g = graph(memset<"clear_f">(param<"data", float*>, 0, 16),
                         memset<"clear_i">(param<"data", int*>, 0, 16));
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
