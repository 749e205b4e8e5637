// A chain of one node joins nothing.
// expect-error: static assertion failed.*cudag: a chain joins at least two nodes
// expect-name: "scale"
// cascade-known clang: graph() reads the refused item's body_type; clang goes on past the failed
// context-first gcc: a static_assert of the edge template chain<>
// check (dsl/cudag/dsl/graph.hpp), g++ stops there.
#include "common.hpp"
constexpr auto g = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n), chain<"scale">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
