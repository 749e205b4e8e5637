// A node depending on itself is a cycle of one.
// expect-error: cycle_through<.*"loop_back -> loop_back"
// expect-name: loop_back -> loop_back
// expect-error clang: non-constexpr constructor 'cycle_through' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"loop_back", cf::scale>(1, 32, x, 2.0f, n), edge<"loop_back", "loop_back">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
