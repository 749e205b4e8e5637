// The callable takes a float*; the node passes an int.
// expect-error: host_callable_does_not_accept<.*\(const float\*\).*Arguments ?= ?(\{int\}|<int>)
// expect-name: (const float*)
#include "kernel_of.hpp"
void declare(cudag::builder& b) {
  auto report = b.host("report", [](const float* p) { (void)p; }, 4);
  report.after(b.empty("before"));
}
