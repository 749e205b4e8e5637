// A node named "".
// expect-error: node_with_empty_name<.*"#1 \(kernel node\)"
// expect-name: #1 (kernel node)
#include "common.hpp"
constexpr auto g = graph(empty<"start">(), kernel<"", cf::scale>(1, 32, x, 1.0f, n));
