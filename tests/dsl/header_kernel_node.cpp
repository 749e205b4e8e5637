// Compiles alone: the header includes what it uses.
#include "cudag/dsl/kernel_node.hpp"
#include "cudag/dsl/kernel_node.hpp"  // and twice
