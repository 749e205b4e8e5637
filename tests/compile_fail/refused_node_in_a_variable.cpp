// A node kept in a variable of its own, refused (2.0 is a double where the
// kernel takes an int), then used in a graph and the graph used: one error,
// where the node is declared.
// expect-error: kernel_argument_does_not_convert<.*"scale_k"\}, 2, int, double>
// expect-error gcc: kernel_argument_does_not_convert<.*Node = .*"scale_k"\}; .*Position = 2; Parameter = int; Argument = double\]
// expect-name: scale_k
#include "common.hpp"
constexpr auto node = kernel<"scale_k", cf::scale>(1, 32, x, 2.0f, 2.0);
constexpr auto g = graph(node, empty<"after">(), edge<"scale_k", "after">);
void use(float* d) { use_graph(g, x = d); }
