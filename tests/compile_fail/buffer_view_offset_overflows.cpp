// A view 2^62 floats into buffer "tmp" would be a byte offset past what
// std::size_t holds: refused where the graph is declared, naming the buffer,
// rather than wrapped to a valid-looking address.
// expect-error: buffer_view_offset_overflows.*"tmp"
// expect-name: tmp
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"make">(tmp, 64),
                         kernel<"fill", cf::scale>(1, 32, tmp + (std::size_t(1) << 62), 2.0f, 64),
                         edge<"make", "fill">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
