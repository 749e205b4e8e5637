// cuBLAS GEMM nodes take float, __half or __nv_bfloat16 matrices.
// expect-error: static assertion failed.*cudag::blas::gemm: matrices hold float, __half or __nv_bfloat16
#include "cudag/blas.hpp"
void declare(cudag::builder& b, const double* m, float* c) {
  (void)cudag::blas::gemm(b, "project", {.m = 4, .n = 4, .k = 4}, m, m, c);
}
