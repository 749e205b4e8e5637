// Two mem_alloc nodes produce buffer tmp.
// expect-error: buffer_allocated_twice<.*"tmp \(nodes (alloc_a and alloc_b|alloc_b and alloc_a)\)"
// expect-name: tmp (nodes
// expect-error clang: non-constexpr constructor 'buffer_allocated_twice' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"alloc_a">(tmp, 256), mem_alloc<"alloc_b">(tmp, 128),
                         kernel<"use_tmp", cf::scale>(1, 128, tmp, 2.0f, 128), mem_free<"free_tmp">(tmp),
                         chain<"alloc_a", "alloc_b", "use_tmp", "free_tmp">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
