// Parameter "a" is declared double; scale takes a float at position 1.
// expect-error: kernel_argument_mismatch<.*\{"scale"\}.*Position ?= ?1.*Parameter ?= ?float.*Argument ?= ?cudag::param_handle<double>
// expect-error clang: '~kernel_argument_mismatch' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: {"scale"}
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto a = b.param<double>("a");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, a, 4);
}
