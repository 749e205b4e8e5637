// Graph allocations are not allowed inside conditional bodies.
// expect-error: node_kind_forbidden_in_conditional_body<.*"pick\[1\]/grab \(mem_alloc node\)"
// expect-name: pick[1]/grab
// expect-error clang: node_kind_forbidden_in_conditional_body<\{"pick\[1\]/gr\.\.\."\}
// expect-name clang: pick[1]/gr
// context-first gcc: a body rule, judged by the conditional node over its body's kinds in a static_assert
#include "common.hpp"
constexpr auto scratch = buffer<"scratch", float>;
constexpr auto case0 = graph(kernel<"zero", cf::scale>(1, 32, x, 0.0f, n));
constexpr auto case1 = graph(mem_alloc<"grab">(scratch, 64));
constexpr auto g = graph(switch_case<"pick">(condition<"which">, case0, case1));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
