// 0.0 is a double: memset elements are 1, 2 or 4 bytes.
// expect-error: memset_fill_is_not_1_2_or_4_bytes<.*Fill ?= ?double
// expect-error clang: '~memset_fill_is_not_1_2_or_4_bytes' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: memset_fill_is_not_1_2_or_4_bytes
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) { b.memset("clear", x, 0.0, 1024); }
