// alpha is a float; 0.5 is a double.
// expect-error: static assertion failed.*cudag::blas::gemm: alpha and beta are float
#include "cudag/blas.hpp"
void declare(cudag::builder& b, const float* m, float* c) {
  (void)cudag::blas::gemm(b, "project", {.m = 4, .n = 4, .k = 4}, m, m, c, 0.5);
}
