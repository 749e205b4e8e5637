// An event wait node takes a cudaEvent_t; 7 is an int.
// expect-error: node_operand_has_wrong_type<.*"hold"\}, .*"event"\}, CUevent_st\*, int>
// expect-error gcc: node_operand_has_wrong_type<.*Node = .*"hold"\}; .*What = .*"event"\}; Expected = CUevent_st\*; Argument = int\]
// expect-name: "hold"
#include "common.hpp"
constexpr auto g = graph(wait<"hold">(7));
void use() { use_graph(g); }
