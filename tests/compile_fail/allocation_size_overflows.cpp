// 2^62 + 1 floats are more bytes than std::size_t holds: refused where the
// graph is declared, naming the node and the buffer, rather than wrapped to
// a 4-byte allocation.
// expect-error: allocation_size_overflows.*"make".*"tmp"
// expect-name: make
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"make">(tmp, (std::size_t(1) << 62) + 1),
                         kernel<"fill", cf::scale>(1, 32, tmp, 2.0f, 64), edge<"make", "fill">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
