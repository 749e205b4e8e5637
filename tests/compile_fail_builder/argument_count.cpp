// scale takes three arguments; two are given.
// expect-error: wrong number of kernel arguments
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) { b.kernel("scale", &scale, cudag::launch(1, 32), x, 2.0f); }
