// Host nodes are not allowed inside conditional bodies.
// expect-error: node_kind_forbidden_in_conditional_body<.*"iterate/report \(host node\)"
// expect-name: iterate/report
// expect-error clang: node_kind_forbidden_in_conditional_body<\{"iterate/re\.\.\."\}
// expect-name clang: iterate/re
// context-first gcc: a body rule, judged by the conditional node over its body's kinds in a static_assert
#include "common.hpp"
constexpr auto body = graph(kernel<"step", cf::scale>(1, 32, x, 2.0f, n),
                            host<"report">([](int v) { (void)v; }, n), edge<"step", "report">);
constexpr auto g = graph(while_loop<"iterate">(condition<"more">, body));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
