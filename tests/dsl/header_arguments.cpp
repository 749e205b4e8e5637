// Compiles alone: the header includes what it uses.
#include "cudag/dsl/arguments.hpp"
#include "cudag/dsl/arguments.hpp"  // and twice
