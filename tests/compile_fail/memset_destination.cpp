// A memset destination must be a pointer; n is an int.
// expect-error: node_operand_has_wrong_type<.*"clear_n"\}, .*"destination"\}, void\*, cudag::dsl::param_t<.*"n"\}, int>
// expect-error gcc: node_operand_has_wrong_type<.*Node = .*"clear_n"\}; .*What = .*"destination"\}; Expected = void\*; Argument = cudag::dsl::param_t<.*"n"\}, int>\]
// expect-name: clear_n
// expect-error clang: node_operand_has_wrong_type<\{"clear_n"\}
#include "common.hpp"
constexpr auto g = graph(memset_2d<"clear_n">(n, 256, 0u, 64, 4));
void use() { use_graph(g, n = 4); }
