// Buffers: alloc/free pairing, visibility, and every user ordered inside the
// window between its alloc and free nodes.
#include <gtest/gtest.h>

#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

node user(std::string name, std::string buffer_name, std::vector<std::string> deps) {
  return make_node(std::move(name), kernel({buffer<float*>(std::move(buffer_name))}),
                   std::move(deps));
}

TEST(CheckBuffers, OrderedAllocUseFreeIsAccepted) {
  // The free reaches k only through `mid`: ordering is by path, not direct edge.
  const graph_spec g = graph({make_node("alloc", alloc("tmp")), user("k", "tmp", {"alloc"}),
                              empty("mid", {"k"}), make_node("free", free_of("tmp"), {"mid"})});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckBuffers, NeverFreedBufferIsAccepted) {
  const graph_spec g = graph({make_node("alloc", alloc("tmp")), user("k", "tmp", {"alloc"})});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckBuffers, UnknownBufferIsRefused) {
  const graph_spec g = graph({user("k", "tmp", {})});
  expect_rejected([&] { check(g); }, {"node 'k' uses buffer 'tmp'", "no mem_alloc node"}, {"k"});
}

TEST(CheckBuffers, BufferAllocatedTwiceIsRefused) {
  const graph_spec g =
      graph({make_node("a1", alloc("tmp")), make_node("a2", alloc("tmp"), {"a1"})});
  expect_rejected([&] { check(g); }, {"buffer 'tmp' is allocated twice, by 'a1' and by 'a2'"},
                  {"a1", "a2"});
}

TEST(CheckBuffers, BufferFreedTwiceIsRefused) {
  const graph_spec g = graph({make_node("a", alloc("tmp")), make_node("f1", free_of("tmp"), {"a"}),
                              make_node("f2", free_of("tmp"), {"f1"})});
  expect_rejected([&] { check(g); }, {"buffer 'tmp' is freed twice, by 'f1' and by 'f2'"},
                  {"f1", "f2"});
}

TEST(CheckBuffers, FreeWithoutAllocIsRefused) {
  const graph_spec g = graph({make_node("f", free_of("tmp"))});
  expect_rejected([&] { check(g); }, {"node 'f' frees buffer 'tmp'", "no mem_alloc node"}, {"f"});
}

TEST(CheckBuffers, UserNotOrderedAfterAllocIsRefused) {
  const graph_spec g = graph({make_node("alloc", alloc("tmp")), user("k", "tmp", {}),
                              make_node("free", free_of("tmp"), {"alloc", "k"})});
  expect_rejected([&] { check(g); },
                  {"node 'k' uses buffer 'tmp' but is not ordered after 'alloc'"}, {"k", "alloc"});
}

TEST(CheckBuffers, FreeNotOrderedAfterAllocIsRefused) {
  const graph_spec g = graph({make_node("alloc", alloc("tmp")), make_node("free", free_of("tmp"))});
  expect_rejected([&] { check(g); },
                  {"node 'free' frees buffer 'tmp' but is not ordered after 'alloc'"},
                  {"free", "alloc"});
}

TEST(CheckBuffers, UserNotOrderedBeforeFreeIsRefused) {
  // `late` runs after the alloc but nothing orders it before the free.
  const graph_spec g = graph({make_node("alloc", alloc("tmp")), user("early", "tmp", {"alloc"}),
                              user("late", "tmp", {"alloc"}),
                              make_node("free", free_of("tmp"), {"early"})});
  expect_rejected([&] { check(g); },
                  {"node 'late' uses buffer 'tmp' but is not ordered before 'free'"},
                  {"late", "free"});
}

TEST(CheckBuffers, UserAfterFreeIsRefused) {
  const graph_spec g = graph({make_node("alloc", alloc("tmp")),
                              make_node("free", free_of("tmp"), {"alloc"}),
                              user("k", "tmp", {"free"})});
  expect_rejected([&] { check(g); }, {"'k' uses buffer 'tmp' but is not ordered before 'free'"},
                  {"k", "free"});
}

TEST(CheckBuffers, NestedUserIsOrderedByItsEnclosingNode) {
  auto inner = std::make_shared<graph_spec>(graph({user("k", "tmp", {})}));
  const graph_spec ok = graph({make_node("alloc", alloc("tmp")),
                               make_node("sub", child_node{inner}, {"alloc"}),
                               make_node("free", free_of("tmp"), {"sub"})});
  EXPECT_NO_THROW(check(ok));

  const graph_spec late = graph({make_node("alloc", alloc("tmp")),
                                 make_node("free", free_of("tmp"), {"alloc"}),
                                 make_node("sub", child_node{inner}, {"alloc"})});
  expect_rejected([&] { check(late); },
                  {"node 'sub/k' uses buffer 'tmp' but is not ordered before 'free'",
                   "through its enclosing node 'sub'"},
                  {"sub/k", "free"});
}

TEST(CheckBuffers, UserInConditionalBodyIsOrderedByTheConditional) {
  const graph_spec body = graph({user("k", "tmp", {})});
  const graph_spec g = graph(
      {make_node("alloc", alloc("tmp")),
       make_node("loop", conditional(conditional_kind::while_loop, "go", {body})),
       make_node("free", free_of("tmp"), {"alloc", "loop"})},
      {}, {declare_condition("go")});
  expect_rejected([&] { check(g); },
                  {"node 'loop/k' uses buffer 'tmp' but is not ordered after 'alloc'",
                   "through its enclosing node 'loop'"},
                  {"loop/k", "alloc"});
}

TEST(CheckBuffers, BufferOfChildGraphIsNotVisibleOutside) {
  auto inner = std::make_shared<graph_spec>(graph({make_node("a", alloc("tmp"))}));
  const graph_spec g = graph({make_node("sub", child_node{inner}), user("k", "tmp", {"sub"})});
  expect_rejected([&] { check(g); },
                  {"node 'k' uses buffer 'tmp'", "allocated by 'sub/a'", "out of its reach"},
                  {"k", "sub/a"});
}

TEST(CheckBuffers, FreeInChildOrdersUsersOfBothGraphs) {
  // The child frees the buffer after its own user; the parent's user must
  // come before the child node.
  auto inner = std::make_shared<graph_spec>(
      graph({user("k", "tmp", {}), make_node("f", free_of("tmp"), {"k"})}));
  const graph_spec ok = graph({make_node("alloc", alloc("tmp")), user("u", "tmp", {"alloc"}),
                               make_node("sub", child_node{inner}, {"u"})});
  EXPECT_NO_THROW(check(ok));

  const graph_spec parallel = graph({make_node("alloc", alloc("tmp")), user("u", "tmp", {"alloc"}),
                                     make_node("sub", child_node{inner}, {"alloc"})});
  expect_rejected([&] { check(parallel); },
                  {"node 'u' uses buffer 'tmp' but is not ordered before 'sub/f'"}, {"u", "sub/f"});

  auto unordered_inner = std::make_shared<graph_spec>(
      graph({user("k", "tmp", {}), make_node("f", free_of("tmp"))}));
  const graph_spec inside = graph({make_node("alloc", alloc("tmp")),
                                   make_node("sub", child_node{unordered_inner}, {"alloc"})});
  expect_rejected([&] { check(inside); },
                  {"node 'sub/k' uses buffer 'tmp' but is not ordered before 'sub/f'"},
                  {"sub/k", "sub/f"});
}

}  // namespace
}  // namespace cudag
