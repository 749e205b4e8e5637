// Compiles alone: the header includes what it uses.
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/items.hpp"  // and twice
