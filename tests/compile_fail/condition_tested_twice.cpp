// Two conditional nodes testing one condition: CUDA binds a conditional
// handle to exactly one conditional node.
// expect-error: condition_tested_by_two_conditional_nodes<.*"more \(nodes loop and again\)"
// expect-name: more (nodes loop and again)
// expect-error clang: non-constexpr constructor 'condition_tested_by_two_conditional_nodes' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto more = condition<"more", 1>;
constexpr auto body = graph(kernel<"step", cf::scale>(1, 32, x, 2.0f, n));
constexpr auto g = graph(while_loop<"loop">(more, body), while_loop<"again">(more, body),
                         edge<"loop", "again">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
