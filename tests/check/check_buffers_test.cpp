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

// Bounds: each operand that views an allocated buffer stays inside it. The
// edge cases are the last byte a copy or set may touch and the address one
// past the end, both accepted; one byte further is refused, naming the user
// and the allocation.
memcpy_node copy_of(value dst, value src, std::size_t bytes) {
  return memcpy_node{std::move(dst), std::move(src), bytes, cudaMemcpyDefault};
}

TEST(CheckBuffers, OperandsInsideTheirAllocationAreAccepted) {
  const graph_spec g = graph(
      {make_node("alloc", alloc("tmp", 1024)),
       make_node("copy", copy_of(buffer<void*>("tmp", 512), buffer<const void*>("tmp", 0), 512),
                 {"alloc"}),
       make_node("clear", memset_of(buffer<void*>("tmp", 4), 255), {"copy"}),
       user("k", "tmp", {"clear"}),
       make_node("end", kernel({buffer<float*>("tmp", 1024)}), {"k"})});
  EXPECT_NO_THROW(check(g));
}

TEST(CheckBuffers, CopyPastTheEndOfItsBufferIsRefused) {
  const graph_spec writes = graph(
      {make_node("alloc", alloc("tmp", 1024)),
       make_node("copy", copy_of(buffer<void*>("tmp", 512), param<const void*>("src"), 513),
                 {"alloc"})},
      {declare<const void*>("src")});
  expect_rejected([&] { check(writes); },
                  {"memcpy node 'copy' writes bytes [512, 1025) of buffer 'tmp', past the end of "
                   "its 1024 bytes (allocated by 'alloc')"},
                  {"copy", "alloc"});
  const graph_spec reads = graph(
      {make_node("alloc", alloc("tmp", 1024)),
       make_node("copy", copy_of(param<void*>("dst"), buffer<const void*>("tmp", 1000), 100),
                 {"alloc"})},
      {declare<void*>("dst")});
  expect_rejected([&] { check(reads); },
                  {"memcpy node 'copy' reads bytes [1000, 1100) of buffer 'tmp'"},
                  {"copy", "alloc"});
}

TEST(CheckBuffers, SetPastTheEndOfItsBufferIsRefused) {
  const graph_spec g = graph({make_node("alloc", alloc("tmp", 1024)),
                              make_node("clear", memset_of(buffer<void*>("tmp", 8), 255), {"alloc"})});
  expect_rejected([&] { check(g); },
                  {"memset node 'clear' sets bytes [8, 1028) of buffer 'tmp', past the end of its "
                   "1024 bytes (allocated by 'alloc')"},
                  {"clear", "alloc"});
  // Rows: the last row ends at (height - 1) * pitch + width * element size.
  memset_node rows{buffer<void*>("tmp"), make_literal(0u), 4, 16, 4, 320};
  const graph_spec fits = graph({make_node("alloc", alloc("tmp", 1024)),
                                 make_node("rows", rows, {"alloc"})});
  EXPECT_NO_THROW(check(fits));  // 3 * 320 + 64 = 1024
  rows.pitch_bytes = 321;
  const graph_spec wide = graph({make_node("alloc", alloc("tmp", 1024)),
                                 make_node("rows", rows, {"alloc"})});
  expect_rejected([&] { check(wide); }, {"memset node 'rows' sets bytes [0, 1027)"},
                  {"rows", "alloc"});
  rows.pitch_bytes = std::size_t(1) << 63;  // the extent itself overflows
  const graph_spec huge = graph({make_node("alloc", alloc("tmp", 1024)),
                                 make_node("rows", rows, {"alloc"})});
  expect_rejected([&] { check(huge); },
                  {"memset node 'rows' sets more bytes than std::size_t holds from byte 0 of "
                   "buffer 'tmp'"},
                  {"rows", "alloc"});
}

TEST(CheckBuffers, AddressPastTheEndOfItsBufferIsRefused) {
  // Nested: the body's kernel reads the enclosing graph's buffer.
  auto inner = std::make_shared<graph_spec>(
      graph({make_node("k", kernel({buffer<float*>("tmp", 1028)}))}));
  const graph_spec g = graph({make_node("alloc", alloc("tmp", 1024)),
                              make_node("sub", child_node{inner}, {"alloc"})});
  expect_rejected([&] { check(g); },
                  {"kernel node 'sub/k' is given buffer 'tmp' at byte 1028, past the end of its "
                   "1024 bytes (allocated by 'alloc')"},
                  {"sub/k", "alloc"});
}

TEST(CheckBuffers, ExternalBuffersHaveNoKnownEnd) {
  param_decl external = declare<float*>("ext");
  external.external_buffer = true;
  const graph_spec g =
      graph({make_node("k", kernel({buffer<float*>("ext", std::size_t(1) << 40)}))}, {external});
  EXPECT_NO_THROW(check(g));
}

}  // namespace
}  // namespace cudag
