// An int* cannot be passed where scale takes a float*.
// expect-error: kernel_argument_mismatch<0, float\*, (std::remove_cvref_t<)?int\*
// nvcc spells the argument type as the alias it was computed with, std::remove_cvref_t<...>
// (include/cudag/arguments.hpp), so the pattern accepts that spelling too.
#include "kernel_of.hpp"
void declare(cudag::builder& b, int* x) { b.kernel("scale", &scale, cudag::launch(1, 32), x, 2.0f, 4); }
