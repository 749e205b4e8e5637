// spec_writer: what generated front ends call to write a spec node by node.
// Each call must produce the node the declaration describes, checked
// against values written in the test; the run-time builder's spec of the
// same graph is held to the same values.
#include "cudag/spec_writer.hpp"  // first: it compiles alone

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/diff.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

void scale(float*, float, int) {}

using source = cudag::value_view::source_kind;

template <class T>
void expect_literal(const cudag::value& v, T expected, const char* where) {
  EXPECT_EQ(v.type, cudag::type_of<T>()) << where;
  const auto* lit = std::get_if<cudag::literal>(&v.source);
  ASSERT_NE(lit, nullptr) << where << ": not a literal";
  ASSERT_EQ(lit->bytes.size(), sizeof(T)) << where;
  T got{};
  std::memcpy(&got, lit->bytes.data(), sizeof(T));
  EXPECT_EQ(got, expected) << where;
}

void expect_named(const cudag::value& v, const cudag::type_tag& type, const std::string& param,
                  const char* where) {
  EXPECT_EQ(v.type, type) << where;
  const auto* ref = std::get_if<cudag::param_ref>(&v.source);
  ASSERT_NE(ref, nullptr) << where << ": not a parameter";
  EXPECT_EQ(ref->name, param) << where;
}

/// The graph: alloc "tmp" (64 floats) -> scale(tmp + 4, 2.5f, n), grid from n
/// by 128 -> again(x, 0.5f, n), grid 3, block 32 -> free "tmp"; parameters x
/// (float*) and n (int).
void expect_scale_again_spec(const cudag::graph_spec& s) {
  EXPECT_EQ(s.name, "g");
  ASSERT_EQ(s.nodes.size(), 4u);
  const std::vector<std::string> names{"tmp", "scale", "again", "free"};
  const std::vector<std::vector<std::string>> deps{{}, {"tmp"}, {"scale"}, {"again"}};
  const std::vector<cudag::node_kind> kinds{cudag::node_kind::mem_alloc, cudag::node_kind::kernel,
                                            cudag::node_kind::kernel, cudag::node_kind::mem_free};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.nodes[i].name, names[i]);
    EXPECT_EQ(s.nodes[i].deps, deps[i]) << names[i];
    EXPECT_EQ(s.nodes[i].params.index(), static_cast<std::size_t>(kinds[i])) << names[i];
  }
  ASSERT_EQ(s.nodes[0].params.index(), 9u);  // mem_alloc_node
  const auto& alloc = std::get<cudag::mem_alloc_node>(s.nodes[0].params);
  EXPECT_EQ(alloc.buffer, "tmp");
  EXPECT_EQ(alloc.bytes, 256u);
  EXPECT_EQ(alloc.device, -1);

  ASSERT_EQ(s.nodes[1].params.index(), 0u);  // kernel_node
  const auto& scale_node = std::get<cudag::kernel_node>(s.nodes[1].params);
  EXPECT_EQ(scale_node.function, reinterpret_cast<const void*>(&scale));
  ASSERT_EQ(scale_node.args.size(), 3u);
  EXPECT_EQ(scale_node.args[0].type, cudag::type_of<float*>());
  const auto* tmp = std::get_if<cudag::buffer_ref>(&scale_node.args[0].source);
  ASSERT_NE(tmp, nullptr);
  EXPECT_EQ(tmp->name, "tmp");
  EXPECT_EQ(tmp->offset_bytes, 16u);  // 4 floats
  expect_literal(scale_node.args[1], 2.5f, "scale arg 1");
  expect_named(scale_node.args[2], cudag::type_of<int>(), "n", "scale arg 2");
  ASSERT_TRUE(scale_node.grid_from.has_value());
  EXPECT_EQ(scale_node.grid_from->param, "n");
  EXPECT_EQ(scale_node.grid_from->items_per_block, 128u);
  EXPECT_EQ(scale_node.block.x, 128u);
  EXPECT_EQ(scale_node.block.y, 1u);

  ASSERT_EQ(s.nodes[2].params.index(), 0u);
  const auto& again = std::get<cudag::kernel_node>(s.nodes[2].params);
  EXPECT_EQ(again.function, reinterpret_cast<const void*>(&scale));
  ASSERT_EQ(again.args.size(), 3u);
  expect_named(again.args[0], cudag::type_of<float*>(), "x", "again arg 0");
  expect_literal(again.args[1], 0.5f, "again arg 1");
  expect_named(again.args[2], cudag::type_of<int>(), "n", "again arg 2");
  EXPECT_FALSE(again.grid_from.has_value());
  EXPECT_EQ(again.grid.x, 3u);
  EXPECT_EQ(again.grid.y, 1u);
  EXPECT_EQ(again.block.x, 32u);
  EXPECT_EQ(again.shared_bytes, 0u);

  ASSERT_EQ(s.nodes[3].params.index(), 10u);  // mem_free_node
  EXPECT_EQ(std::get<cudag::mem_free_node>(s.nodes[3].params).buffer, "tmp");

  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].name, "x");
  EXPECT_EQ(s.params[0].type, cudag::type_of<float*>());
  EXPECT_EQ(s.params[1].name, "n");
  EXPECT_EQ(s.params[1].type, cudag::type_of<int>());
}

}  // namespace

TEST(SpecWriter, KernelWithLiteralParameterAndBufferArgumentsIsWrittenAsDeclared) {
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

  // Both the writer's spec and the builder's are checked against values
  // written here by hand, not against each other.
  expect_scale_again_spec(written);
  expect_scale_again_spec(b.spec());
}

/// produce -> consume (programmatic), consume -> drain (full), produce ->
/// drain (launch completion): consume and drain synchronize their grid
/// dependencies. Written through spec_writer as a generated front end would.
cudag::graph_spec written_launched_early() {
  cudag::graph_spec written;
  cudag::spec_writer w(written);
  w.set_name("early");
  w.param("x", cudag::type_of<float*>());
  const cudag::value_view args[] = {
      cudag::value_view::named(cudag::type_of<float*>(), source::param, "x"),
      cudag::value_view::literal_copy(1.0f), cudag::value_view::literal_copy(64)};
  cudag::kernel_view k;
  k.function = reinterpret_cast<const void*>(&scale);
  k.function_name = "scale";
  k.block = dim3(64);
  k.args = args;
  w.kernel("produce", k);
  k.synchronizes_grid_dependencies = true;
  w.kernel("consume", k);
  w.kernel("drain", k);
  w.depend(1, "produce", cudag::edge_kind::programmatic);
  w.depend(2, "consume", cudag::edge_kind::full);
  w.depend(2, "produce", cudag::edge_kind::launch_completion);
  return written;
}

TEST(SpecWriter, EdgeKindsAndTheGridDependencyMarkerAreWrittenAsDeclared) {
  const cudag::graph_spec written = written_launched_early();
  ASSERT_EQ(written.nodes.size(), 3u);
  EXPECT_TRUE(written.nodes[0].dependency_kinds.empty());
  EXPECT_EQ(written.nodes[1].dependency_kinds,
            std::vector<cudag::edge_kind>{cudag::edge_kind::programmatic});
  EXPECT_EQ(written.nodes[2].deps, (std::vector<std::string>{"consume", "produce"}));
  EXPECT_EQ(written.nodes[2].dependency_kinds,
            (std::vector<cudag::edge_kind>{cudag::edge_kind::full,
                                           cudag::edge_kind::launch_completion}));
  EXPECT_FALSE(std::get<cudag::kernel_node>(written.nodes[0].params).synchronizes_grid_dependencies);
  EXPECT_TRUE(std::get<cudag::kernel_node>(written.nodes[1].params).synchronizes_grid_dependencies);
  EXPECT_TRUE(std::get<cudag::kernel_node>(written.nodes[2].params).synchronizes_grid_dependencies);
  EXPECT_NO_THROW(cudag::check(written));

  // Full edges only, written with or without their kind: no kinds kept,
  // as the builder keeps none.
  cudag::graph_spec plain;
  cudag::spec_writer w(plain);
  w.empty("a");
  w.empty("b");
  w.empty("c");
  w.depend(2, "a", cudag::edge_kind::full);
  w.depend(2, "b");
  EXPECT_TRUE(plain.nodes[2].dependency_kinds.empty());
  EXPECT_EQ(plain.nodes[2].deps.size(), 2u);
}

TEST(SpecWriter, ASpecWrittenWithEdgeKindsIsTheBuildersAndLowersAlike) {
  cudag::builder b("early");
  auto x = b.param<float*>("x");
  auto produce = b.kernel("produce", cudag::kernel_of(&scale, "scale"), cudag::launch(1, 64), x,
                          1.0f, 64);
  auto marked = cudag::synchronizes_grid_dependencies(cudag::kernel_of(&scale, "scale"));
  auto consume = b.kernel("consume", marked, cudag::launch(1, 64), x, 1.0f, 64);
  auto drain = b.kernel("drain", marked, cudag::launch(1, 64), x, 1.0f, 64);
  b.edge(produce, consume, cudag::edge_kind::programmatic);
  b.edge(consume, drain);
  b.edge(produce, drain, cudag::edge_kind::launch_completion);
  const cudag::graph_spec built = b.build();
  const cudag::graph_spec written = written_launched_early();
  // diff() compares every field, the edges' kinds and the marker included.
  EXPECT_TRUE(cudag::diff(built, written).empty()) << cudag::diff(built, written).text();
  for (std::size_t i = 0; i < built.nodes.size(); ++i)
    EXPECT_EQ(built.nodes[i].dependency_kinds, written.nodes[i].dependency_kinds) << i;

  // Both lower to the same native graph, edge data and all.
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(engine_test::dev_x, "x");
  const std::vector<cudag::binding> bindings{cudag::bind("x", engine_test::dev_x)};
  auto from_builder = cudag::instantiate(built, bindings);
  auto from_writer = cudag::instantiate(written, bindings);
  const std::string state = rec.exec_state(from_writer.native_exec());
  EXPECT_EQ(rec.exec_state(from_builder.native_exec()), state);
  EXPECT_NE(state.find("deps=[0:programmatic]"), std::string::npos) << state;
  EXPECT_NE(state.find("deps=[1,0:launch_completion]"), std::string::npos) << state;
  EXPECT_TRUE(rec.misuse().empty()) << engine_test::lines(rec.misuse());
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
