// A memcpy source is a pointer, pointer parameter or buffer; 3.0 is a double.
// expect-error: node_operand_has_wrong_type<.*Operand ?= ?cudag::operand::memcpy_source.*Expected ?= ?const void\*.*Given ?= ?double
// expect-error clang: '~node_operand_has_wrong_type' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: memcpy_source
#include "kernel_of.hpp"
void declare(cudag::builder& b, float* x) {
  auto copy = b.memcpy("stage", x, 3.0, 64);
  b.edge(copy, b.empty("after"));
}
