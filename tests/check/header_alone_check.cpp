// check.hpp compiles with nothing included before it.
#include "cudag/check.hpp"

namespace cudag::check_test {
std::size_t analysis_fields_from_check_header() {
  graph_analysis analysis;
  return analysis.order.size() + analysis.critical_path + analysis.width + 3;
}
}  // namespace cudag::check_test
