// Bad-input catalogue, parameters: declarations, bindings, rebinding, literals.
#include <string>
#include <vector>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"

namespace {

using catalogue::dev_x;
using catalogue::refusal;
using catalogue::scale;
using catalogue::strings;

/// Two kernels reading x and n.
cudag::graph_spec two_readers() {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  auto first = b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, n);
  auto second = b.kernel("again", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 3.0f, n);
  b.edge(first, second);
  return b.build();
}

/// instantiate(spec, binds) must be refused by check() before any CUDA call.
cudag::check_error refused_binding(const cudag::graph_spec& spec,
                                   const std::vector<cudag::binding>& binds) {
  cudag::native::recorder rec;
  auto c = refusal<cudag::check_error>([&] { (void)cudag::instantiate(spec, binds); });
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  catalogue::expect_no_leak(rec);
  return c ? *c : cudag::check_error("(not refused)", {});
}

TEST(Catalogue, UnboundParameterNamesItsReaders) {
  const auto c = refused_binding(two_readers(), {cudag::bind("x", dev_x)});
  EXPECT_EQ(std::string(c.what()),
            "parameter 'n' (int, declared in graph 'g') is not bound (used by 'scale' and 1 more)");
  EXPECT_EQ(c.nodes(), (strings{"scale", "again"}));
}

TEST(Catalogue, BindingOfTheWrongTypeNamesItsReaders) {
  double* wrong = nullptr;
  const auto c = refused_binding(two_readers(), {cudag::bind("x", wrong), cudag::bind("n", 4)});
  EXPECT_EQ(std::string(c.what()),
            "parameter 'x' is declared as float* in graph 'g' but bound to a value of type "
            "double* (used by 'scale' and 1 more)");
  EXPECT_EQ(c.nodes(), (strings{"scale", "again"}));
}

TEST(Catalogue, BindingOfAnUndeclaredParameterIsNamed) {
  const auto c = refused_binding(
      two_readers(), {cudag::bind("x", dev_x), cudag::bind("n", 4), cudag::bind("z", 1)});
  EXPECT_EQ(std::string(c.what()), "a binding names parameter 'z', which no graph of the spec declares");
  EXPECT_EQ(c.nodes(), strings{});
}

TEST(Catalogue, ParameterBoundTwiceIsNamed) {
  const auto c = refused_binding(
      two_readers(), {cudag::bind("x", dev_x), cudag::bind("n", 4), cudag::bind("n", 8)});
  EXPECT_EQ(std::string(c.what()), "parameter 'n' is bound twice");
  EXPECT_EQ(c.nodes(), (strings{"scale", "again"}));
}

TEST(Catalogue, ParameterDeclaredTwiceIsNamed) {
  cudag::builder b("g");
  (void)b.param<int>("n");
  auto e = refusal<cudag::error>([&] { (void)b.param<int>("n"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "graph 'g': parameter 'n' declared twice");
}

TEST(Catalogue, ParameterWithTwoTypesNamesBothGraphs) {
  cudag::builder inner("inner");
  auto inner_data = inner.param<int*>("data");
  inner.memset("clear_b", inner_data, 0, 16);
  cudag::builder b("g");
  auto data = b.param<float*>("data");
  b.memset("clear_a", data, 0, 16);
  b.child("stage", inner.build());
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "parameter 'data' is declared as float* in graph 'g' and as int* in the child graph "
            "of 'stage'; parameters are bound by name, so one value cannot fit both");
  EXPECT_EQ(c->nodes(), strings{});
}

TEST(Catalogue, ParameterOfTheWrongTypeForItsReaderIsNamed) {
  // The builder refuses this at compile time; a spec written by other code
  // reaches check().
  cudag::graph_spec spec = two_readers();
  spec.params[1].type = cudag::type_of<long>();  // n, read where an int is expected
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'scale' passes parameter 'n', declared as long, where int is expected (operand "
            "2 of node 'scale')");
  EXPECT_EQ(c->nodes(), (strings{"scale"}));
}

TEST(Catalogue, ParameterOfAnotherGraphIsNamed) {
  cudag::builder other("other");
  auto m = other.param<int>("m");
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch(1, 32), x, 2.0f, m);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "node 'scale' uses parameter 'm', which is not declared in its graph or an enclosing "
            "one");
  EXPECT_EQ(c->nodes(), (strings{"scale"}));
}

TEST(Catalogue, GridFromAnUndeclaredParameterIsNamed) {
  cudag::builder other("other");
  auto m = other.param<int>("m");
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch_over(m, 256), x, 2.0f, n);
  auto c = refusal<cudag::check_error>([&] { cudag::check(b.spec()); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "kernel node 'scale' computes its grid from parameter 'm', which is not declared in "
            "its graph or an enclosing one");
  EXPECT_EQ(c->nodes(), (strings{"scale"}));
}

TEST(Catalogue, LiteralOfTheWrongSizeIsNamed) {
  // The builder refuses a double for a float at compile time; a spec written
  // by other code reaches check().
  cudag::graph_spec spec = two_readers();
  const double wide = 2.0;
  std::get<cudag::kernel_node>(spec.nodes[0].params).args[1] =
      cudag::value{cudag::type_of<float>(), cudag::literal{cudag::literal_bytes(&wide, sizeof wide)}};
  auto c = refusal<cudag::check_error>([&] { cudag::check(spec); });
  ASSERT_TRUE(c);
  EXPECT_EQ(std::string(c->what()),
            "operand 1 of node 'scale' is a literal of 8 bytes where float (4 bytes) is expected");
  EXPECT_EQ(c->nodes(), (strings{"scale"}));
}

TEST(Catalogue, RebindOfAnUnknownParameterNamesTheGraph) {
  cudag::native::recorder rec;
  {
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 4)};
    auto exec = cudag::instantiate(two_readers(), binds);
    auto e = refusal<cudag::error>([&] { exec.rebind("count", 4); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "rebind: graph 'g' has no parameter 'count'");
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, RebindWithTheWrongTypeNamesBothTypes) {
  cudag::native::recorder rec;
  {
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 4)};
    auto exec = cudag::instantiate(two_readers(), binds);
    rec.clear();
    auto e = refusal<cudag::error>([&] { exec.rebind("n", 2.5); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "rebind: parameter 'n' is declared int, given double");
    EXPECT_TRUE(rec.calls().empty()) << rec.transcript();  // nothing reached CUDA
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, InstanceWithAnUnknownOrMistypedValueSaysInstance) {
  cudag::native::recorder rec;
  {
    const cudag::binding binds[] = {cudag::bind("x", dev_x), cudag::bind("n", 4)};
    auto exec = cudag::instantiate(two_readers(), binds);
    const cudag::binding mistyped[] = {cudag::bind("n", 2.5)};
    auto e = refusal<cudag::error>([&] { (void)exec.instance(mistyped); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "instance: parameter 'n' is declared int, given double");
    const cudag::binding unknown[] = {cudag::bind("count", 4)};
    auto u = refusal<cudag::error>([&] { (void)exec.instance(unknown); });
    ASSERT_TRUE(u);
    EXPECT_EQ(std::string(u->what()), "instance: graph 'g' has no parameter 'count'");
  }
  catalogue::expect_no_leak(rec);
}

}  // namespace
