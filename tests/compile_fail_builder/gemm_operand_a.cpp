// A GEMM's A is a matrix pointer; 1 is an int.
// expect-error: static assertion failed.*cudag::blas::gemm: A and B must be device pointers, pointer parameters or buffers
#include "cudag/blas.hpp"
void declare(cudag::builder& b, const float* m, float* c) {
  (void)cudag::blas::gemm(b, "project", {.m = 4, .n = 4, .k = 4}, 1, m, c);
}
