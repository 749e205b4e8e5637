// A memcpy destination must be a pointer.
// expect-error: node_operand_has_wrong_type<.*"stage".*"destination"
// expect-name: "stage"
// expect-error clang: node_operand_has_wrong_type<\{"stage"\}
#include "common.hpp"
constexpr auto g = graph(memcpy<"stage">(n, x, 64));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
