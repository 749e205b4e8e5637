// A random fill writes its output: a pointer to const is refused.
// expect-error: static assertion failed.*cudag::rand::fill: the output is a device pointer, pointer parameter or buffer, non-const
#include "cudag/rand.hpp"
void declare(cudag::builder& b, const float* out) {
  (void)cudag::add_op(b, "noise", cudag::rand::fill{}, out, 1024);
}
