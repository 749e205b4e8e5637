// Prelude: an instantiated graph of the run-time builder, `exec`, and a
// buffer handle of its graph.
#pragma once
#include "data.hpp"

extern cudag::exec exec;
extern const cudag::buffer_handle<float> tmp;
