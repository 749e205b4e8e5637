// An int* cannot be passed where scale takes a float*. Passed as a function
// pointer, the kernel is named by its signature.
// expect-error: kernel_argument_mismatch<.*Kernel ?= ?cudag::kernel_ref<void ?\(float\*, float, int\)>.*Position ?= ?0.*Parameter ?= ?float\*.*Argument ?= ?int\*
// expect-error clang: '~kernel_argument_mismatch' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: (float*, float, int)
#include "kernel_of.hpp"
void declare(cudag::builder& b, int* x) { b.kernel("scale", &scale, cudag::launch(1, 32), x, 2.0f, 4); }
