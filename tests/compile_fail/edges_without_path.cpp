// edges<> with no path.
// expect-error: static assertion failed.*cudag: edges<> takes at least one path
// expect-name: edges<>
// cascade-known: edges_t folds and loops over its paths after the check (dsl/cudag/dsl/edges.hpp);
// context-first gcc: a static_assert of the edge template edges<>
// nvcc crashes on it, which still fails this case.
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n), edges<>);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
