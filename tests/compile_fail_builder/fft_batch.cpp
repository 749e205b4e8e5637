// The batch count of a transform is an integer.
// expect-error: static assertion failed.*cudag::fft::transform: the batch is an integer literal or parameter
#include "cudag/fft.hpp"
void declare(cudag::builder& b, const float* in, cufftComplex* out) {
  (void)cudag::add_op(b, "forward", cudag::fft::transform{{.shape = {64}}}, in, out, 1.5);
}
