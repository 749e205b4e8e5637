// Atomic updates of y (declared concurrent) beside a kernel reading y, in a
// child graph and its enclosing graph: the child node touches y for the
// node inside it, and is named.
// expect-error: race<.*"tally".*"report".*"y"
// expect-name: tally
// expect-name: report
// expect-error clang: non-constexpr constructor 'race' cannot be used in a constant expression
// name-unprinted clang: clang 14 names the error type's constructor, not its template arguments
#include "common.hpp"
constexpr auto counting = graph(
    with_access<1, access_mode::concurrent>(kernel<"count", cf::axpy>(1, 32, x, y, 1.0f, n)));
constexpr auto g = graph(child<"tally">(counting),
                         kernel<"report", cf::axpy>(1, 32, y, param<"out", float*>, 1.0f, n));
void use() { (void)to_spec(g); }
