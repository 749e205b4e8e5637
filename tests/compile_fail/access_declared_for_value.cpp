// with_access names argument 1 of scale, a float: it points at no memory.
// expect-error: access_declared_for_no_pointer_argument<.*"scale".*1
// expect-name: scale
#include "common.hpp"
constexpr auto g = graph(with_access<1, access_mode::read>(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n)));
// Used afterwards: the declaration's error stays the only one.
void use() { (void)to_spec(g); }
