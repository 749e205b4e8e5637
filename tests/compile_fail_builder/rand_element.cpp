// cuRAND fills float or double.
// expect-error: static assertion failed.*cudag::rand::fill: the output holds float or double
#include "cudag/rand.hpp"
void declare(cudag::builder& b, int* out) {
  (void)cudag::add_op(b, "noise", cudag::rand::fill{}, out, 1024);
}
