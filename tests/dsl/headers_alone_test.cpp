// Each public DSL header is compiled alone in its own translation unit
// (header_*.cpp); this test checks the master header's surface is complete.
#include <gtest/gtest.h>

#include "cudag/dsl.hpp"

namespace {
void touch(int* p) { (void)p; }
}  // namespace

TEST(DslHeaders, MasterHeaderDeclaresEveryNodeKind) {
  using namespace cudag::dsl;
  constexpr auto p = param<"p", int*>;
  constexpr auto body = graph(kernel<"k", touch>(1, 1, p));
  constexpr auto g = graph(kernel<"a", touch>(1, 1, p), memset<"b">(p, 1, 4), empty<"c">(),
                           child<"d">(body), if_then<"e">(condition<"c1">, body),
                           chain<"a", "b", "c", "d", "e">);
  EXPECT_EQ(decltype(g)::node_count, 5u);
  EXPECT_EQ(to_spec(g).nodes.size(), 5u);
}
