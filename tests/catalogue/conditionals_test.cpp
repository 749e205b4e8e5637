// Bad-input catalogue, conditionals: bodies, their node kinds, conditions.
#include <string>
#include <utility>
#include <vector>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"

namespace {

using catalogue::refusal;
using catalogue::set_flag;
using catalogue::strings;

cudag::graph_spec setter_body(const cudag::condition_handle& c) {
  cudag::builder body("body");
  body.kernel("step", CUDAG_KERNEL(set_flag), cudag::launch(1, 1), c);
  return body.build();
}

TEST(Catalogue, HostNodeInAWhileBodyIsNamed) {
  cudag::builder b("g");
  auto more = b.condition("more", 1);
  cudag::builder body("body");
  auto step = body.kernel("step", CUDAG_KERNEL(set_flag), cudag::launch(1, 1), more);
  auto report = body.host("report", [] {});
  body.edge(step, report);
  b.while_loop("iterate", more, body.build());
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'iterate/report' is a host node, which CUDA does not allow inside a conditional "
            "body (it is in the body of 'iterate'); bodies take kernel, memcpy, memset, empty, "
            "child, captured and conditional nodes");
  EXPECT_EQ(c->nodes(), (strings{"iterate/report"}));
}

TEST(Catalogue, EventNodeInAChildOfAnIfBodyIsNamed) {
  cudag::builder b("g");
  auto go = b.condition("go", 1);
  auto ev = b.param<cudaEvent_t>("ev");
  cudag::builder wrapped("wrapped");
  wrapped.record("signal", ev);
  cudag::builder body("body");
  body.child("wrapped", wrapped.build());
  b.if_then("maybe", go, body.build());
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'maybe/wrapped/signal' is an event_record node, which CUDA does not allow "
            "inside a conditional body (it is in the child graph of 'maybe/wrapped'); bodies take "
            "kernel, memcpy, memset, empty, child, captured and conditional nodes");
  EXPECT_EQ(c->nodes(), (strings{"maybe/wrapped/signal"}));
}

TEST(Catalogue, AllocInASwitchCaseIsNamed) {
  cudag::builder b("g");
  auto which = b.condition("which");
  cudag::builder case0("case0");
  case0.empty("nothing");
  cudag::builder case1("case1");
  case1.alloc<float>("grab", 64);
  std::vector<cudag::graph_spec> cases;
  cases.push_back(case0.build());
  cases.push_back(case1.build());
  b.switch_case("pick", which, std::move(cases));
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'pick[1]/grab' is a mem_alloc node, which CUDA does not allow inside a "
            "conditional body (it is in the body 1 of 'pick'); bodies take kernel, memcpy, "
            "memset, empty, child, captured and conditional nodes");
  EXPECT_EQ(c->nodes(), (strings{"pick[1]/grab"}));
}

TEST(Catalogue, SwitchWithoutCasesIsNamed) {
  cudag::builder b("g");
  auto which = b.condition("which");
  b.switch_case("pick", which, {});
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "conditional node 'pick' (switch) has 0 bodies; switch needs at least 1 (one per case)");
  EXPECT_EQ(c->nodes(), (strings{"pick"}));
}

TEST(Catalogue, IfElseWithOneBodyIsNamed) {
  cudag::builder b("g");
  auto go = b.condition("go", 1);
  b.if_else("choose", go, setter_body(go), setter_body(go));
  cudag::graph_spec spec = b.build();
  std::get<cudag::conditional_node>(spec.nodes[0].params).bodies.pop_back();
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "conditional node 'choose' (if_else) has 1 bodies; if_else needs exactly 2 (then and "
            "else)");
  EXPECT_EQ(c->nodes(), (strings{"choose"}));
}

TEST(Catalogue, UnusedConditionIsNamed) {
  cudag::builder b("g");
  auto more = b.condition("more", 1);
  b.kernel("decide", CUDAG_KERNEL(set_flag), cudag::launch(1, 1), more);  // sets it, tests nothing
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "condition 'more' is declared in graph 'g' but no conditional node uses it (read "
            "by node 'decide'); CUDA refuses to instantiate a graph with an unused conditional "
            "handle");
  EXPECT_EQ(c->nodes(), strings{"decide"});
}

TEST(Catalogue, ConditionTestedTwiceNamesBothNodes) {
  cudag::builder b("g");
  auto more = b.condition("more", 1);
  auto loop = b.while_loop("loop", more, setter_body(more));
  auto again = b.while_loop("again", more, setter_body(more));
  b.edge(loop, again);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "condition 'more' is tested by two conditional nodes, 'loop' and 'again'; CUDA binds "
            "a conditional handle to one conditional node: declare one condition for each");
  EXPECT_EQ(c->nodes(), (strings{"loop", "again"}));
}

TEST(Catalogue, UndeclaredConditionIsNamed) {
  cudag::builder other("other");
  auto more = other.condition("more", 1);  // declared in another graph
  cudag::builder body("body");
  body.empty("nothing");
  cudag::builder b("g");
  b.while_loop("loop", more, body.build());
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "conditional node 'loop' uses condition 'more', which is not declared in its graph or "
            "an enclosing one");
  EXPECT_EQ(c->nodes(), (strings{"loop"}));
}

TEST(Catalogue, ConditionDeclaredTwiceIsNamed) {
  cudag::builder b("g");
  (void)b.condition("more", 1);
  auto e = refusal<cudag::error>([&] { (void)b.condition("more", 0); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': condition 'more' declared twice");
}

}  // namespace
