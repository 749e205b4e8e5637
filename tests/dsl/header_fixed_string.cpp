// Compiles alone: the header includes what it uses.
#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/fixed_string.hpp"  // and twice
