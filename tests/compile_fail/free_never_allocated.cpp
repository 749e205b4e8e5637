// A free node for a buffer that no node allocates.
// expect-error: buffer_freed_but_never_allocated<.*"node release frees buffer tmp"
// expect-name: node release frees buffer tmp
// expect-error clang: '~buffer_freed_but_never_allocated' has been explicitly marked deleted
// name-unprinted clang: clang 14 names the error type's destructor, not its template arguments
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(kernel<"use", cf::scale>(1, 32, x, 1.0f, n), mem_free<"release">(tmp),
                         edge<"use", "release">);
auto lowered_graph() { return lower(g, x = nullptr, n = 1); }
