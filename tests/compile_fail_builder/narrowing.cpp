// 2.0 is a double; scale takes a float at position 1.
// expect-error: kernel_argument_mismatch<1, float, double>
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) { b.kernel("scale", &scale, cudag::launch(1, 32), x, 2.0, 4); }
