// An event record node takes a cudaEvent_t; x is a float*.
// expect-error: node_operand_has_wrong_type<.*"signal"\}, .*"event"\}, CUevent_st\*, cudag::dsl::param_t<.*"x"\}, float\*>
// expect-error gcc: node_operand_has_wrong_type<.*Node = .*"signal"\}; .*What = .*"event"\}; Expected = CUevent_st\*; Argument = cudag::dsl::param_t<.*"x"\}, float\*>\]
// expect-name: "signal"
#include "common.hpp"
constexpr auto g = graph(record<"signal">(x));
void use(float* d) { use_graph(g, x = d); }
