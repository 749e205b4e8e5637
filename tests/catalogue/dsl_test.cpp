// Bad-input catalogue, the DSL's run-time refusals: its graphs run on the
// same engine as the builder's, so CUDA's refusals and host-node failures
// read the same. (The DSL's compile-time refusals are the compile-fail cases
// of tests/compile_fail, each with its run-time twin in
// tests/dsl/rule_twins_test.cpp.)
#include <stdexcept>
#include <string>

#include "catalogue.hpp"
#include "cudag/dsl.hpp"

namespace {

using catalogue::dev_x;
using catalogue::dev_x2;
using catalogue::refusal;
using namespace cudag::dsl;

void reduce(const float* in, float* out, std::size_t count) { (void)in, (void)out, (void)count; }

constexpr auto px = param<"x", float*>;
constexpr auto py = param<"y", float*>;

// clang-format off
constexpr auto pipeline = graph(
    kernel<"first", catalogue::scale>(1, 32, px, 1.0f, 32),
    kernel<"second", catalogue::scale>(1, 32, px, 2.0f, 32),
    host<"report">([] { throw std::runtime_error("disk full"); }),
    edges<"first -> second -> report">);
// clang-format on

TEST(Catalogue, DslHostNodeExceptionNamesTheNode) {
  cudag::native::recorder rec;
  {
    auto exec = instantiate(pipeline, px = dev_x);
    exec.launch(nullptr);  // the recorder runs the host node here
    auto e = refusal<cudag::error>([&] { exec.synchronize(nullptr); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()), "host node 'report' threw: disk full");
    EXPECT_EQ(e->node(), "report");
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DslRefusedUpdateNamesTheNodeAndWhy) {
  cudag::native::recorder rec;
  {
    auto exec = instantiate(pipeline, px = dev_x);
    exec.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
    rec.refuse_next_update(exec.node_handle<"second">(), cudaGraphExecUpdateErrorParametersChanged);
    auto e = refusal<cudag::error>([&] { exec.rebind(px = dev_x2); });
    ASSERT_TRUE(e);
    EXPECT_EQ(std::string(e->what()),
              "cudaGraphExecUpdate refused the update at node 'second': its parameters changed in "
              "a way CUDA cannot update (cudaErrorGraphExecUpdateFailure)");
    EXPECT_EQ(e->node(), "second");
  }
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DslLoweringFailureNamesTheNodeAndTheCall) {
  // A top-level node: the DSL names a node nested in a child graph or body
  // by its own name, not by its path (a known gap, see the catalogue).
  cudag::native::recorder rec;
  rec.fail_next("add_kernel_node", cudaErrorInvalidValue);
  auto e = refusal<cudag::error>([&] { (void)instantiate(pipeline, px = dev_x); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "cudaGraphAddKernelNode failed for node 'first': cudaErrorInvalidValue (invalid "
            "argument)");
  EXPECT_EQ(e->node(), "first");
  EXPECT_EQ(e->call(), "cudaGraphAddKernelNode");
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DslInstantiateFailureNamesTheCall) {
  cudag::native::recorder rec;
  rec.fail_next("instantiate", cudaErrorInvalidValue);
  auto e = refusal<cudag::error>([&] { (void)instantiate(pipeline, px = dev_x); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "cudaGraphInstantiateWithParams failed: cudaErrorInvalidValue (invalid argument)");
  EXPECT_EQ(e->call(), "cudaGraphInstantiateWithParams");
  catalogue::expect_no_leak(rec);
}

TEST(Catalogue, DslIntegralLiteralOutOfRangeAtRunTimeIsNamed) {
  // In a constexpr graph this is a compile error
  // (tests/compile_fail/integral_argument_out_of_range.cpp); a graph built
  // at run time throws where it is declared.
  const long count = -1;
  auto e = refusal<cudag::error>([&] {
    const auto g = graph(kernel<"reduce", reduce>(1, 256, px, py, count));
    (void)g;
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "kernel node 'reduce': argument 2 (-1) does not fit the kernel's parameter type");
  EXPECT_EQ(e->node(), "reduce");
}

}  // namespace
