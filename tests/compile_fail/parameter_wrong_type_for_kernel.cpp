// Parameter "count" is declared float; the kernel takes an int at position 2.
// expect-error: kernel_argument_does_not_convert<.*"scale_n"\}, 2, int, cudag::dsl::param_t<.*"count"
// expect-error gcc: kernel_argument_does_not_convert<.*Node = .*"scale_n"\}; .*Position = 2; Parameter = int; Argument = cudag::dsl::param_t<.*"count"
// expect-name: scale_n
#include "common.hpp"
constexpr auto count = param<"count", float>;
constexpr auto g = graph(kernel<"scale_n", cf::scale>(1, 32, x, 2.0f, count));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
