// Compiles alone: the header includes what it uses.
#include "cudag/dsl/edges.hpp"
#include "cudag/dsl/edges.hpp"  // and twice
