// scale takes three arguments; two are given. The error names the kernel
// (CUDAG_KERNEL carries its name), both counts, and nothing else follows.
// expect-error: kernel_argument_count_mismatch<.*Kernel ?= ?cudag::named_kernel<cudag::kernel_name<6>\{"scale"\}, void ?\(float\*, float, int\)>.*Parameters ?= ?3.*Arguments ?= ?2
// expect-error clang: '~kernel_argument_count_mismatch' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: {"scale"}
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto s = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f);
  auto after = b.empty("after");
  after.after(s);  // the refused node is still usable here: no second error
}
