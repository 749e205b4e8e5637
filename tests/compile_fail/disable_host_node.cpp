// Only kernel, memset and memcpy nodes can be disabled.
// expect-error: node_kind_cannot_be_disabled<.*"report"
// expect-name: "report"
// expect-error clang: '~node_kind_cannot_be_disabled' has been explicitly marked deleted
#include "common.hpp"
constexpr auto g = graph(host<"report">([](int v) { (void)v; }, n));
void toggle() {
  auto e = instantiate(g, n = 1);
  e.set_enabled<"report">(false);
}
