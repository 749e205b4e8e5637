// Parameter "a" is declared double; scale takes a float at position 1.
// expect-error: kernel_argument_mismatch<1, float, (std::remove_cvref_t<)?cudag::param_handle<double>
// nvcc spells the argument type as the alias it was computed with, std::remove_cvref_t<...>
// (include/cudag/arguments.hpp), so the pattern accepts that spelling too.
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto a = b.param<double>("a");
  b.kernel("scale", &scale, cudag::launch(1, 32), x, a, 4);
}
