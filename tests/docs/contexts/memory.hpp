// Prelude: a builder `b` for graph-owned memory, with an element count `n`
// (a number, not a parameter), launch shapes and an output parameter.
#pragma once
#include "data.hpp"

extern cudag::builder b;
constexpr int n = 1 << 16;
extern const unsigned blocks;
extern const cudag::param_handle<float*> out;
