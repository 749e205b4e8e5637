// A switch node with no case body.
// expect-error: switch_without_cases<.*"pick"
// expect-name: "pick"
// context-first gcc: a static_assert of switch_case<>() over its pack of bodies
#include "common.hpp"
constexpr auto which = condition<"which">;
constexpr auto g = graph(switch_case<"pick">(which));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
