// An integral literal for an integral kernel parameter is accepted when its
// value fits (1 << 24 for a std::size_t); -1 does not fit: refused where the
// graph is declared, naming the node and the argument's position (from 0).
// expect-error: kernel_argument_out_of_range.*"reduce"\}.*Position ?= ?2.*Parameter ?= ?(std::size_t|long unsigned int|unsigned long)
// expect-name: reduce
// expect-error clang: kernel_argument_out_of_range<\{"reduce"\}
// context-first gcc: a value, checked by constant evaluation
#include "common.hpp"
namespace cf {
inline void reduce(const float* in, float* out, std::size_t count) { (void)in, (void)out, (void)count; }
}  // namespace cf
constexpr auto g = graph(kernel<"reduce", cf::reduce>(1, 256, x, y, -1));
// Used afterwards: the node's error stays the only one.
void use() { (void)to_spec(g); }
