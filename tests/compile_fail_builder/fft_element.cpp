// cuFFT transforms float, double and their complex types, nothing else.
// expect-error: static assertion failed.*cudag::fft: data are float, double, cufftComplex \(float2\) or cufftDoubleComplex \(double2\)
#include "cudag/fft.hpp"
void declare(cudag::builder& b, const int* in, cufftComplex* out) {
  (void)cudag::add_op(b, "forward", cudag::fft::transform{{.shape = {64}}}, in, out);
}
