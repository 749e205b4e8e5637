// Conditional nodes: body counts, node kinds CUDA forbids in bodies,
// condition declarations.
#include <gtest/gtest.h>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

graph_spec one_kernel_body(std::string name = "body_kernel") {
  return graph({make_node(std::move(name), kernel())});
}

graph_spec with_conditional(conditional_kind kind, std::vector<graph_spec> bodies) {
  return graph({empty("start"), make_node("branch", conditional(kind, "go", std::move(bodies)), {"start"})},
               {}, {declare_condition("go")});
}

TEST(CheckConditionals, EveryKindWithRightBodiesIsAccepted) {
  EXPECT_NO_THROW(check(with_conditional(conditional_kind::if_then, {one_kernel_body()})));
  EXPECT_NO_THROW(check(with_conditional(conditional_kind::while_loop, {one_kernel_body()})));
  EXPECT_NO_THROW(
      check(with_conditional(conditional_kind::if_else, {one_kernel_body(), one_kernel_body()})));
  EXPECT_NO_THROW(check(with_conditional(conditional_kind::switch_case,
                                         {one_kernel_body(), one_kernel_body(), one_kernel_body()})));
}

TEST(CheckConditionals, WrongBodyCountsAreRefused) {
  expect_rejected([&] { check(with_conditional(conditional_kind::if_then, {})); },
                  {"conditional node 'branch' (if) has 0 bodies", "exactly 1"}, {"branch"});
  expect_rejected(
      [&] { check(with_conditional(conditional_kind::while_loop, {one_kernel_body(), one_kernel_body()})); },
      {"(while) has 2 bodies", "exactly 1"}, {"branch"});
  expect_rejected([&] { check(with_conditional(conditional_kind::if_else, {one_kernel_body()})); },
                  {"(if_else) has 1 bodies", "exactly 2"}, {"branch"});
  expect_rejected([&] { check(with_conditional(conditional_kind::switch_case, {})); },
                  {"(switch) has 0 bodies", "at least 1"}, {"branch"});
}

TEST(CheckConditionals, ForbiddenKindsInBodyAreRefused) {
  const std::vector<std::pair<node_params, std::string>> forbidden{
      {host(), "a host node"},
      {event_record_node{make_literal(cudaEvent_t{})}, "an event_record node"},
      {event_wait_node{make_literal(cudaEvent_t{})}, "an event_wait node"},
      {alloc("tmp"), "a mem_alloc node"},
      {free_of("tmp"), "a mem_free node"},
  };
  for (const auto& [params, phrase] : forbidden) {
    const graph_spec body = graph({make_node("bad", params)});
    expect_rejected([&] { check(with_conditional(conditional_kind::while_loop, {body})); },
                    {"node 'branch/bad' is " + phrase, "not allow inside a conditional body"},
                    {"branch/bad"});
  }
}

TEST(CheckConditionals, ForbiddenKindInChildOfBodyIsRefused) {
  auto inner = std::make_shared<graph_spec>(graph({make_node("cb", host())}));
  const graph_spec body = graph({make_node("sub", child_node{inner})});
  expect_rejected([&] { check(with_conditional(conditional_kind::if_then, {body})); },
                  {"node 'branch/sub/cb' is a host node", "child graph of 'branch/sub'"},
                  {"branch/sub/cb"});
}

TEST(CheckConditionals, NodesOfNumberedBodiesAreNamedWithTheirIndex) {
  const graph_spec bad_else = graph({make_node("cb", host())});
  expect_rejected(
      [&] { check(with_conditional(conditional_kind::if_else, {one_kernel_body(), bad_else})); },
      {"'branch[1]/cb'", "else-body of 'branch'"}, {"branch[1]/cb"});
}

TEST(CheckConditionals, CapturedNodeInBodyIsAccepted) {
  captured_node captured{std::make_shared<const capture_function>(
                             [](cudaStream_t, std::span<const void* const>) {}),
                         {}, "library call"};
  const graph_spec body = graph({make_node("lib", captured)});
  EXPECT_NO_THROW(check(with_conditional(conditional_kind::while_loop, {body})));
}

TEST(CheckConditionals, UndeclaredConditionIsRefused) {
  const graph_spec g = graph({make_node("loop", conditional(conditional_kind::while_loop, "missing",
                                                            {one_kernel_body()}))});
  expect_rejected([&] { check(g); },
                  {"conditional node 'loop' uses condition 'missing'", "not declared"}, {"loop"});
}

TEST(CheckConditionals, ConditionOfEnclosingGraphIsVisible) {
  const graph_spec inner_body = one_kernel_body();
  const graph_spec outer_body =
      graph({make_node("inner", conditional(conditional_kind::if_then, "outer_cond", {inner_body}))},
            {}, {});
  const graph_spec g = graph(
      {make_node("outer", conditional(conditional_kind::while_loop, "loop_cond", {outer_body}))}, {},
      {declare_condition("loop_cond"), declare_condition("outer_cond")});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckConditionals, UnusedConditionIsRefused) {
  const graph_spec g = graph({make_node("set", kernel({condition("idle")}))}, {},
                             {declare_condition("idle")});
  expect_rejected([&] { check(g); },
                  {"condition 'idle' is declared in the top-level graph", "no conditional node uses it",
                   "(read by node 'set')"},
                  {"set"});
  // Read by no node: nothing to name but the declaration.
  const graph_spec unread = graph({make_node("work", kernel({}))}, {}, {declare_condition("idle")});
  expect_rejected([&] { check(unread); }, {"no conditional node uses it; CUDA refuses"}, {});
}

TEST(CheckConditionals, ConditionTestedByTwoNodesIsRefused) {
  const graph_spec g =
      graph({make_node("first", conditional(conditional_kind::if_then, "go", {one_kernel_body()})),
             make_node("second", conditional(conditional_kind::while_loop, "go", {one_kernel_body()}),
                       {"first"})},
            {}, {declare_condition("go")});
  expect_rejected([&] { check(g); },
                  {"condition 'go' is tested by two conditional nodes, 'first' and 'second'"},
                  {"first", "second"});
}

TEST(CheckConditionals, KernelSettingItsLoopConditionIsAccepted) {
  const graph_spec body = graph({make_node("step", kernel({condition("go")}))});
  EXPECT_NO_THROW(check(with_conditional(conditional_kind::while_loop, {body})));
}

}  // namespace
}  // namespace cudag
