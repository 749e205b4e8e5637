// Launch attributes are checked where the node is declared: a cluster of 4
// blocks over a grid of 6 is refused, naming the node and the fault.
// expect-error: launch_attributes_refused.*"rows"\}.*Fault ?= ?(cudag::)?launch_attribute_fault::cluster_does_not_divide_grid
// expect-name: rows
// expect-error clang: launch_attributes_refused<\{"rows"\}, cudag::launch_attribute_fault::cluster_does_not_divide_grid>
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto g = graph(with_attributes(kernel<"rows", cf::scale>(6, 32, x, 2.0f, n), {.cluster = dim3(4, 1, 1)}));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
