// A transform writes its output: a pointer to const is refused.
// expect-error: static assertion failed.*cudag::fft::transform: input and output are device pointers, pointer parameters or buffers; the output is non-const
#include "cudag/fft.hpp"
void declare(cudag::builder& b, const float* in, const cufftComplex* out) {
  (void)cudag::add_op(b, "forward", cudag::fft::transform{{.shape = {64}}}, in, out);
}
