// Two kernels write x and no path orders them: refused where the graph is
// declared, naming both nodes and the memory.
// expect-error: race<.*"scale".*"shift".*"x"
// expect-name: scale
// expect-name: shift
// expect-error clang: non-constexpr constructor 'race' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto g = graph(kernel<"load", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"scale", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"shift", cf::scale>(1, 32, x, 3.0f, n),
                         fan_out<"load", "scale", "shift">);
// Used as a program uses a graph: the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); }
