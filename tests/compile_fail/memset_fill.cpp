// 0.0 is a double: 8 bytes, and memset elements are 1, 2 or 4 bytes.
// expect-error: node_operand_has_wrong_type<.*"clear_y"\}, .*"fill \(1, 2 or 4 bytes\)"\}, unsigned int, double>
// expect-error gcc: node_operand_has_wrong_type<.*Node = .*"clear_y"\}; .*What = .*"fill \(1, 2 or 4 bytes\)"\}; Expected = unsigned int; Argument = double\]
// expect-name: clear_y
// expect-error clang: node_operand_has_wrong_type<\{"clear_y"\}
#include "common.hpp"
constexpr auto g = graph(memset<"clear_y">(y, 0.0, 1024));
void use(float* d) { use_graph(g, y = d); }
