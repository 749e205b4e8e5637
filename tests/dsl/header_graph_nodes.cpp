// Compiles alone: the header includes what it uses.
#include "cudag/dsl/graph_nodes.hpp"
#include "cudag/dsl/graph_nodes.hpp"  // and twice
