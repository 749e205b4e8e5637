// A capture callable takes the capture stream first; this one does not.
// expect-error: capture_callable_does_not_accept<.*\(float\*, int\).*Arguments ?= ?(\{|<)CUstream_st\*, float\*, int
// expect-error clang: '~capture_callable_does_not_accept' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: (float*, int)
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  b.captured("record", "what", [](float* p, int n) { (void)p, (void)n; }, x, 4);
}
