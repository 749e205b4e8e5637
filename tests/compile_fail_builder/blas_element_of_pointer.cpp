// element_of reads the element type of a matrix pointer type.
// expect-error: static assertion failed.*cudag::blas::gemm: matrices are passed as pointers
#include "cudag/blas.hpp"
auto code = cudag::blas::element_of<float>();
