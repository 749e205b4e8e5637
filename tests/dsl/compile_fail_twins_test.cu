// The DSL twins (compile_fail_twins_test.cpp) compiled by nvcc: the same
// declarations compile under both front ends.
#include "compile_fail_twins_test.cpp"
