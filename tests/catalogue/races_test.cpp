// Catalogue entries R1-R6 (docs/bad-input-catalogue.md): races and the
// declarations that narrow them.
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

void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }

TEST(Catalogue, AWriterAndAReaderWithNoPathBetweenThem) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, 64);
  b.kernel("axpy", CUDAG_KERNEL(axpy), cudag::launch(1, 32), x, y, 2.0f, 64);
  auto e = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "race: 'scale' writes 'x' while 'axpy' reads it, and no path orders them (add an edge, or "
            "declare the access: docs/guide/races.md)");
  EXPECT_EQ(e->nodes(), (strings{"scale", "axpy"}));
}

TEST(Catalogue, ARaceThroughAChildGraphsNode) {
  cudag::builder inner("inner");
  inner.kernel("produce", CUDAG_KERNEL(scale), cudag::launch(1, 32), cudag::param_handle<float*>{"x"}, 2.0f,
               64);
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  b.child("stage", std::move(inner).build());
  b.kernel("report", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 1.0f, 64);
  auto e = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "race: 'stage/produce' (through its enclosing node 'stage') writes 'x' while 'report' writes it, "
            "and no path orders them (add an edge, or declare the access: docs/guide/races.md)");
  EXPECT_EQ(e->nodes(), (strings{"stage/produce", "report"}));
}

TEST(Catalogue, OverlappingViewsOfOneBuffer) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 2048);
  b.memset("low", tmp.buffer, 0u, 1025).after(tmp.node);
  b.memset("high", tmp.buffer + 1024, 0u, 1024).after(tmp.node);
  auto e = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "race: 'low' writes bytes [4096, 4100) of buffer 'tmp' while 'high' writes it, and no path "
            "orders them (add an edge, or declare the access: docs/guide/races.md)");
  EXPECT_EQ(e->nodes(), (strings{"low", "high"}));
}

cudag::graph_spec writer_and_reader() {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  b.kernel("write", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, 64);
  b.kernel("read", CUDAG_KERNEL(axpy), cudag::launch(1, 32), y, dev_x2, 2.0f, 64);
  return std::move(b).build();
}

TEST(Catalogue, TwoParametersBoundToOneAddressAtInstantiation) {
  cudag::native::recorder rec;
  {
    const cudag::binding alias[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_x)};
    auto e = refusal<cudag::check_error>([&] { (void)cudag::instantiate(writer_and_reader(), alias); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "race: 'write' writes 'x' and 'y' (bound to the same address, 0x7f5a07000000) while 'read' "
              "reads it, and no path orders them (add an edge, or declare the access: "
              "docs/guide/races.md)");
    EXPECT_EQ(e->nodes(), (strings{"write", "read"}));
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, ARebindThatMakesTwoParametersOneMemory) {
  cudag::native::recorder rec;
  {
    const cudag::binding apart[] = {cudag::bind("x", dev_x), cudag::bind("y", dev_x2)};
    cudag::exec ex = cudag::instantiate(writer_and_reader(), apart);
    rec.clear();
    auto e = refusal<cudag::check_error>([&] { (void)ex.rebind("y", dev_x); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "race: 'write' writes 'x' and 'y' (bound to the same address, 0x7f5a07000000) while 'read' "
              "reads it, and no path orders them (add an edge, or declare the access: "
              "docs/guide/races.md)");
    EXPECT_TRUE(rec.calls().empty());  // nothing sent, nothing changed
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, AnAccessDeclaredThroughAnArgumentThatIsNoPointer) {
  cudag::builder b("g");
  auto k = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), b.param<float*>("x"), 2.0f, 64);
  auto e = refusal<cudag::error>([&] { k.access(1, cudag::access_mode::read); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "graph 'g': kernel node 'scale' declares an access through argument 1, a float, which points "
            "at no memory");
  EXPECT_EQ(e->node(), "scale");
}

}  // namespace
