// Bad-input catalogue, memory: graph-owned buffers, external buffers, memsets.
#include <string>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"

namespace {

using catalogue::dev_x;
using catalogue::dev_x2;
using catalogue::refusal;
using catalogue::scale;
using catalogue::strings;

cudag::node_ref use(cudag::builder& b, const std::string& name, const cudag::buffer_handle<float>& buffer) {
  return b.kernel(name, CUDAG_KERNEL(scale), cudag::launch(1, 32), buffer, 1.0f, 256);
}

TEST(Catalogue, UseAfterFreeNamesTheUserAndTheFree) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto early = use(b, "early", tmp.buffer);
  auto release = b.free("free_tmp", tmp.buffer);
  auto late = use(b, "late", tmp.buffer);
  b.chain(tmp.node, early, release, late);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'late' uses buffer 'tmp' but is not ordered before 'free_tmp', the node that "
            "frees it");
  EXPECT_EQ(c->nodes(), (strings{"late", "free_tmp"}));
}

TEST(Catalogue, UseBeforeAllocNamesTheUserAndTheAlloc) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  use(b, "use_tmp", tmp.buffer);  // no edge from the alloc node
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'use_tmp' uses buffer 'tmp' but is not ordered after 'tmp', the node that "
            "allocates it");
  EXPECT_EQ(c->nodes(), (strings{"use_tmp", "tmp"}));
}

TEST(Catalogue, DoubleFreeNamesBothFrees) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto free_a = b.free("free_a", tmp.buffer);
  auto free_b = b.free("free_b", tmp.buffer);
  b.chain(tmp.node, free_a, free_b);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "buffer 'tmp' is freed twice, by 'free_a' and by 'free_b'");
  EXPECT_EQ(c->nodes(), (strings{"free_a", "free_b"}));
}

TEST(Catalogue, FreeOfAnUnknownBufferIsNamed) {
  cudag::builder other("other");
  auto tmp = other.alloc<float>("tmp", 256);  // a buffer of another graph
  cudag::builder b("g");
  b.free("release", tmp.buffer);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'release' frees buffer 'tmp', which no mem_alloc node of its graph or an "
            "enclosing one allocates");
  EXPECT_EQ(c->nodes(), (strings{"release"}));
}

TEST(Catalogue, UseOfAnUnknownBufferIsNamed) {
  cudag::builder other("other");
  auto tmp = other.alloc<float>("tmp", 256);
  cudag::builder b("g");
  use(b, "use", tmp.buffer);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'use' uses buffer 'tmp', which no mem_alloc node of its graph or an enclosing "
            "one produces");
  EXPECT_EQ(c->nodes(), (strings{"use"}));
}

TEST(Catalogue, BufferOutOfReachNamesWhereItIsAllocated) {
  cudag::builder inner("inner");
  auto tmp = inner.alloc<float>("tmp", 256);
  cudag::builder b("g");
  auto stage = b.child("stage", inner.build());
  auto reader = use(b, "use", tmp.buffer);  // allocated inside the child: out of reach here
  b.edge(stage, reader);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'use' uses buffer 'tmp', which no mem_alloc node of its graph or an enclosing "
            "one produces (it is allocated by 'stage/tmp' in the child graph of 'stage', out of "
            "its reach)");
  EXPECT_EQ(c->nodes(), (strings{"use", "stage/tmp"}));
}

TEST(Catalogue, BufferAllocatedTwiceNamesBothAllocs) {
  cudag::builder inner("inner");
  inner.alloc<float>("tmp", 64);
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto stage = b.child("stage", inner.build());
  b.edge(tmp.node, stage);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "buffer 'tmp' is allocated twice, by 'tmp' and by 'stage/tmp'");
  EXPECT_EQ(c->nodes(), (strings{"tmp", "stage/tmp"}));
}

TEST(Catalogue, ZeroByteAllocationIsNamed) {
  cudag::builder b("g");
  b.alloc<float>("tmp", 0);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "mem_alloc node 'tmp' allocates 0 bytes");
  EXPECT_EQ(c->nodes(), (strings{"tmp"}));
}

TEST(Catalogue, AllocatingAnExternalBufferIsNamed) {
  cudag::builder b("g");
  b.external_buffer<float>("tmp");
  b.alloc<float>("tmp", 64);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'tmp' allocates buffer 'tmp', which graph 'g' declares external (allocated "
            "outside the graph)");
  EXPECT_EQ(c->nodes(), (strings{"tmp"}));
}

TEST(Catalogue, MemsetOfZeroWidthIsNamed) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  b.memset("clear", x, 0u, 0);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()), "memset node 'clear' has zero width; it would set nothing");
  EXPECT_EQ(c->nodes(), (strings{"clear"}));
}

TEST(Catalogue, RebindOfAFreedExternalBufferIsRefused) {
  cudag::native::recorder rec;
  {
    cudag::builder b("g");
    auto io = b.external_buffer<float>("io");
    auto reader = use(b, "use", io);
    auto release = b.free("release", io);
    b.edge(reader, release);
    const cudag::binding binds[] = {cudag::bind("io", dev_x)};
    auto exec = cudag::instantiate(b.build(), binds);
    auto e = refusal<cudag::error>([&] { exec.rebind("io", dev_x2); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "rebind: external buffer 'io' is freed by node 'release', whose address CUDA cannot "
              "change; instantiate the graph again");
    EXPECT_EQ(e->node(), "release");
    EXPECT_EQ(e->code(), cudaErrorNotSupported);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, UnknownBufferAddressNamesTheGraph) {
  cudag::native::recorder rec;
  {
    cudag::builder b("g");
    auto tmp = b.alloc<float>("tmp", 64);
    auto release = b.free("free_tmp", tmp.buffer);
    b.edge(tmp.node, release);
    auto exec = cudag::instantiate(b.build(), {});
    auto e = refusal<cudag::error>([&] { (void)exec.buffer_address("stage"); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "graph 'g' has no graph-owned buffer 'stage' (no mem_alloc node produces it)");
    EXPECT_EQ(e->code(), cudaErrorInvalidValue);
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, AllocationSizeOverflowIsNamed) {
  cudag::builder b("g");
  auto e = refusal<cudag::error>(
      [&] { (void)b.alloc<double>("tmp", (std::size_t(1) << 61) + 1); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g': mem_alloc node 'tmp': 2305843009213693953 elements of 8 bytes overflow "
            "std::size_t");
  EXPECT_EQ(e->node(), "tmp");
  EXPECT_TRUE(b.spec().nodes.empty());
}

TEST(Catalogue, BufferOffsetOverflowIsNamed) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto e = refusal<cudag::error>([&] { (void)(tmp.buffer + (std::size_t(1) << 62)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "buffer 'tmp': an offset of 4611686018427387904 elements of 4 bytes overflows "
            "std::size_t");
}

TEST(Catalogue, ReadBackViewPastItsBufferIsNamed) {
  cudag::native::recorder rec;
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto e = cudag::instantiate(b.build(), {});
  auto refused = refusal<cudag::error>([&] { (void)e.buffer(tmp.buffer + 300); });
  ASSERT_TRUE(refused);
  EXPECT_EQ(std::string(refused->what()),
            "buffer 'tmp': a view at element 300 of 4 bytes is past the end of its 1024-byte "
            "allocation (256 elements)");
}

TEST(Catalogue, OperandPastTheEndOfItsBufferIsNamed) {
  cudag::native::recorder rec;
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 256);
  auto src = b.param<float*>("x");
  auto copy = b.memcpy("copy", tmp.buffer + 128, src, 1024);
  b.edge(tmp.node, copy);
  const cudag::binding binds[] = {cudag::bind("x", dev_x)};
  auto c = refusal<cudag::check_error>([&] { (void)cudag::instantiate(b.build(), binds); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "memcpy node 'copy' writes bytes [512, 1536) of buffer 'tmp', past the end of its "
            "1024 bytes (allocated by 'tmp')");
  EXPECT_EQ(c->nodes(), (strings{"copy", "tmp"}));
  EXPECT_TRUE(rec.calls().empty()) << "refused before any CUDA call";
}

}  // namespace
