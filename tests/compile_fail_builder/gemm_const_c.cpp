// C is written: a pointer to const cannot be C.
// expect-error: static assertion failed.*cudag::blas::gemm: C must be a pointer to non-const
#include "cudag/blas.hpp"
void declare(cudag::builder& b, const float* m, const float* c) {
  (void)cudag::blas::gemm(b, "project", {.m = 4, .n = 4, .k = 4}, m, m, c);
}
