// dot.hpp compiles with nothing included before it.
#include "cudag/dot.hpp"

namespace cudag::check_test {
std::string dot_from_dot_header() { return to_dot(graph_spec{}); }
}  // namespace cudag::check_test
