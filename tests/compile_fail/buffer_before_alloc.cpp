// "use_tmp" reads tmp but is not ordered after the node that allocates it.
// expect-error: buffer_used_outside_its_lifetime<.*"node use_tmp uses buffer tmp but is not ordered after its alloc node alloc_tmp"
// expect-name: node use_tmp uses buffer tmp
// expect-error clang: non-constexpr constructor 'buffer_used_outside_its_lifetime' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto g = graph(mem_alloc<"alloc_tmp">(tmp, 256), kernel<"use_tmp", cf::scale>(1, 256, tmp, 2.0f, 256),
                         mem_free<"free_tmp">(tmp), edge<"alloc_tmp", "free_tmp">);
// Used as a program uses a graph (its spec, an exec, a rebind, a child):
// the declaration's error stays the only one.
void use(float* d) { use_graph(g, x = d, n = 4); (void)child<"inner">(g); }
