// Two nodes named "scale_twice".
// expect-error: duplicate_node_name<.*"scale_twice"
// expect-name: scale_twice
// expect-error clang: non-constexpr constructor 'duplicate_node_name' cannot be used in a constant expression
#include "common.hpp"
constexpr auto g = graph(kernel<"scale_twice", cf::scale>(1, 32, x, 2.0f, n),
                         kernel<"scale_twice", cf::scale>(1, 32, y, 2.0f, n));
