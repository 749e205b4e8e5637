// 0.0 is a double: memset elements are 1, 2 or 4 bytes.
// expect-error: static assertion failed.*cudag: a memset fill value is a 1-, 2- or 4-byte integer or a float
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) { b.memset("clear", x, 0.0, 1024); }
