// Compiles alone: the header includes what it uses.
#include "cudag/dsl/shape.hpp"
#include "cudag/dsl/shape.hpp"  // and twice
