// 2.0 is a double; scale takes a float at position 1.
// expect-error: kernel_argument_mismatch<.*Kernel ?= ?cudag::named_kernel<cudag::kernel_name<6>\{"scale"\}, void ?\(float\*, float, int\)>.*Position ?= ?1.*Parameter ?= ?float.*Argument ?= ?double\b
// expect-error clang: '~kernel_argument_mismatch' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: {"scale"}
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto s = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0, 4);
  b.edge(b.empty("before"), s);
}
