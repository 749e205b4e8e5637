// A record node records a cudaEvent_t (or an event parameter); 3 is an int.
// expect-error: node_operand_has_wrong_type<.*Operand ?= ?cudag::operand::event.*Expected ?= ?CUevent_st\*.*Given ?= ?int
// expect-error clang: '~node_operand_has_wrong_type' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: operand::event
#include "kernel_of.hpp"
void declare(cudag::builder& b) { b.record("done", 3); }
