// Compiles alone: the header includes what it uses.
#include "cudag/dsl/declarations.hpp"
#include "cudag/dsl/declarations.hpp"  // and twice
