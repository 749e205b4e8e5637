// Every public header is compiled alone, each in its own generated
// translation unit (tests/headers/meson.build); these tests check the
// surfaces of the master headers and of the check layer's.
#include <gtest/gtest.h>

#include "cudag/check.hpp"
#include "cudag/dot.hpp"
#include "cudag/dsl.hpp"

namespace {
void touch(int* p) { (void)p; }
}  // namespace

TEST(Headers, DslMasterHeaderDeclaresEveryNodeKind) {
  using namespace cudag::dsl;
  constexpr auto p = param<"p", int*>;
  constexpr auto body = graph(kernel<"k", touch>(1, 1, p));
  constexpr auto g = graph(kernel<"a", touch>(1, 1, p), memset<"b">(p, 1, 4), empty<"c">(),
                           child<"d">(body), if_then<"e">(condition<"c1">, body),
                           chain<"a", "b", "c", "d", "e">);
  EXPECT_EQ(decltype(g)::node_count, 5u);
  EXPECT_EQ(to_spec(g).nodes.size(), 5u);
}

TEST(Headers, CheckAndDotHeadersDeclareTheirSurface) {
  const cudag::graph_analysis analysis;
  EXPECT_EQ(analysis.order.size() + analysis.critical_path + analysis.width, 0u);
  EXPECT_EQ(cudag::to_dot(cudag::graph_spec{}).rfind("digraph \"cudag\" {", 0), 0u);
}
