// A refused node (the callable takes an int, the node passes a float*)
// wrapped by with_access() inside graph(): one error,
// naming the node, where the graph is declared.
// expect-error: callable_does_not_accept_arguments<.*"report_n"\}, .*, float\*>
// expect-error gcc: callable_does_not_accept_arguments<.*Node = .*"report_n"\}; .*ArgumentTypes = \{float\*\}\]
// expect-name: report_n
#include "common.hpp"
constexpr auto g = graph(
    kernel<"first", cf::scale>(1, 32, x, 2.0f, n),
    with_access<0, access_mode::read>(host<"report_n">([](int) {}, x)),
    edge<"first", "report_n">);
void use(float* d) { use_graph(g, x = d, n = 4); }
