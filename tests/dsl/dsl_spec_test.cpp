// The DSL's compile-time results (order, dependencies, tables) and its spec:
// the spec of a DSL graph equals the run-time builder's spec of the same graph.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <string>

#include "cudag/builder.hpp"
#include "cudag/dsl.hpp"

namespace {

// Host functions stand in for kernels: the spec only records their address.
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }
void fill_value(float* out, float v, int n) { (void)out, (void)v, (void)n; }
void set_flag(cudaGraphConditionalHandle h, int limit) { (void)h, (void)limit; }

using namespace cudag::dsl;
constexpr auto x = param<"x", float*>;
constexpr auto y = param<"y", float*>;
constexpr auto n = param<"n", int>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto more = condition<"more", 1>;
constexpr auto go = condition<"go">;  // a conditional handle serves one conditional node

// clang-format off
constexpr auto saxpy = graph(
    memset<"clear_y">(y, 0, 1024),
    kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<"axpy", axpy>(blocks_for(n, 256), 256, x, y, 3.0f, n),
    edge<"clear_y", "axpy">, edge<"scale", "axpy">);
// clang-format on

// The compiler plans the walk: order, dependencies, node count.
static_assert(decltype(saxpy)::node_count == 3);
static_assert(saxpy.shape.order[0] == 0 && saxpy.shape.order[1] == 1 && saxpy.shape.order[2] == 2);
static_assert(saxpy.shape.dep_begin[2] == 0 && saxpy.shape.dep_begin[3] == 2);
static_assert(saxpy.shape.names[saxpy.shape.deps[0]] == "clear_y");
static_assert(saxpy.shape.names[saxpy.shape.deps[1]] == "scale");

// Which nodes read which parameter is known at compile time (rebinding
// updates exactly these).
using saxpy_type = std::remove_const_t<decltype(saxpy)>;
static_assert(readers_of<saxpy_type, name_hash("x")>.size() == 2);
static_assert(readers_of<saxpy_type, name_hash("x")>[0] == 1 && readers_of<saxpy_type, name_hash("x")>[1] == 2);
static_assert(readers_of<saxpy_type, name_hash("y")>[0] == 0 && readers_of<saxpy_type, name_hash("y")>[1] == 2);
static_assert(readers_of<saxpy_type, name_hash("n")>.size() == 2);  // grid and argument
static_assert(readers_of<saxpy_type, name_hash("absent")>.size() == 0);
static_assert(saxpy.shape.param_bytes == 2 * sizeof(float*) + sizeof(int) + 4);  // aligned slots

// Declared backwards: the topological order still puts producers first.
constexpr auto backwards = graph(
    kernel<"last", scale>(1, 32, x, 1.0f, n), kernel<"middle", scale>(1, 32, x, 1.0f, n),
    kernel<"first", scale>(1, 32, x, 1.0f, n), chain<"first", "middle", "last">);
static_assert(backwards.shape.names[backwards.shape.order[0]] == "first");
static_assert(backwards.shape.names[backwards.shape.order[1]] == "middle");
static_assert(backwards.shape.names[backwards.shape.order[2]] == "last");

constexpr auto diamond = graph(empty<"top">(), empty<"left">(), empty<"right">(), empty<"bottom">(),
                               fan_out<"top", "left", "right">, fan_in<"bottom", "left", "right">);
static_assert(diamond.shape.names[diamond.shape.order[0]] == "top");
static_assert(diamond.shape.names[diamond.shape.order[3]] == "bottom");
static_assert(diamond.shape.max_deps == 2);

// The same diamond with its edges written as arrow paths, in one item.
constexpr auto diamond_arrows =
    graph(empty<"top">(), empty<"left">(), empty<"right">(), empty<"bottom">(),
          edges<"top -> left -> bottom", " top->right ", "right ->\tbottom">);
// And once more from an edge table: the graph's type names only the table.
constexpr name_pair diamond_table[] = {
    {"top", "left"}, {"top", "right"}, {"left", "bottom"}, {"right", "bottom"}};
constexpr auto diamond_table_graph = graph(empty<"top">(), empty<"left">(), empty<"right">(),
                                           empty<"bottom">(), edges_from<diamond_table>);
static_assert(diamond_table_graph.shape.names[diamond_table_graph.shape.order[3]] == "bottom");
static_assert(decltype(edges<"a -> b -> c", "a -> c">)::count == 3);
static_assert(decltype(edges<"a -> b -> c", "a -> c">)::pairs[1].from == "b");
static_assert(decltype(edges<"a -> b -> c", "a -> c">)::pairs[2].to == "c");
static_assert(split_arrow_path("a -> ", nullptr) == 0 && split_arrow_path("a", nullptr) == 0 &&
              split_arrow_path("->b", nullptr) == 0 && split_arrow_path("a->b", nullptr) == 2);

std::vector<std::string> names_of(const cudag::graph_spec& spec) {
  std::vector<std::string> out;
  for (const auto& node : spec.nodes) out.push_back(node.name);
  return out;
}

void expect_same_edges(const cudag::graph_spec& one, const cudag::graph_spec& other) {
  ASSERT_EQ(one.nodes.size(), other.nodes.size());
  for (std::size_t i = 0; i < one.nodes.size(); ++i) {
    auto a = one.nodes[i].deps, b = other.nodes[i].deps;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << one.nodes[i].name;
  }
}

TEST(DslSpec, ArrowPathsAndEdgeTablesMeanTheSameEdgesAsFanOutAndFanIn) {
  const cudag::graph_spec groups = to_spec(diamond);
  ASSERT_EQ(groups.nodes[3].deps.size(), 2u);
  expect_same_edges(to_spec(diamond_arrows), groups);
  expect_same_edges(to_spec(diamond_table_graph), groups);
}

TEST(DslSpec, SaxpyNamesKindsDepsAndParams) {
  const cudag::graph_spec spec = to_spec(saxpy, "saxpy");
  EXPECT_EQ(spec.name, "saxpy");
  EXPECT_EQ(names_of(spec), (std::vector<std::string>{"clear_y", "scale", "axpy"}));
  EXPECT_EQ(spec.nodes[0].kind(), cudag::node_kind::memset);
  EXPECT_EQ(spec.nodes[1].kind(), cudag::node_kind::kernel);
  EXPECT_EQ(spec.nodes[2].deps, (std::vector<std::string>{"clear_y", "scale"}));
  ASSERT_EQ(spec.params.size(), 3u);
  EXPECT_EQ(spec.params[0].name, "y");
  EXPECT_EQ(spec.params[0].type, cudag::type_of<float*>());
  EXPECT_EQ(spec.params[1].name, "n");
  EXPECT_EQ(spec.params[1].type, cudag::type_of<int>());
  EXPECT_EQ(spec.params[2].name, "x");

  const auto& k = std::get<cudag::kernel_node>(spec.nodes[1].params);
  EXPECT_EQ(k.function, reinterpret_cast<const void*>(&scale));
  ASSERT_EQ(k.args.size(), 3u);
  EXPECT_EQ(k.args[1], cudag::make_literal(2.0f));
  EXPECT_EQ(std::get<cudag::param_ref>(k.args[0].source).name, "x");
  ASSERT_TRUE(k.grid_from.has_value());
  EXPECT_EQ(k.grid_from->param, "n");
  EXPECT_EQ(k.grid_from->items_per_block, 256u);
  EXPECT_EQ(k.block.x, 256u);

  const auto& m = std::get<cudag::memset_node>(spec.nodes[0].params);
  EXPECT_EQ(m.element_size, 4u);
  EXPECT_EQ(m.width, 1024u);
  EXPECT_EQ(m.fill, cudag::make_literal(0));
}

TEST(DslSpec, LiteralGridIsComputedAtCompileTime) {
  constexpr auto g = graph(kernel<"k", scale>(blocks_for(1000, 256), dim3(128, 2), x, 1.5f, 1000));
  const auto spec = to_spec(g);
  const auto& k = std::get<cudag::kernel_node>(spec.nodes[0].params);
  EXPECT_EQ(k.grid.x, 4u);
  EXPECT_EQ(k.block.x, 128u);
  EXPECT_EQ(k.block.y, 2u);
  EXPECT_FALSE(k.grid_from.has_value());
  EXPECT_EQ(k.args[2], cudag::make_literal(1000));
}

// ----------------------------------------------- DSL spec == builder spec --
void expect_same_spec(const cudag::graph_spec& a, const cudag::graph_spec& b, const std::string& where);

void expect_same_params(const cudag::node& a, const cudag::node& b, const std::string& where) {
  ASSERT_EQ(a.kind(), b.kind()) << where;
  std::visit(
      [&](const auto& pa) {
        using P = std::decay_t<decltype(pa)>;
        const auto& pb = std::get<P>(b.params);
        if constexpr (std::is_same_v<P, cudag::kernel_node>) {
          EXPECT_EQ(pa.function, pb.function) << where;
          EXPECT_EQ(pa.args, pb.args) << where;
          EXPECT_EQ(pa.grid.x, pb.grid.x) << where;
          EXPECT_EQ(pa.block.x, pb.block.x) << where;
          EXPECT_EQ(pa.shared_bytes, pb.shared_bytes) << where;
          EXPECT_EQ(pa.grid_from, pb.grid_from) << where;
        } else if constexpr (std::is_same_v<P, cudag::memcpy_node>) {
          EXPECT_EQ(pa.dst, pb.dst) << where;
          EXPECT_EQ(pa.src, pb.src) << where;
          EXPECT_EQ(pa.bytes, pb.bytes) << where;
          EXPECT_EQ(pa.kind, pb.kind) << where;
        } else if constexpr (std::is_same_v<P, cudag::memset_node>) {
          EXPECT_EQ(pa.dst, pb.dst) << where;
          EXPECT_EQ(pa.fill, pb.fill) << where;
          EXPECT_EQ(pa.element_size, pb.element_size) << where;
          EXPECT_EQ(pa.width, pb.width) << where;
          EXPECT_EQ(pa.height, pb.height) << where;
          EXPECT_EQ(pa.pitch_bytes, pb.pitch_bytes) << where;
        } else if constexpr (std::is_same_v<P, cudag::host_node> ||
                             std::is_same_v<P, cudag::captured_node>) {
          EXPECT_EQ(pa.args, pb.args) << where;  // callables: compared by effect on the GPU
        } else if constexpr (std::is_same_v<P, cudag::child_node>) {
          expect_same_spec(*pa.graph, *pb.graph, where + "/child");
        } else if constexpr (std::is_same_v<P, cudag::event_record_node> ||
                             std::is_same_v<P, cudag::event_wait_node>) {
          EXPECT_EQ(pa.event, pb.event) << where;
        } else if constexpr (std::is_same_v<P, cudag::mem_alloc_node>) {
          EXPECT_EQ(pa.buffer, pb.buffer) << where;
          EXPECT_EQ(pa.bytes, pb.bytes) << where;
          EXPECT_EQ(pa.device, pb.device) << where;
        } else if constexpr (std::is_same_v<P, cudag::mem_free_node>) {
          EXPECT_EQ(pa.buffer, pb.buffer) << where;
        } else if constexpr (std::is_same_v<P, cudag::conditional_node>) {
          EXPECT_EQ(pa.kind, pb.kind) << where;
          EXPECT_EQ(pa.condition, pb.condition) << where;
          ASSERT_EQ(pa.bodies.size(), pb.bodies.size()) << where;
          for (std::size_t i = 0; i < pa.bodies.size(); ++i)
            expect_same_spec(pa.bodies[i], pb.bodies[i], where + "/body" + std::to_string(i));
        }
      },
      a.params);
}

void expect_same_spec(const cudag::graph_spec& a, const cudag::graph_spec& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  ASSERT_EQ(names_of(a), names_of(b)) << where;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].deps, b.nodes[i].deps) << where << "/" << a.nodes[i].name;
    expect_same_params(a.nodes[i], b.nodes[i], where + "/" + a.nodes[i].name);
  }
  ASSERT_EQ(a.params.size(), b.params.size()) << where;
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_EQ(a.params[i].name, b.params[i].name) << where;
    EXPECT_EQ(a.params[i].type, b.params[i].type) << where << " param " << a.params[i].name;
  }
  ASSERT_EQ(a.conditions.size(), b.conditions.size()) << where;
  for (std::size_t i = 0; i < a.conditions.size(); ++i) {
    EXPECT_EQ(a.conditions[i].name, b.conditions[i].name) << where;
    EXPECT_EQ(a.conditions[i].default_value, b.conditions[i].default_value) << where;
    EXPECT_EQ(a.conditions[i].assign_default, b.conditions[i].assign_default) << where;
  }
}

void log_sum(const float* p, int count) { (void)p, (void)count; }

TEST(DslSpec, EqualsBuilderSpecForEveryNodeKind) {
  constexpr auto event = param<"event", cudaEvent_t>;
  constexpr auto src = param<"src", const float*>;
  constexpr auto loop_body = graph(kernel<"step", set_flag>(1, 1, more, 10));
  constexpr auto then_body = graph(kernel<"then_fill", fill_value>(1, 64, y, 1.0f, 64));
  constexpr auto else_body = graph(memset<"else_clear">(y, 0u, 64));
  constexpr auto inner = graph(kernel<"inner_scale", scale>(2, 64, x, 0.5f, 128));
  constexpr auto log = [](const float* p, int count) { log_sum(p, count); };
  constexpr auto record_copy = [](cudaStream_t s, float* dst, const float* from) {
    (void)cudaMemcpyAsync(dst, from, 64, cudaMemcpyDefault, s);
  };

  // clang-format off
  constexpr auto everything = graph(
      mem_alloc<"tmp">(tmp, 256),
      kernel<"fill", fill_value>(1, 256, tmp, 3.0f, 256),
      memcpy<"stage">(y, tmp + 16, 64 * sizeof(float)),
      memset_2d<"tile">(x, 512, static_cast<unsigned short>(7), 32, 4),
      host<"log">(log, y, 16),
      captured<"copy", "cudaMemcpyAsync">(record_copy, x, src),
      child<"child">(inner),
      empty<"join">(),
      record<"done">(event),
      wait<"after">(event),
      mem_free<"free_tmp">(tmp),
      kernel<"arm", set_flag>(1, 1, more, 3),
      while_loop<"loop">(more, loop_body),
      if_else<"branch">(go, then_body, else_body),
      chain<"tmp", "fill", "stage", "free_tmp">, fan_out<"stage", "log", "copy">,
      fan_in<"join", "log", "copy", "child", "tile">, chain<"join", "done", "after">,
      chain<"after", "arm", "loop", "branch">);
  // clang-format on

  cudag::builder b("everything");
  auto alloc = b.alloc<float>("tmp", 256);
  auto fill = b.kernel("fill", cudag::kernel_of(&fill_value, ""), cudag::launch(1, 256), alloc.buffer, 3.0f, 256);
  auto py = b.param<float*>("y");
  auto stage = b.memcpy("stage", py, alloc.buffer + 16, 64 * sizeof(float));
  auto px = b.param<float*>("x");
  auto tile = b.memset_2d("tile", px, 512, static_cast<unsigned short>(7), 32, 4);
  auto host = b.host("log", log, py, 16);
  auto psrc = b.param<const float*>("src");
  auto copy = b.captured("copy", "cudaMemcpyAsync", record_copy, px, psrc);
  cudag::builder inner_b("child");
  (void)inner_b.kernel("inner_scale", cudag::kernel_of(&scale, ""), cudag::launch(2, 64),
                       inner_b.param<float*>("x"), 0.5f, 128);
  auto child = b.child("child", inner_b.build());
  auto join = b.empty("join");
  auto pevent = b.param<cudaEvent_t>("event");
  auto done = b.record("done", pevent);
  auto after = b.wait("after", pevent);
  auto free_tmp = b.free("free_tmp", alloc.buffer);
  auto cond = b.condition("more", 1);
  auto arm = b.kernel("arm", cudag::kernel_of(&set_flag, ""), cudag::launch(1, 1), cond, 3);
  cudag::builder loop_b("body");
  (void)loop_b.kernel("step", cudag::kernel_of(&set_flag, ""), cudag::launch(1, 1), cond, 10);
  auto loop = b.while_loop("loop", cond, loop_b.build());
  cudag::builder then_b("body"), else_b("body");
  (void)then_b.kernel("then_fill", cudag::kernel_of(&fill_value, ""), cudag::launch(1, 64),
                      then_b.param<float*>("y"), 1.0f, 64);
  (void)else_b.memset("else_clear", else_b.param<float*>("y"), 0u, 64);
  auto branch = b.if_else("branch", b.condition("go"), then_b.build(), else_b.build());
  b.chain(alloc.node, fill, stage, free_tmp);
  stage.precede(host, copy);
  join.after(host, copy, child, tile);
  b.chain(join, done, after);
  b.chain(after, arm, loop, branch);

  const cudag::graph_spec from_dsl = to_spec(everything, "everything");
  cudag::graph_spec from_builder = b.build();
  // The builder declares parameters where asked; the DSL in first-use order.
  // Conditions: the builder declares them on its graph, as the DSL does for
  // the graph holding the conditional node.
  std::vector<std::string> dsl_params, builder_params;
  for (const auto& p : from_dsl.params) dsl_params.push_back(p.name);
  for (const auto& p : from_builder.params) builder_params.push_back(p.name);
  EXPECT_EQ(dsl_params, (std::vector<std::string>{"y", "x", "src", "event"}));
  EXPECT_EQ(builder_params, (std::vector<std::string>{"y", "x", "src", "event"}));
  expect_same_spec(from_dsl, from_builder, "everything");
}

TEST(DslSpec, NestedGraphsDeclareTheParametersTheyRead) {
  constexpr auto inner = graph(kernel<"inner_scale", scale>(2, 64, x, 0.5f, 128));
  constexpr auto outer = graph(child<"sub">(inner), kernel<"after", scale>(1, 64, y, 1.0f, 64),
                               edge<"sub", "after">);
  const auto spec = to_spec(outer);
  ASSERT_EQ(spec.params.size(), 2u);
  EXPECT_EQ(spec.params[0].name, "x");  // read inside the child: bound at the top too
  const auto& c = std::get<cudag::child_node>(spec.nodes[0].params);
  ASSERT_EQ(c.graph->nodes.size(), 1u);
  EXPECT_EQ(c.graph->params[0].name, "x");
}

TEST(DslSpec, HostNodeSpecCallsTheCallableWithItsArguments) {
  static int seen = 0;
  constexpr auto count = param<"count", int>;
  constexpr auto g = graph(host<"h">([](int a, int b) { seen = a * 100 + b; }, count, 7));
  const auto spec = to_spec(g);
  const auto& h = std::get<cudag::host_node>(spec.nodes[0].params);
  const int a = 5, b = 7;
  const void* values[] = {&a, &b};
  (*h.function)(values);
  EXPECT_EQ(seen, 507);
  EXPECT_EQ(h.args[1], cudag::make_literal(7));
  EXPECT_EQ(std::get<cudag::param_ref>(h.args[0].source).name, "count");
}

}  // namespace
