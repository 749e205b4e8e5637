// cudag/dsl/hana.hpp: a DSL graph's nodes, parameters and buffers as
// Boost.Hana sequences, checked against the declaration written here, and
// Hana compile-time strings as names (a graph declared with them is the
// graph declared with literals, and an exec's members take them). Compiled
// by g++ and, as hana_view_test.cu, by nvcc. The recorder stands in for
// CUDA, so this runs without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/count_if.hpp>
#include <boost/hana/filter.hpp>
#include <boost/hana/find_if.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/is_empty.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/optional.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/take_front.hpp>
#include <boost/hana/transform.hpp>

#include "cudag/dot.hpp"
#include "cudag/dsl.hpp"
#include "cudag/dsl/hana.hpp"
#include "cudag/native_recorder.hpp"

// The macro tests/dsl/no_hana_test.cpp looks for is the one Hana's headers
// define: where it is missing here, that test would pass for nothing.
#if !defined(BOOST_HANA_CONFIG_HPP)
#error "Boost.Hana no longer defines BOOST_HANA_CONFIG_HPP: update tests/dsl/no_hana_test.cpp"
#endif

namespace {

namespace hana = boost::hana;
namespace hv = cudag::dsl::hana_view;
using cudag::node_kind;
using namespace cudag::dsl;

// Host functions stand in for kernels: the recorder only records their address.
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
void axpy(const float* x, float* y, float a, int n) { (void)x, (void)y, (void)a, (void)n; }
void set_flag(cudaGraphConditionalHandle h, const unsigned* v) { (void)h, (void)v; }

constexpr auto x = param<"x", float*>;
constexpr auto y = param<"y", float*>;
constexpr auto n = param<"n", int>;
constexpr auto rows = param<"rows", unsigned>;
constexpr auto runs = param<"runs", int*>;
constexpr auto side = param<"side", double*>;
constexpr auto event = param<"event", cudaEvent_t>;
constexpr auto choice = param<"choice", const unsigned*>;
constexpr auto inner_count = param<"inner_count", long>;
constexpr auto body_out = param<"body_out", float*>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto halves = buffer<"halves", short>;
constexpr auto take = condition<"take">;

constexpr auto inner = graph(memset<"clear_inner">(x, 0, 64),
                             kernel<"fill_inner", scale>(blocks_for(inner_count, 32), 32, x, 1.0f, 8),
                             edge<"clear_inner", "fill_inner">);
// Declared to only read x: it runs beside the pipeline's other readers.
constexpr auto inner_typed = graph(with_access<0, access_mode::read>(kernel<"inner_scale", scale>(1, 32, x, 1.0f, 8)),
                                   host<"inner_note">([](long) {}, inner_count));
constexpr auto body = graph(kernel<"times_ten", scale>(1, 32, body_out, 10.0f, 8));

// Every node kind that reads a parameter, each parameter first read by a
// different kind: a kernel's launch (n, rows), its arguments (x), memset
// (y), host (runs), captured (side), event (event), a kernel reading a
// condition (choice), a child graph (inner_count) and a conditional body
// (body_out).
// clang-format off
constexpr auto pipeline = graph(
    memset<"clear_y">(y, 0, 1024),
    kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<"axpy", axpy>(blocks_for(n, 256), dims(32, rows, 1), x, y, 3.0f, n),
    mem_alloc<"make_tmp">(tmp, 4096),
    memcpy<"stage">(tmp, x, 1024 * sizeof(float)),
    mem_free<"drop_tmp">(tmp),
    mem_alloc<"make_halves">(halves, 17),
    host<"count_runs">([](int* r) { ++*r; }, runs),
    captured<"library", "cublas">([](cudaStream_t, double*) {}, side),
    record<"done">(event),
    kernel<"decide", set_flag>(1, 1, take, choice),
    child<"nested">(inner_typed),
    if_then<"maybe">(take, body),
    mem_free<"drop_halves">(halves),
    fan_in<"axpy", "clear_y", "scale">,
    edges<"make_tmp -> stage -> drop_tmp", "axpy -> stage", "make_halves -> drop_halves",
          "decide -> maybe", "axpy -> count_runs -> done", "library -> done", "nested -> done",
          "scale -> nested">);
// clang-format on

// ------------------------------------------------------------------ nodes --
constexpr auto nodes = hv::nodes(pipeline);
static_assert(hana::size(nodes) == hana::size_c<14>);
static_assert(hana::size(nodes) == hana::size_c<pipeline.node_count>);

// Names in declaration order.
constexpr auto node_name = [](auto node) { return node.name; };
static_assert(hana::transform(nodes, node_name) ==
              hana::make_tuple(BOOST_HANA_STRING("clear_y"), BOOST_HANA_STRING("scale"),
                               BOOST_HANA_STRING("axpy"), BOOST_HANA_STRING("make_tmp"),
                               BOOST_HANA_STRING("stage"), BOOST_HANA_STRING("drop_tmp"),
                               BOOST_HANA_STRING("make_halves"), BOOST_HANA_STRING("count_runs"),
                               BOOST_HANA_STRING("library"), BOOST_HANA_STRING("done"),
                               BOOST_HANA_STRING("decide"), BOOST_HANA_STRING("nested"),
                               BOOST_HANA_STRING("maybe"), BOOST_HANA_STRING("drop_halves")));

// Kinds, as integral constants of cudag::node_kind and as kind_name's text.
template <node_kind K>
constexpr auto kind_c = hana::integral_c<node_kind, K>;
static_assert(hana::at_c<0>(nodes).kind == kind_c<node_kind::memset>);
static_assert(hana::at_c<1>(nodes).kind == kind_c<node_kind::kernel>);
static_assert(hana::at_c<3>(nodes).kind == kind_c<node_kind::mem_alloc>);
static_assert(hana::at_c<4>(nodes).kind == kind_c<node_kind::memcpy>);
static_assert(hana::at_c<5>(nodes).kind == kind_c<node_kind::mem_free>);
static_assert(hana::at_c<7>(nodes).kind == kind_c<node_kind::host>);
static_assert(hana::at_c<8>(nodes).kind == kind_c<node_kind::captured>);
static_assert(hana::at_c<9>(nodes).kind == kind_c<node_kind::event_record>);
static_assert(hana::at_c<11>(nodes).kind == kind_c<node_kind::child>);
static_assert(hana::at_c<12>(nodes).kind == kind_c<node_kind::conditional>);
static_assert(decltype(hana::at_c<2>(nodes).kind)::value == node_kind::kernel);
static_assert(hana::at_c<12>(nodes).kind_name == BOOST_HANA_STRING("conditional"));
static_assert(hana::at_c<6>(nodes).kind_name == BOOST_HANA_STRING("mem_alloc"));

// Dependencies by name, in edge declaration order.
static_assert(hana::at_c<2>(nodes).depends_on ==
              hana::make_tuple(BOOST_HANA_STRING("clear_y"), BOOST_HANA_STRING("scale")));
static_assert(hana::at_c<4>(nodes).depends_on ==
              hana::make_tuple(BOOST_HANA_STRING("make_tmp"), BOOST_HANA_STRING("axpy")));
static_assert(hana::at_c<9>(nodes).depends_on ==
              hana::make_tuple(BOOST_HANA_STRING("count_runs"), BOOST_HANA_STRING("library"),
                               BOOST_HANA_STRING("nested")));
static_assert(hana::is_empty(hana::at_c<0>(nodes).depends_on));

// Hana's algorithms over them at compile time: kernels counted, a node
// found by name, the nodes nothing depends on... filtered by kind.
static_assert(hana::count_if(nodes, [](auto node) {
                return node.kind == kind_c<node_kind::kernel>;
              }) == hana::size_c<3>);
static_assert(hana::find_if(nodes, [](auto node) {
                return node.name == BOOST_HANA_STRING("stage");
              }).value().kind == kind_c<node_kind::memcpy>);
static_assert(hana::find_if(nodes, [](auto node) {
                return node.name == BOOST_HANA_STRING("absent");
              }) == hana::nothing);
static_assert(hana::transform(hana::filter(nodes, [](auto node) {
                                return node.kind == kind_c<node_kind::mem_free>;
                              }),
                              node_name) ==
              hana::make_tuple(BOOST_HANA_STRING("drop_tmp"), BOOST_HANA_STRING("drop_halves")));
// Descriptors are Hana Structs.
static_assert(hana::keys(hana::at_c<0>(nodes)) ==
              hana::make_tuple(BOOST_HANA_STRING("name"), BOOST_HANA_STRING("kind"),
                               BOOST_HANA_STRING("kind_name"), BOOST_HANA_STRING("depends_on")));

// The order the graph is built in: producers first, ties in declaration order.
static_assert(hana::take_front(hv::order(pipeline), hana::size_c<3>) ==
              hana::make_tuple(BOOST_HANA_STRING("clear_y"), BOOST_HANA_STRING("scale"),
                               BOOST_HANA_STRING("axpy")));
constexpr auto backwards = graph(empty<"last">(), empty<"middle">(), empty<"first">(),
                                 chain<"first", "middle", "last">);
static_assert(hv::order(backwards) == hana::make_tuple(BOOST_HANA_STRING("first"),
                                                       BOOST_HANA_STRING("middle"),
                                                       BOOST_HANA_STRING("last")));
static_assert(hana::transform(hv::nodes(backwards), node_name) ==
              hana::make_tuple(BOOST_HANA_STRING("last"), BOOST_HANA_STRING("middle"),
                               BOOST_HANA_STRING("first")));

// ------------------------------------------------------------- parameters --
// In the order of first use (the spec's), each with its C++ type, wherever
// it is read: a kernel's launch, its arguments, an operand, a host or
// captured node's arguments, an event, a child graph, a conditional body.
constexpr auto params = hv::params(pipeline);
static_assert(hana::size(params) == hana::size_c<10>);
static_assert(hana::transform(params, [](auto p) { return p.name; }) ==
              hana::make_tuple(BOOST_HANA_STRING("y"), BOOST_HANA_STRING("n"), BOOST_HANA_STRING("x"),
                               BOOST_HANA_STRING("rows"), BOOST_HANA_STRING("runs"),
                               BOOST_HANA_STRING("side"), BOOST_HANA_STRING("event"),
                               BOOST_HANA_STRING("choice"), BOOST_HANA_STRING("inner_count"),
                               BOOST_HANA_STRING("body_out")));
static_assert(hana::transform(params, [](auto p) { return p.type; }) ==
              hana::tuple_t<float*, int, float*, unsigned, int*, double*, cudaEvent_t,
                            const unsigned*, long, float*>);
static_assert(hana::find_if(params, [](auto p) {
                return p.name == BOOST_HANA_STRING("rows");
              }).value().type == hana::type_c<unsigned>);
// The names and types agree with the shape the graph keeps.
static_assert(hana::size(params) == hana::size_c<pipeline.shape.params.size()>);
// A graph's own parameters (an operand, a launch) and a graph with none.
constexpr auto x_text = BOOST_HANA_STRING("x");
constexpr auto inner_count_text = BOOST_HANA_STRING("inner_count");
static_assert(hv::params(inner) ==
              hana::make_tuple(
                  hv::param_info<std::remove_const_t<decltype(x_text)>, hana::type<float*>>{},
                  hv::param_info<std::remove_const_t<decltype(inner_count_text)>, hana::type<long>>{}));
static_assert(hana::is_empty(hv::params(backwards)));

// ---------------------------------------------------------------- buffers --
// The graph's own allocations, in declaration order: name, element type,
// allocating node, count (a value of the graph object).
constexpr auto buffers = hv::buffers(pipeline);
static_assert(hana::size(buffers) == hana::size_c<2>);
static_assert(hana::at_c<0>(buffers).name == BOOST_HANA_STRING("tmp"));
static_assert(hana::at_c<0>(buffers).type == hana::type_c<float>);
static_assert(hana::at_c<0>(buffers).node == BOOST_HANA_STRING("make_tmp"));
static_assert(hana::at_c<0>(buffers).count == 4096);
static_assert(hana::at_c<1>(buffers).name == BOOST_HANA_STRING("halves"));
static_assert(hana::at_c<1>(buffers).type == hana::type_c<short>);
static_assert(hana::at_c<1>(buffers).count == 17);
static_assert(hana::fold_left(buffers, std::size_t{0}, [](std::size_t bytes, auto b) {
                return bytes + b.count * sizeof(typename decltype(b.type)::type);
              }) == 4096 * sizeof(float) + 17 * sizeof(short));
static_assert(hana::is_empty(hv::buffers(inner)));

// Items past the first sixteen (a graph's items are held in chunks of
// sixteen): an allocation and a parameter's first reader there.
constexpr auto late = param<"late", int>;
// clang-format off
constexpr auto long_graph = graph(
    empty<"e0">(), empty<"e1">(), empty<"e2">(), empty<"e3">(), empty<"e4">(), empty<"e5">(),
    empty<"e6">(), empty<"e7">(), empty<"e8">(), empty<"e9">(), empty<"e10">(), empty<"e11">(),
    empty<"e12">(), empty<"e13">(), empty<"e14">(), empty<"e15">(), empty<"e16">(),
    mem_alloc<"late_alloc">(halves, 33),
    kernel<"late_reader", scale>(blocks_for(late, 64), 64, x, 1.0f, late),
    chain<"e0", "e16", "late_alloc">);
// clang-format on
static_assert(hana::size(hv::nodes(long_graph)) == hana::size_c<19>);
static_assert(hana::at_c<17>(hv::nodes(long_graph)).depends_on ==
              hana::make_tuple(BOOST_HANA_STRING("e16")));
static_assert(hana::at_c<0>(hv::buffers(long_graph)).count == 33);
static_assert(hana::at_c<0>(hv::buffers(long_graph)).type == hana::type_c<short>);
static_assert(hana::at_c<0>(hv::params(long_graph)).name == BOOST_HANA_STRING("late"));
static_assert(hana::at_c<0>(hv::params(long_graph)).type == hana::type_c<int>);

// ------------------------------------------------------------ Hana names --
// The same pipeline head declared with Hana strings as names: the same
// graph (its nodes, kinds and dependencies; its spec below).
constexpr auto scale_name = BOOST_HANA_STRING("scale");
// clang-format off
constexpr auto head_literal = graph(
    memset<"clear_y">(y, 0, 1024),
    kernel<"scale", scale>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<"axpy", axpy>(blocks_for(n, 256), 256, x, y, 3.0f, n),
    fan_in<"axpy", "clear_y", "scale">);
constexpr auto head_hana = graph(
    memset<hv::name(BOOST_HANA_STRING("clear_y"))>(y, 0, 1024),
    kernel<hv::name(scale_name), scale>(blocks_for(n, 256), 256, x, 2.0f, n),
    kernel<hv::name(BOOST_HANA_STRING("axpy")), axpy>(blocks_for(n, 256), 256, x, y, 3.0f, n),
    fan_in<hv::name(BOOST_HANA_STRING("axpy")), hv::name(BOOST_HANA_STRING("clear_y")),
           hv::name(scale_name)>);
// clang-format on
static_assert(hv::nodes(head_hana) == hv::nodes(head_literal));
static_assert(hv::params(head_hana) == hv::params(head_literal));
static_assert(hv::name(scale_name).view() == "scale");
// A parameter and a buffer named by Hana strings are the ones named by literals.
constexpr auto x_name = BOOST_HANA_STRING("x");
constexpr auto tmp_name = BOOST_HANA_STRING("tmp");
// (Compared through a function: nvcc cannot write decltype of a type named
// by fixed_string arguments out for the host compiler, dsl/README.md.)
template <class A, class B>
constexpr bool same_type(const A&, const B&) noexcept {
  return std::is_same_v<A, B>;
}
static_assert(same_type(param<hv::name(x_name), float*>, x));
static_assert(same_type(buffer<hv::name(tmp_name), float>, tmp));
static_assert(!same_type(buffer<hv::name(tmp_name), float>, buffer<"tmp", double>));

TEST(DslHanaView, NodesWalkedAtRunTimeInDeclarationOrder) {
  std::vector<std::string> names, kinds;
  hana::for_each(hv::nodes(pipeline), [&](auto node) {
    names.emplace_back(hana::to<const char*>(node.name));
    kinds.emplace_back(hana::to<const char*>(node.kind_name));
  });
  EXPECT_EQ(names, (std::vector<std::string>{"clear_y", "scale", "axpy", "make_tmp", "stage",
                                             "drop_tmp", "make_halves", "count_runs", "library",
                                             "done", "decide", "nested", "maybe", "drop_halves"}));
  EXPECT_EQ(kinds[3], "mem_alloc");
  EXPECT_EQ(kinds[8], "captured");
  // What the spec says of the same graph.
  const cudag::graph_spec spec = to_spec(pipeline);
  ASSERT_EQ(spec.nodes.size(), names.size());
  for (std::size_t i = 0; i != names.size(); ++i) {
    EXPECT_EQ(spec.nodes[i].name, names[i]);
    EXPECT_EQ(cudag::kind_name(spec.nodes[i].kind()), kinds[i]);
  }
  std::vector<std::string> params;
  hana::for_each(hv::params(pipeline),
                 [&](auto p) { params.emplace_back(hana::to<const char*>(p.name)); });
  ASSERT_EQ(spec.params.size(), params.size());
  for (std::size_t i = 0; i != params.size(); ++i) EXPECT_EQ(spec.params[i].name, params[i]);
  EXPECT_EQ(spec.params[3].type, cudag::type_of<unsigned>());  // rows: the view says unsigned too
}

TEST(DslHanaView, GraphNamedByHanaStringsHasTheSameSpec) {
  const cudag::graph_spec literal = to_spec(head_literal, "head");
  const cudag::graph_spec hana_named = to_spec(head_hana, "head");
  EXPECT_EQ(cudag::to_dot(hana_named), cudag::to_dot(literal));
  ASSERT_EQ(hana_named.nodes.size(), 3u);
  EXPECT_EQ(hana_named.nodes[1].name, "scale");
  EXPECT_EQ(hana_named.nodes[2].deps, (std::vector<std::string>{"clear_y", "scale"}));
}

TEST(DslHanaView, ExecMembersTakeHanaNames) {
  cudag::native::recorder rec;
  float* d = reinterpret_cast<float*>(std::uintptr_t{0x1000});
  float* d2 = reinterpret_cast<float*>(std::uintptr_t{0x2000});  // apart: one address for both would race
  {
    auto e = instantiate(head_hana, x = d, y = d2, param<hv::name(BOOST_HANA_STRING("n")), int> = 64);
    e.set_enabled<hv::name(BOOST_HANA_STRING("scale"))>(false);
    EXPECT_FALSE(e.enabled<hv::name(scale_name)>());
    EXPECT_FALSE(e.enabled<"scale">());
    EXPECT_TRUE(e.enabled<hv::name(BOOST_HANA_STRING("axpy"))>());
    EXPECT_EQ(e.node_handle<hv::name(scale_name)>(), e.node_handle<"scale">());
    EXPECT_FALSE(rec.node_enabled(e.native_exec(), e.node_handle<"scale">()));
    EXPECT_EQ(rec.calls_starting("node_set_enabled").size(), 1u) << rec.transcript();
  }
  EXPECT_EQ(rec.live_execs(), 0u);
}

TEST(DslHanaView, BufferCountsAreTheGraphObjects) {
  std::vector<std::size_t> bytes;
  hana::for_each(hv::buffers(pipeline), [&](auto b) {
    bytes.push_back(b.count * sizeof(typename decltype(b.type)::type));
  });
  EXPECT_EQ(bytes, (std::vector<std::size_t>{4096 * sizeof(float), 17 * sizeof(short)}));
}

}  // namespace
