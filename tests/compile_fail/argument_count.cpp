// axpy takes four arguments.
// expect-error: kernel_argument_count_mismatch<.*"short_call"\}, 4, 3>
// expect-error gcc: kernel_argument_count_mismatch<.*Node = .*"short_call"\}; .*Expected = 4; .*Given = 3\]
// expect-name: short_call
// expect-error clang: kernel_argument_count_mismatch<\{"short_call\.\.\."\}
#include "common.hpp"
constexpr auto g = graph(kernel<"short_call", cf::axpy>(1, 32, x, y, 3.0f));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
