// A kernel sets a condition that no conditional node tests: CUDA refuses to
// instantiate a graph with an unused conditional handle.
// expect-error: condition_tested_by_no_conditional_node<.*"more \(read by node decide\)"
// expect-name: more (read by node decide)
// expect-error clang: '~condition_tested_by_no_conditional_node' has been explicitly marked deleted
// name-unprinted clang: clang 14 names the error type's destructor, not its template arguments
#include "common.hpp"
constexpr auto more = condition<"more">;
constexpr auto g = graph(kernel<"decide", cf::set_flag>(1, 1, more));
auto spec() { return to_spec(g); }
