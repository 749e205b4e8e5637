// The DSL half of the field matrix compiled by nvcc: users write DSL graphs
// in .cu files, so the same declarations must compile and mean the same there.
#include "dsl_field_matrix_test.cpp"
