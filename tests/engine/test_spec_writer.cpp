// spec_writer: what generated front ends call to write a spec node by node.
// Each call must produce the node the run-time builder would.
#include "cudag/spec_writer.hpp"  // first: it compiles alone

#include <gtest/gtest.h>

#include "cudag/builder.hpp"

namespace {

void scale(float*, float, int) {}

using source = cudag::value_view::source_kind;

}  // namespace

TEST(SpecWriter, KernelWithLiteralParameterAndBufferArgumentsEqualsTheBuilders) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  auto alloc = b.alloc<float>("tmp", 64);
  auto scaled =
      b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch_over(n, 128), alloc.buffer + 4, 2.5f, n)
          .after(alloc.node);
  auto again = b.kernel("again", CUDAG_KERNEL(scale), cudag::launch(dim3(3), dim3(32)), x, 0.5f, n)
                   .after(scaled);
  b.free("free", alloc.buffer).after(again);

  cudag::graph_spec written;
  cudag::spec_writer w(written);
  w.set_name("g");
  w.mem_alloc("tmp", "tmp", 64 * sizeof(float), -1);
  const float half = 0.5f;
  const cudag::value_view scale_args[] = {
      cudag::value_view::named(cudag::type_of<float*>(), source::buffer, "tmp", 4 * sizeof(float)),
      cudag::value_view::literal_copy(2.5f),
      cudag::value_view::named(cudag::type_of<int>(), source::param, "n")};
  cudag::kernel_view k;
  k.function = reinterpret_cast<const void*>(&scale);
  k.function_name = "scale";
  k.grid_param = "n";
  k.items_per_block = 128;
  k.block = dim3(128);
  k.args = scale_args;
  w.kernel("scale", k);
  const cudag::value_view again_args[] = {
      cudag::value_view::named(cudag::type_of<float*>(), source::param, "x"),
      cudag::value_view::literal_at(cudag::type_of<float>(), &half),
      cudag::value_view::named(cudag::type_of<int>(), source::param, "n")};
  k.grid_param = {};
  k.grid = dim3(3);
  k.block = dim3(32);
  k.args = again_args;
  w.kernel("again", k);
  w.mem_free("free", "tmp");
  w.depend(1, "tmp");
  w.depend(2, "scale");
  w.depend(3, "again");
  w.param("x", cudag::type_of<float*>());
  w.param("n", cudag::type_of<int>());

  const cudag::graph_spec& built = b.spec();
  ASSERT_EQ(written.nodes.size(), built.nodes.size());
  for (std::size_t i = 0; i < built.nodes.size(); ++i) {
    SCOPED_TRACE(built.nodes[i].name);
    EXPECT_EQ(written.nodes[i].name, built.nodes[i].name);
    EXPECT_EQ(written.nodes[i].deps, built.nodes[i].deps);
    EXPECT_EQ(written.nodes[i].kind(), built.nodes[i].kind());
  }
  const auto& wk = std::get<cudag::kernel_node>(written.nodes[1].params);
  const auto& bk = std::get<cudag::kernel_node>(built.nodes[1].params);
  EXPECT_EQ(wk.args, bk.args);
  EXPECT_EQ(wk.grid_from, bk.grid_from);
  EXPECT_EQ(std::get<cudag::kernel_node>(written.nodes[2].params).args,
            std::get<cudag::kernel_node>(built.nodes[2].params).args);
  EXPECT_EQ(std::get<cudag::kernel_node>(written.nodes[2].params).grid.x, 3u);
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(written.nodes[0].params).bytes, 64 * sizeof(float));
  ASSERT_EQ(written.params.size(), 2u);
  EXPECT_EQ(written.params[1].name, "n");
}

TEST(SpecWriter, NestedGraphsAreWrittenInPlace) {
  cudag::graph_spec written;
  cudag::spec_writer w(written);
  w.empty("start");
  {
    cudag::spec_writer inner = w.child("stage");
    inner.empty("inside");
  }
  w.conditional("branch", cudag::conditional_kind::if_else, "flag", 2);
  w.body(0).empty("then");
  w.body(1).empty("otherwise");
  w.condition("flag", 1, true);
  w.condition("flag", 1, true);  // declared once
  w.depend(2, "stage");

  ASSERT_EQ(written.nodes.size(), 3u);
  const auto& child = std::get<cudag::child_node>(written.nodes[1].params);
  ASSERT_TRUE(child.graph);
  EXPECT_EQ(child.graph->nodes.at(0).name, "inside");
  const auto& c = std::get<cudag::conditional_node>(written.nodes[2].params);
  EXPECT_EQ(c.condition, "flag");
  ASSERT_EQ(c.bodies.size(), 2u);
  EXPECT_EQ(c.bodies[1].nodes.at(0).name, "otherwise");
  EXPECT_EQ(written.conditions.size(), 1u);
  EXPECT_EQ(written.nodes[2].deps, std::vector<std::string>{"stage"});
}

TEST(SpecWriter, BodyOfANodeThatIsNotConditionalIsRefused) {
  cudag::graph_spec written;
  cudag::spec_writer w(written);
  w.empty("start");
  EXPECT_THROW((void)w.body(0), std::bad_variant_access);
}
