// Compiles alone: the header includes what it uses.
#include "cudag/dsl/host_nodes.hpp"
#include "cudag/dsl/host_nodes.hpp"  // and twice
