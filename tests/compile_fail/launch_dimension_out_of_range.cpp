// A launch dimension written with dims(), scaled() or shared_bytes() is
// checked where the node is declared: a literal 70000 is past grid.y's limit
// (65535), refused naming the node and the dimension.
// expect-error: launch_dimension_out_of_range.*"rows"\}.*Dim ?= ?(cudag::)?launch_dim::grid_y
// expect-name: rows
// expect-error clang: launch_dimension_out_of_range<\{"rows"\}
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
constexpr auto g = graph(kernel<"rows", cf::scale>(dims(4, 70000), dims(256), x, 2.0f, n));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
