// Compiles alone: the header includes what it uses.
#include "cudag/dsl/exec.hpp"
#include "cudag/dsl/exec.hpp"  // and twice
