// A refused kernel node (2.0 is a double where the kernel takes an int)
// wrapped by with_priority(), with_attributes() and
// synchronizes_grid_dependencies() inside graph(): one error, naming the
// node, where the graph is declared.
// expect-error: kernel_argument_does_not_convert<.*"scale_w"\}, 2, int, double>
// expect-error gcc: kernel_argument_does_not_convert<.*Node = .*"scale_w"\}; .*Position = 2; Parameter = int; Argument = double\]
// expect-name: scale_w
#include "common.hpp"
constexpr auto g = graph(synchronizes_grid_dependencies(with_attributes(
    with_priority(kernel<"scale_w", cf::scale>(1, 32, x, 2.0f, 2.0), 1), cudag::launch_attributes{})));
void use(float* d) { use_graph(g, x = d); }
