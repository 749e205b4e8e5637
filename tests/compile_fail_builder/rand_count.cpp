// The count of a random fill is an integer.
// expect-error: static assertion failed.*cudag::rand::fill: the count is an integer literal or parameter
#include "cudag/rand.hpp"
void declare(cudag::builder& b, float* out) {
  (void)cudag::add_op(b, "noise", cudag::rand::fill{}, out, 1024.0);
}
