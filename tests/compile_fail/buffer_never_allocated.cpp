// A kernel reads a graph-owned buffer that no node allocates.
// expect-error: buffer_used_but_never_allocated<.*"node use uses buffer tmp"
// expect-name: node use uses buffer tmp
// expect-error clang: '~buffer_used_but_never_allocated' has been explicitly marked deleted
// name-unprinted clang: clang 14 names the error type's destructor, not its template arguments
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(kernel<"use", cf::scale>(1, 32, tmp, 1.0f, n));
auto lowered_graph() { return to_spec(g); }
