// Compiles alone: the header includes what it uses.
#include "cudag/dsl/node.hpp"
#include "cudag/dsl/node.hpp"  // and twice
