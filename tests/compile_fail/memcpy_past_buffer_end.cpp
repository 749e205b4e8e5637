// A copy of 256 bytes into a 64-float buffer from element 32 on would write
// 128 bytes past its end: refused where the graph is declared, naming the
// node and the buffer.
// expect-error: buffer_view_past_its_allocation.*"copy"
// expect-name: copy
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"make">(tmp, 64), memcpy<"copy">(tmp + 32, x, 256),
                         edge<"make", "copy">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
