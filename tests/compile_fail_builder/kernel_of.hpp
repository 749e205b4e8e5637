#pragma once
// The kernel signature the run-time builder's compile-fail cases call wrongly.
// Its twin, a call that compiles, is tests/engine/test_builder.cpp.
#include "cudag/builder.hpp"

inline void scale(float*, float, int) {}
