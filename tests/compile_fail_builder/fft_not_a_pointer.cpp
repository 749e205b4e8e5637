// cuFFT data are passed as pointers.
// expect-error: static assertion failed.*cudag::fft: data are passed as pointers
#include "cudag/fft.hpp"
void declare() { (void)cudag::fft::element_of<int>(); }
