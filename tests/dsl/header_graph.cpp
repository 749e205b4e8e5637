// Compiles alone: the header includes what it uses.
#include "cudag/dsl/graph.hpp"
#include "cudag/dsl/graph.hpp"  // and twice
