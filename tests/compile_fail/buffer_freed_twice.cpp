// Two free nodes for one buffer.
// expect-error: buffer_freed_twice<.*"tmp \(nodes free_a and free_b\)"
// expect-name: tmp (nodes free_a and free_b)
// expect-error clang: non-constexpr constructor 'buffer_freed_twice' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"alloc_tmp">(tmp, 256), kernel<"use", cf::scale>(1, 32, tmp, 1.0f, n),
                         mem_free<"free_a">(tmp), mem_free<"free_b">(tmp),
                         edges<"alloc_tmp -> use -> free_a", "use -> free_b">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
