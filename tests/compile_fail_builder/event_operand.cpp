// A record node records a cudaEvent_t (or an event parameter); 3 is an int.
// expect-error: node_operand_has_wrong_type<.*Operand ?= ?cudag::operand::event.*Expected ?= ?CUevent_st\*.*Given ?= ?int
// expect-name: operand::event
#include "kernel_of.hpp"
void declare(cudag::builder& b) { b.record("done", 3); }
