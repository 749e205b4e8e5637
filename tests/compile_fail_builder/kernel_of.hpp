#pragma once
// The kernel signature the run-time builder's compile-fail cases call wrongly.
// Their twins, calls that compile, are in builder_twins_test.cpp.
#include "cudag/builder.hpp"

inline void scale(float*, float, int) {}
