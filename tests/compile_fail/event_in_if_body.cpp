// An event record node inside an if body (through a child graph).
// expect-error: node_kind_forbidden_in_conditional_body<.*"maybe/wrapped/signal \(event_record node\)"
// expect-name: maybe/wrapped/signal
// expect-error clang: node_kind_forbidden_in_conditional_body<\{"maybe/wrap\.\.\."\}
// expect-name clang: maybe/wrap
// context-first gcc: a body rule, judged by the conditional node over its body's kinds in a static_assert
#include "common.hpp"
constexpr auto inner = graph(record<"signal">(param<"event", cudaEvent_t>));
constexpr auto body = graph(child<"wrapped">(inner));
constexpr auto g = graph(if_then<"maybe">(condition<"flag">, body));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
