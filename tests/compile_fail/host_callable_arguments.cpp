// The callable takes a float*; the node passes n, an int.
// expect-error: callable_does_not_accept_arguments<.*"report"\}, .*, int>
// expect-error gcc: callable_does_not_accept_arguments<.*Node = .*"report"\}; .*ArgumentTypes = \{int\}\]
// expect-name: "report"
#include "common.hpp"
constexpr auto g = graph(host<"report">([](const float* p) { (void)p; }, n));
void use(float* d) { use_graph(g, n = 4); (void)d; }
