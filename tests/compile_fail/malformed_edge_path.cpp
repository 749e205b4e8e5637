// An arrow path with nothing after its last arrow.
// expect-error: malformed_edge_path<.*"load -> "
// expect-name: "load -> "
// cascade-known clang: graph() reads the refused item's body_type; clang goes on past the failed
// context-first gcc: a static_assert of the edge template edges<> over its path
// check (dsl/cudag/dsl/graph.hpp), g++ stops there.
#include "common.hpp"
// (Two memories: with the path refused the nodes are unordered, and a race
// on one would be a second error.)
constexpr auto g = graph(kernel<"load", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"store", cf::scale>(1, 32, y, 2.0f, n), edges<"load -> ">);
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
