// The callable takes a float*; the node passes an int.
// expect-error: static assertion failed.*cudag: the host callable cannot be called with these arguments
#include "kernel_of.hpp"
void declare(cudag::builder& b) { b.host("report", [](const float* p) { (void)p; }, 4); }
