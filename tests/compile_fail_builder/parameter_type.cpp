// Parameter "a" is declared double; scale takes a float at position 1.
// expect-error: kernel_argument_mismatch<1, float, cudag::param_handle<double> >
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto a = b.param<double>("a");
  b.kernel("scale", &scale, cudag::launch(1, 32), x, a, 4);
}
