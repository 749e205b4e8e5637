// A kernel in case 1 of a switch is given buffer "tmp" 65 floats in, past
// the end of the 64 floats the enclosing graph allocates: the body is
// declared before that graph, so the enclosing graph() refuses it, naming
// the switch node and the buffer (the message names the path, pick[1]/late).
// expect-error: buffer_view_past_its_allocation.*"pick"
// expect-name: pick
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto late = graph(kernel<"late", cf::scale>(1, 32, tmp + 65, 2.0f, 0));
constexpr auto g = graph(mem_alloc<"make">(tmp, 64),
                         switch_case<"pick">(condition<"which">, graph(empty<"none">()), late),
                         edge<"make", "pick">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
