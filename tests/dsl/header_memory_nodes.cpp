// Compiles alone: the header includes what it uses.
#include "cudag/dsl/memory_nodes.hpp"
#include "cudag/dsl/memory_nodes.hpp"  // and twice
