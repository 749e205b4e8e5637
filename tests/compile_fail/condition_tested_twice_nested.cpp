// The second test of the condition sits in a child graph: still two
// conditional nodes for one handle. Both are named by path.
// expect-error: condition_tested_by_two_conditional_nodes<.*"more \(nodes (loop and inner/again|inner/again and loop)\)"
// expect-name: more (nodes
// expect-error clang: non-constexpr constructor 'condition_tested_by_two_conditional_nodes' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto more = condition<"more", 1>;
constexpr auto body = graph(kernel<"step", cf::scale>(1, 32, x, 2.0f, n));
constexpr auto nested = graph(while_loop<"again">(more, body));
constexpr auto g = graph(while_loop<"loop">(more, body), child<"inner">(nested),
                         edge<"loop", "inner">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
