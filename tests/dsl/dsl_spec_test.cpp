// The DSL's compile-time results (order, dependencies, tables) and its spec,
// checked against values written here by hand; the run-time builder's spec
// of the same graph is held to the same hand-written spec.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <string>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/dot.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec_cache.hpp"

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
// (Entries by creation rank: saxpy's order is its declaration order.)
using x_readers = detail::rebind_readers<saxpy_type, detail::name_hash("x")>;
static_assert(x_readers::entries.size() == 2);
static_assert(x_readers::entries[0].rank == 1 && x_readers::entries[1].rank == 2);
using y_readers = detail::rebind_readers<saxpy_type, detail::name_hash("y")>;
static_assert(y_readers::entries[0].rank == 0 && y_readers::entries[1].rank == 2);
static_assert(detail::rebind_readers<saxpy_type, detail::name_hash("n")>::entries.size() ==
              2);  // grid and argument
static_assert(detail::rebind_readers<saxpy_type, detail::name_hash("absent")>::entries.size() == 0);
// Two parameters at once: the union, each entry saying which it reads.
using xy_readers =
    detail::rebind_readers<saxpy_type, detail::name_hash("x"), detail::name_hash("y")>;
static_assert(xy_readers::entries.size() == 3);
static_assert(!xy_readers::entries[0].reads[0] && xy_readers::entries[0].reads[1]);  // clear_y: y
static_assert(xy_readers::entries[1].reads[0] && !xy_readers::entries[1].reads[1]);  // scale: x
static_assert(xy_readers::entries[2].reads[0] && xy_readers::entries[2].reads[1]);   // axpy: both
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
static_assert(detail::split_arrow_path("a -> ", nullptr) == 0 &&
              detail::split_arrow_path("a", nullptr) == 0 &&
              detail::split_arrow_path("->b", nullptr) == 0 &&
              detail::split_arrow_path("a->b", nullptr) == 2);

std::vector<std::string> names_of(const cudag::graph_spec& spec) {
  std::vector<std::string> out;
  for (const auto& node : spec.nodes) out.push_back(node.name);
  return out;
}

/// Each node's dependencies, sorted (the order of edges in a declaration is
/// not part of its meaning).
std::vector<std::vector<std::string>> sorted_deps(const cudag::graph_spec& spec) {
  std::vector<std::vector<std::string>> out;
  for (const auto& node : spec.nodes) {
    auto d = node.deps;
    std::sort(d.begin(), d.end());
    out.push_back(d);
  }
  return out;
}

// Expected values, built here without the library's helpers.
template <class T>
cudag::value lit(const T& v) {
  cudag::literal bytes;
  bytes.bytes.resize(sizeof(T));
  std::memcpy(bytes.bytes.data(), &v, sizeof(T));
  return cudag::value{cudag::type_of<T>(), std::move(bytes)};
}
template <class T>
cudag::value par(std::string name) {
  return cudag::value{cudag::type_of<T>(), cudag::param_ref{std::move(name)}};
}
template <class T>
cudag::value buf(std::string name, std::size_t offset_bytes) {
  return cudag::value{cudag::type_of<T>(), cudag::buffer_ref{std::move(name), offset_bytes}};
}
cudag::value cond(std::string name) {
  return cudag::value{cudag::type_of<cudaGraphConditionalHandle>(), cudag::condition_ref{std::move(name)}};
}

/// A literal argument holds exactly the bytes of `expected`, typed T.
template <class T>
void expect_literal(const cudag::value& v, const T& expected) {
  EXPECT_EQ(v.type, cudag::type_of<T>());
  const auto* l = std::get_if<cudag::literal>(&v.source);
  ASSERT_NE(l, nullptr) << "not a literal";
  ASSERT_EQ(l->bytes.size(), sizeof(T));
  T got{};
  std::memcpy(&got, l->bytes.data(), sizeof(T));
  EXPECT_EQ(got, expected);
}

TEST(DslSpec, ArrowPathsAndEdgeTablesMeanTheSameEdgesAsFanOutAndFanIn) {
  const std::vector<std::string> names{"top", "left", "right", "bottom"};
  const std::vector<std::vector<std::string>> deps{{}, {"top"}, {"top"}, {"left", "right"}};
  for (const cudag::graph_spec& spec :
       {to_spec(diamond), to_spec(diamond_arrows), to_spec(diamond_table_graph)}) {
    EXPECT_EQ(names_of(spec), names);
    EXPECT_EQ(sorted_deps(spec), deps);
  }
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
  expect_literal(k.args[1], 2.0f);
  EXPECT_EQ(std::get<cudag::param_ref>(k.args[0].source).name, "x");
  ASSERT_TRUE(k.grid_from.has_value());
  EXPECT_EQ(k.grid_from->param, "n");
  EXPECT_EQ(k.grid_from->items_per_block, 256u);
  EXPECT_EQ(k.block.x, 256u);

  const auto& m = std::get<cudag::memset_node>(spec.nodes[0].params);
  EXPECT_EQ(m.element_size, 4u);
  EXPECT_EQ(m.width, 1024u);
  expect_literal(m.fill, 0);
}

TEST(DslSpec, LiteralGridIsComputedAtCompileTime) {
  constexpr auto g = graph(kernel<"k", scale>(blocks_for(1000, 256), dim3(128, 2), x, 1.5f, 1000));
  const auto spec = to_spec(g);
  const auto& k = std::get<cudag::kernel_node>(spec.nodes[0].params);
  EXPECT_EQ(k.grid.x, 4u);
  EXPECT_EQ(k.block.x, 128u);
  EXPECT_EQ(k.block.y, 2u);
  EXPECT_FALSE(k.grid_from.has_value());
  expect_literal(k.args[2], 1000);
}

// A DSL kernel is named after its function, in the spec and in the picture,
// as the builder's CUDAG_KERNEL names it; the spec carries the graph's name.
TEST(DslSpec, KernelsAreNamedAfterTheirFunctionInTheSpecAndThePicture) {
  constexpr auto g = graph(kernel<"k", scale>(1, 32, x, 1.5f, 1000),
                           kernel<"later", axpy>(1, 32, x, y, 2.0f, 1000), edge<"k", "later">);
  const auto spec = to_spec(g, "named");
  EXPECT_EQ(spec.name, "named");
  // Each compiler's own spelling of the unnamed namespace.
#ifdef __clang__
  const std::string anonymous = "(anonymous namespace)::";
#else
  const std::string anonymous = "{anonymous}::";
#endif
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[0].params).function_name, anonymous + "scale");
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[1].params).function_name, anonymous + "axpy");
  const std::string dot = cudag::to_dot(spec);
  EXPECT_NE(dot.find("named"), std::string::npos) << dot;
  // The picture shows the name as written, without its anonymous namespace.
  EXPECT_NE(dot.find("\\nscale\\ngrid"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("anonymous"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("unnamed kernel"), std::string::npos) << dot;
}

// ------------------------ DSL spec and builder spec == hand-written spec --
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
          EXPECT_EQ(pa.grid.y, pb.grid.y) << where;
          EXPECT_EQ(pa.grid.z, pb.grid.z) << where;
          EXPECT_EQ(pa.block.x, pb.block.x) << where;
          EXPECT_EQ(pa.block.y, pb.block.y) << where;
          EXPECT_EQ(pa.block.z, pb.block.z) << where;
          EXPECT_EQ(pa.shared_bytes, pb.shared_bytes) << where;
          EXPECT_EQ(pa.grid_from, pb.grid_from) << where;
          EXPECT_EQ(pa.synchronizes_grid_dependencies, pb.synchronizes_grid_dependencies) << where;
          EXPECT_EQ(pa.priority, pb.priority) << where;
          EXPECT_TRUE(cudag::same_launch_attributes(pa, pb))
              << where << ": " << cudag::describe_launch_attributes(pa) << " against "
              << cudag::describe_launch_attributes(pb);
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
          if constexpr (std::is_same_v<P, cudag::captured_node>) {
            EXPECT_EQ(pa.what, pb.what) << where;
          }
        } else if constexpr (std::is_same_v<P, cudag::child_node>) {
          ASSERT_TRUE(pa.graph && pb.graph) << where;
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
    EXPECT_EQ(a.nodes[i].dependency_kinds, b.nodes[i].dependency_kinds) << where << "/" << a.nodes[i].name;
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

cudag::node make(std::string name, cudag::node_params params, std::vector<std::string> deps = {}) {
  cudag::node n;
  n.name = std::move(name);
  n.params = std::move(params);
  n.deps = std::move(deps);
  return n;
}
template <class... P>
cudag::kernel_node kern(void (*function)(P...), unsigned grid, unsigned block, std::vector<cudag::value> args) {
  cudag::kernel_node k;
  k.function = reinterpret_cast<const void*>(function);
  k.grid = dim3(grid);
  k.block = dim3(block);
  k.args = std::move(args);
  return k;
}
cudag::graph_spec spec_of(std::string name, std::vector<cudag::node> nodes,
                          std::vector<cudag::param_decl> params = {},
                          std::vector<cudag::condition_decl> conditions = {}) {
  cudag::graph_spec g;
  g.name = std::move(name);
  g.nodes = std::move(nodes);
  g.params = std::move(params);
  g.conditions = std::move(conditions);
  return g;
}

/// What the declaration of "everything" below means, node by node: kinds,
/// dependencies in declaration order, argument values and types (the type
/// each consumer expects), sizes in bytes, nested graphs with the
/// parameters they read, and the conditions.
cudag::graph_spec everything_by_hand() {
  using cudag::type_of;
  const cudag::memcpy_node stage{par<void*>("y"), buf<const void*>("tmp", 16 * sizeof(float)),
                                 64 * sizeof(float), cudaMemcpyDefault};
  const cudag::memset_node tile{par<void*>("x"), lit(static_cast<unsigned short>(7)), 2, 32, 4, 512};
  const cudag::host_node log{nullptr, {par<float*>("y"), lit(16)}};
  const cudag::captured_node copy{nullptr, {par<float*>("x"), par<const float*>("src")}, "cudaMemcpyAsync"};
  auto child = std::make_shared<cudag::graph_spec>(
      spec_of("child", {make("inner_scale", kern(&scale, 2, 64, {par<float*>("x"), lit(0.5f), lit(128)}))},
              {{"x", type_of<float*>()}}));
  const cudag::graph_spec loop_body =
      spec_of("body", {make("step", kern(&set_flag, 1, 1, {cond("more"), lit(10)}))});
  const cudag::graph_spec then_body =
      spec_of("body", {make("then_fill", kern(&fill_value, 1, 64, {par<float*>("y"), lit(1.0f), lit(64)}))},
              {{"y", type_of<float*>()}});
  const cudag::graph_spec else_body =
      spec_of("body", {make("else_clear", cudag::memset_node{par<void*>("y"), lit(0u), 4, 64, 1, 0})},
              {{"y", type_of<float*>()}});
  return spec_of(
      "everything",
      {
          make("tmp", cudag::mem_alloc_node{"tmp", 256 * sizeof(float), -1}),
          make("fill", kern(&fill_value, 1, 256, {buf<float*>("tmp", 0), lit(3.0f), lit(256)}), {"tmp"}),
          make("stage", stage, {"fill"}),
          make("tile", tile),
          make("log", log, {"stage"}),
          make("copy", copy, {"stage", "tile"}),
          make("child", cudag::child_node{child}, {"copy"}),
          make("join", cudag::empty_node{}, {"log", "copy", "child", "tile"}),
          make("done", cudag::event_record_node{par<cudaEvent_t>("event")}, {"join"}),
          make("after", cudag::event_wait_node{par<cudaEvent_t>("event")}, {"done"}),
          make("free_tmp", cudag::mem_free_node{"tmp"}, {"stage"}),
          make("arm", kern(&set_flag, 1, 1, {cond("more"), lit(3)}), {"after"}),
          make("loop", cudag::conditional_node{cudag::conditional_kind::while_loop, "more", {loop_body}},
               {"arm"}),
          make("branch",
               cudag::conditional_node{cudag::conditional_kind::if_else, "go", {then_body, else_body}},
               {"loop"}),
      },
      {{"y", type_of<float*>()},
       {"x", type_of<float*>()},
       {"src", type_of<const float*>()},
       {"event", type_of<cudaEvent_t>()}},
      {{"more", 1, true}, {"go", 0, true}});
}

TEST(DslSpec, EveryNodeKindMeansWhatIsWrittenAndEqualsTheBuilderSpec) {
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
      chain<"after", "arm", "loop", "branch">,
      chain<"tile", "copy", "child">);  // each writes x: ordered, no race
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
  b.chain(tile, copy, child);
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
  const cudag::graph_spec expected = everything_by_hand();
  expect_same_spec(from_dsl, expected, "dsl: everything");
  expect_same_spec(from_builder, expected, "builder: everything");
}

// Typed edges and the grid-synchronizing marker, at the top level and in a
// child graph and a conditional body: to_spec() keeps each dependency's kind
// where a node has a typed one (none elsewhere), and the marker, as the
// builder does.
// clang-format off
constexpr auto typed_body = graph(
    kernel<"produce", scale>(1, 64, x, 1.0f, 64),
    synchronizes_grid_dependencies(kernel<"consume", axpy>(1, 64, x, y, 2.0f, 64)),
    edge<"produce", "consume", edge_kind::launch_completion>);
constexpr auto typed = graph(
    kernel<"produce", scale>(4, 128, x, 1.0f, 512),
    synchronizes_grid_dependencies(kernel<"consume", axpy>(4, 128, x, y, 2.0f, 512)),
    synchronizes_grid_dependencies(kernel<"drain", axpy>(4, 128, x, y, 3.0f, 512)),
    memset<"clear_y">(y, 0, 512),
    child<"stage">(typed_body),
    if_then<"maybe">(go, typed_body),
    edge<"produce", "consume", edge_kind::programmatic>, edge<"clear_y", "consume">,
    edge<"consume", "drain">, edge<"produce", "drain", edge_kind::programmatic>,
    chain<"drain", "stage", "maybe">);
// clang-format on

cudag::graph_spec typed_by_builder() {
  const auto typed_body_by_builder = [] {
    cudag::builder b("child");
    auto bx = b.param<float*>("x");
    auto by = b.param<float*>("y");
    auto p = b.kernel("produce", cudag::kernel_of(&scale, ""), cudag::launch(1, 64), bx, 1.0f, 64);
    auto c = b.kernel("consume", cudag::synchronizes_grid_dependencies(cudag::kernel_of(&axpy, "")),
                      cudag::launch(1, 64), bx, by, 2.0f, 64);
    b.edge(p, c, cudag::edge_kind::launch_completion);
    return b.build();
  };
  cudag::builder b("typed");
  auto bx = b.param<float*>("x");
  auto by = b.param<float*>("y");
  auto p = b.kernel("produce", cudag::kernel_of(&scale, ""), cudag::launch(4, 128), bx, 1.0f, 512);
  auto c = b.kernel("consume", cudag::synchronizes_grid_dependencies(cudag::kernel_of(&axpy, "")),
                    cudag::launch(4, 128), bx, by, 2.0f, 512);
  auto d = b.kernel("drain", cudag::synchronizes_grid_dependencies(cudag::kernel_of(&axpy, "")),
                    cudag::launch(4, 128), bx, by, 3.0f, 512);
  auto clear = b.memset("clear_y", by, 0, 512);
  auto stage = b.child("stage", typed_body_by_builder());
  cudag::graph_spec then_body = typed_body_by_builder();
  then_body.name = "body";
  auto maybe = b.if_then("maybe", b.condition("go"), then_body);
  b.edge(p, c, cudag::edge_kind::programmatic);
  b.edge(clear, c);
  b.edge(c, d);
  b.edge(p, d, cudag::edge_kind::programmatic);
  b.chain(d, stage, maybe);
  return b.build();
}

TEST(DslSpec, TypedEdgesAndTheGridSyncMarkerEqualTheBuilderSpec) {
  using cudag::edge_kind;
  const cudag::graph_spec from_dsl = to_spec(typed, "typed");
  const cudag::graph_spec from_builder = typed_by_builder();
  expect_same_spec(from_dsl, from_builder, "typed");
  EXPECT_EQ(cudag::topology_key(from_dsl), cudag::topology_key(from_builder));
  EXPECT_NO_THROW(cudag::check(from_dsl));
  // What both wrote, by hand: kinds only on nodes with a typed dependency.
  ASSERT_EQ(names_of(from_dsl),
            (std::vector<std::string>{"produce", "consume", "drain", "clear_y", "stage", "maybe"}));
  const auto kinds = [&](std::size_t i) { return from_dsl.nodes[i].dependency_kinds; };
  EXPECT_TRUE(kinds(0).empty());
  ASSERT_EQ(from_dsl.nodes[1].deps.size(), 2u);
  EXPECT_EQ(from_dsl.nodes[1].deps[0], "produce");
  EXPECT_EQ(from_dsl.nodes[1].deps[1], "clear_y");
  EXPECT_EQ(kinds(1), (std::vector<edge_kind>{edge_kind::programmatic, edge_kind::full}));
  EXPECT_EQ(kinds(2), (std::vector<edge_kind>{edge_kind::full, edge_kind::programmatic}));
  EXPECT_TRUE(kinds(4).empty());
  EXPECT_TRUE(kinds(5).empty());
  const auto sync = [&](const cudag::graph_spec& g, std::size_t i) {
    return std::get<cudag::kernel_node>(g.nodes[i].params).synchronizes_grid_dependencies;
  };
  EXPECT_FALSE(sync(from_dsl, 0));
  EXPECT_TRUE(sync(from_dsl, 1));
  EXPECT_TRUE(sync(from_dsl, 2));
  const cudag::graph_spec& child_spec = *std::get<cudag::child_node>(from_dsl.nodes[4].params).graph;
  EXPECT_EQ(child_spec.nodes[1].dependency_kinds, std::vector<edge_kind>{edge_kind::launch_completion});
  EXPECT_TRUE(sync(child_spec, 1));
  const cudag::graph_spec& body_spec = std::get<cudag::conditional_node>(from_dsl.nodes[5].params).bodies[0];
  EXPECT_EQ(body_spec.nodes[1].dependency_kinds, std::vector<edge_kind>{edge_kind::launch_completion});
  // Only full edges: no kinds kept, no marker.
  for (const cudag::node& node : to_spec(saxpy).nodes) EXPECT_TRUE(node.dependency_kinds.empty());
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
  expect_literal(h.args[1], 7);
  EXPECT_EQ(std::get<cudag::param_ref>(h.args[0].source).name, "count");
}

}  // namespace
