// Buffers the graph did not allocate (external buffers): read as buffers,
// freed by a mem_free node, bound and rebound like parameters. The lifetime
// rules that still apply are checked; a freed one cannot be rebound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"
#include "refusal_support.hpp"

namespace {

using engine_test::lines;
using engine_test::dev_x;
using engine_test::dev_y;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

TEST(ExternalBuffers, ReadAtAnOffsetFreedByTheGraphAndNotRebindableOnceFreed) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  cudag::builder b("staged");
  auto staging = b.external_buffer<float>("staging");
  auto head = b.kernel("head", &scale, cudag::launch(1, 16), staging, 2.0f, 16);
  auto tail = b.kernel("tail", &scale, cudag::launch(1, 16), staging + 16, 3.0f, 16);
  auto release = b.free("release", staging);
  b.chain(head, tail, release);
  const cudag::binding binds[] = {cudag::bind("staging", dev_x)};
  auto e = cudag::instantiate(b.build(), binds);
  EXPECT_EQ(lines(rec.calls_starting("add_")),
            "add_kernel_node n1 g1 deps=[] scale grid=(1,1,1) block=(16,1,1) shared=0 args=[x, "
            "0x40000000, 0x10]\n"
            "add_kernel_node n2 g1 deps=[n1] scale grid=(1,1,1) block=(16,1,1) shared=0 "
            "args=[0x7f5a07000040, 0x40400000, 0x10]\n"
            "add_mem_free_node n3 g1 deps=[n2] pointer=x\n");
  EXPECT_EQ(e.readers_of("staging"), (std::vector<std::string>{"head", "tail", "release"}));
  rec.clear();
  try {
    (void)e.rebind("staging", dev_y);
    FAIL() << "a freed external buffer was rebound";
  } catch (const cudag::error& err) {
    EXPECT_STREQ(err.what(),
                 "rebind: external buffer 'staging' is freed by node 'release', whose address "
                 "CUDA cannot change; instantiate the graph again");
    EXPECT_EQ(err.node(), "release");
  }
  EXPECT_TRUE(rec.calls().empty()) << lines(rec.calls());
  EXPECT_EQ(e.rebind("staging", dev_x), cudag::rebind_path::none) << "the old value stayed";
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(ExternalBuffers, WithoutAFreeTheAddressIsRebindableOffsetsIncluded) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
  cudag::builder b("borrowed");
  auto data = b.external_buffer<float>("data");
  auto head = b.kernel("head", &scale, cudag::launch(1, 16), data, 2.0f, 16);
  auto tail = b.kernel("tail", &scale, cudag::launch(1, 16), data + 4, 3.0f, 16);
  b.edge(head, tail);
  const cudag::binding binds[] = {cudag::bind("data", dev_x)};
  auto e = cudag::instantiate(b.build(), binds);
  rec.clear();
  EXPECT_EQ(e.rebind("data", dev_y), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 scale grid=(1,1,1) block=(16,1,1) shared=0 "
            "args=[y, 0x40000000, 0x10]\n"
            "exec_kernel_node_set_params x1 n2 scale grid=(1,1,1) block=(16,1,1) shared=0 "
            "args=[0x7f5a07100010, 0x40400000, 0x10]\n");
}

using engine_test::expect_refused;

TEST(ExternalBuffers, TheLifetimeRulesThatStillApplyAreChecked) {
  {  // used after (not before) its free
    cudag::builder b("late");
    auto ext = b.external_buffer<float>("ext");
    auto release = b.free("release", ext);
    auto reader = b.kernel("reader", &scale, cudag::launch(1, 16), ext, 2.0f, 16);
    b.edge(release, reader);
    expect_refused(b.build(),
                   "node 'reader' uses buffer 'ext' but is not ordered before 'release', the "
                   "node that frees it",
                   {"reader", "release"});
  }
  {  // freed twice
    cudag::builder b("twice");
    auto ext = b.external_buffer<float>("ext");
    b.free("first", ext);
    b.free("second", ext);
    expect_refused(b.build(), "buffer 'ext' is freed twice, by 'first' and by 'second'",
                   {"first", "second"});
  }
  {  // allocated by the graph although declared external
    cudag::builder b("both");
    b.external_buffer<float>("ext");
    b.alloc<float>("ext", 16);
    expect_refused(b.build(),
                   "node 'ext' allocates buffer 'ext', which graph 'both' declares "
                   "external (allocated outside the graph)",
                   {"ext"});
  }
  {  // a nested graph reads and frees the enclosing graph's external buffer
    cudag::builder b("outer");
    auto ext = b.external_buffer<float>("ext");
    cudag::builder inner("inner");
    auto use = inner.kernel("use", &scale, cudag::launch(1, 16), ext, 2.0f, 16);
    auto drop = inner.free("drop", ext);
    inner.edge(use, drop);
    b.child("stage", inner.build());
    EXPECT_NO_THROW(cudag::check(b.build()));
  }
}

}  // namespace
