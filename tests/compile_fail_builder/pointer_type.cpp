// An int* cannot be passed where scale takes a float*.
// expect-error: kernel_argument_mismatch<0, float\*, int\*>
#include "kernel_of.hpp"
void declare(cudag::builder& b, int* x) { b.kernel("scale", &scale, cudag::launch(1, 32), x, 2.0f, 4); }
