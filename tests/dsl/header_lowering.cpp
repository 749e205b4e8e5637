// Compiles alone: the header includes what it uses.
#include "cudag/dsl/lowering.hpp"
#include "cudag/dsl/lowering.hpp"  // and twice
