// Compiles alone: the header includes what it uses.
#include "cudag/dsl/chunked_tuple.hpp"
#include "cudag/dsl/chunked_tuple.hpp"  // and twice
