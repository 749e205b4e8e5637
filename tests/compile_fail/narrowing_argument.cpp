// 2.0 is a double; the kernel takes a float at position 1.
// expect-error: kernel_argument_does_not_convert<.*"scale_x"\}, 1, float, double>
// expect-error gcc: kernel_argument_does_not_convert<.*Node = .*"scale_x"\}; .*Position = 1; Parameter = float; Argument = double\]
// expect-name: scale_x
#include "common.hpp"
constexpr auto g = graph(kernel<"scale_x", cf::scale>(1, 32, x, 2.0, n));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
