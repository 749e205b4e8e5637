// The callable takes a float*; the node passes an int.
// expect-error: host_callable_does_not_accept<.*\(const float\*\).*Arguments ?= ?(\{int\}|<int>)
// expect-error clang: '~host_callable_does_not_accept' has been explicitly marked deleted
// name-unprinted clang: its note on the deleted destructor names the type without its arguments
// expect-name: (const float*)
#include "kernel_of.hpp"
void declare(cudag::builder& b) {
  auto report = b.host("report", [](const float* p) { (void)p; }, 4);
  report.after(b.empty("before"));
}
