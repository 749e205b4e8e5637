// A capture callable takes the capture stream first; this one does not.
// expect-error: capture_callable_does_not_accept<.*\(float\*, int\).*Arguments ?= ?(\{|<)CUstream_st\*, float\*, int
// expect-name: (float*, int)
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  b.captured("record", "what", [](float* p, int n) { (void)p, (void)n; }, x, 4);
}
