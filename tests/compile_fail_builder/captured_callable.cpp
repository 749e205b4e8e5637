// A capture callable takes the capture stream first; this one does not.
// expect-error: static assertion failed.*cudag: the capture callable cannot be called with \(stream, arguments\.\.\.\)
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  b.captured("record", "what", [](float* p, int n) { (void)p, (void)n; }, x, 4);
}
