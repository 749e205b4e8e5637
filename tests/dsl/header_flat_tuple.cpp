// Compiles alone: the header includes what it uses.
#include "cudag/dsl/flat_tuple.hpp"
#include "cudag/dsl/flat_tuple.hpp"  // and twice
