// Near twins of the compile-fail cases (tests/compile_fail): the same
// declarations with the fault corrected compile, and mean what they say.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../compile_fail/common.hpp"
#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/native_recorder.hpp"

namespace {

// duplicate_node / empty_node_name: two distinct names, neither empty.
constexpr auto twin_duplicate = graph(kernel<"scale_once", cf::scale>(1, 32, x, 2.0f, n),
                                      kernel<"scale_twice", cf::scale>(1, 32, y, 2.0f, n));
// unknown_edge_node / cycle / self_edge: edges between declared nodes, acyclic.
constexpr auto twin_edges = graph(kernel<"n1", cf::scale>(1, 32, x, 2.0f, n),
                                  kernel<"n8", cf::scale>(1, 32, x, 2.0f, n),
                                  kernel<"n16", cf::scale>(1, 32, x, 2.0f, n),
                                  chain<"n1", "n8", "n16">, edge<"n1", "n16">);
// malformed_edge_path: every arrow has a name on both sides.
constexpr auto twin_arrows = graph(kernel<"load", cf::scale>(1, 32, x, 2.0f, n),
                                   kernel<"store", cf::scale>(1, 32, x, 2.0f, n),
                                   edges<"load -> store">);
// narrowing_argument / parameter_wrong_type_for_kernel / argument_count.
constexpr auto count = param<"count", int>;
constexpr auto twin_arguments = graph(kernel<"scale_x", cf::scale>(1, 32, x, 2.0f, count),
                                      kernel<"full_call", cf::axpy>(1, 32, x, y, 3.0f, count),
                                      edge<"scale_x", "full_call">);
// refused_node_in_a_variable: the node in a variable of its own, an int
// where the kernel takes one.
constexpr auto twin_node_variable = kernel<"scale_k", cf::scale>(1, 32, x, 2.0f, 2);
constexpr auto twin_variable_graph = graph(twin_node_variable, empty<"after">(), edge<"scale_k", "after">);
// refused_node_through_wrappers / refused_kernel_with_attributes: the same
// wrappers around nodes whose arguments fit.
constexpr auto twin_wrapped = graph(
    kernel<"first", cf::scale>(1, 32, x, 2.0f, n),
    with_access<0, access_mode::read>(host<"report_n">([](const float* p) { (void)p; }, x)),
    edge<"first", "report_n">);
constexpr auto twin_attributed = graph(synchronizes_grid_dependencies(with_attributes(
    with_priority(kernel<"scale_w", cf::scale>(1, 32, x, 2.0f, 2), 1), cudag::launch_attributes{})));
// parameter_two_types: one type (and the two writes ordered: no race).
constexpr auto twin_one_type = graph(memset<"clear_a">(param<"data", float*>, 0, 16),
                                     memset<"clear_b">(param<"data", float*>, 0, 16),
                                     edge<"clear_a", "clear_b">);
// host_in_while_body / event_in_if_body / alloc_in_switch_body: allowed kinds;
// switch_without_cases: a switch with two cases.
constexpr auto body = graph(kernel<"step", cf::scale>(1, 32, x, 2.0f, n), memset<"reset">(y, 0, 8),
                            edge<"step", "reset">);
constexpr auto twin_bodies = graph(while_loop<"iterate">(condition<"more">, body),
                                   switch_case<"pick">(condition<"which">, body, graph(empty<"nothing">())),
                                   host<"report">([](int v) { (void)v; }, n),
                                   chain<"iterate", "pick", "report">);
// condition_tested_twice(_nested) / condition_never_tested: one conditional
// node per condition; any number of kernels may set it.
constexpr auto again = condition<"again", 1>;
constexpr auto nested_loop = graph(while_loop<"again_loop">(again, body));
constexpr auto twin_conditions = graph(kernel<"arm", cf::set_flag>(1, 1, condition<"more", 1>),
                                       while_loop<"loop">(condition<"more", 1>, body),
                                       child<"inner">(nested_loop), chain<"arm", "loop", "inner">);
// buffer_before_alloc / buffer_after_free / buffer_freed_twice /
// free_never_allocated, buffer_never_allocated: users inside the window, one
// alloc and one free.
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto twin_buffer = graph(mem_alloc<"alloc_tmp">(tmp, 256),
                                   kernel<"use_tmp", cf::scale>(1, 256, tmp, 2.0f, 256),
                                   kernel<"late", cf::scale>(1, 256, tmp + 128, 1.0f, 128),
                                   mem_free<"free_tmp">(tmp),
                                   chain<"alloc_tmp", "use_tmp", "late", "free_tmp">);
// memcpy_operand: pointers.
constexpr auto twin_memcpy = graph(memcpy<"stage">(y, x, 64));
// buffer_allocated_twice: one alloc node per buffer.
constexpr auto other = buffer<"other", float>;
constexpr auto twin_two_buffers = graph(mem_alloc<"alloc_a">(tmp, 256), mem_alloc<"alloc_b">(other, 128),
                                        kernel<"use_both", cf::axpy>(1, 128, tmp, other, 2.0f, 128),
                                        mem_free<"free_a">(tmp), mem_free<"free_b">(other),
                                        fan_out<"use_both", "free_a", "free_b">,
                                        fan_in<"use_both", "alloc_a", "alloc_b">);
// host_callable_arguments / captured_callable_arguments: callables that
// accept the arguments (a captured one takes the capture stream first).
constexpr auto twin_callables = graph(
    host<"report">([](const float* p, int count) { (void)p, (void)count; }, x, n),
    captured<"record_gemm", "gemm">(
        [](cudaStream_t s, float* p, int count) { (void)s, (void)p, (void)count; }, x, n),
    edge<"report", "record_gemm">);
// memset_fill / memset_destination: a 4-byte and a 2-byte fill into pointers.
constexpr auto twin_memsets = graph(memset<"clear_y">(y, 0.0f, 1024),
                                    memset_2d<"clear_tile">(y, 256, std::uint16_t{7}, 64, 4),
                                    edge<"clear_y", "clear_tile">);
// record_event_operand / wait_event_operand: event operands.
constexpr auto event = param<"event", cudaEvent_t>;
constexpr auto twin_events = graph(record<"signal">(event), wait<"hold">(event), edge<"signal", "hold">);
// chain_of_one / edges_without_path: a chain of two, a path of two.
constexpr auto twin_short_edges = graph(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n),
                                        kernel<"store", cf::scale>(1, 32, x, 2.0f, n),
                                        empty<"done">(), chain<"scale", "store">,
                                        edges<"store -> done">);
// typed_edge_into_unsynchronized_kernel / typed_edge_from_memset /
// typed_edge_into_empty_node / edge_of_two_kinds: typed edges between kernel
// nodes into a marked kernel, full ones from and into other nodes, an edge
// declared twice with one kind.
// clang-format off
constexpr auto twin_typed_edges = graph(
    kernel<"warm", cf::scale>(1, 32, x, 2.0f, n),
    synchronizes_grid_dependencies(kernel<"combine", cf::axpy>(1, 32, x, y, 3.0f, n)),
    memset<"clear_y">(y, 0, 1024), empty<"join">(),
    synchronizes_grid_dependencies(kernel<"finish", cf::scale>(1, 32, y, 1.0f, n)),
    edge<"warm", "combine", edge_kind::programmatic>, edge<"clear_y", "combine">,
    edge<"warm", "join">, edge<"warm", "combine", edge_kind::programmatic>,
    edge<"combine", "finish", edge_kind::launch_completion>);
// clang-format on
// parameter_not_trivially_copyable: a pointer parameter is.
constexpr auto label = param<"label", const char*>;
constexpr auto twin_label = graph(host<"print">([](const char* text) { (void)text; }, label));

// rtc_kernel_argument: a run-time kernel of the same signature, float literal.
cudag::graph_spec rtc_twin_spec() {
  const cudag::kernel_ref<void(float*, float, int)> k{reinterpret_cast<const void*>(&cf::scale),
                                                       "scale", nullptr};
  return to_spec(graph(kernel<"rtc_scale">(k, dim3(1), dim3(32), x, 2.0f, n)));
}

// integral_argument_out_of_range: integral literals whose values fit the
// kernel's integral parameters (an int for a std::size_t, for an unsigned char).
inline void reduce_kernel(const float* in, float* out, std::size_t count, unsigned char tag) {
  (void)in, (void)out, (void)count, (void)tag;
}
constexpr auto twin_integral = graph(kernel<"reduce", reduce_kernel>(1, 256, x, y, 1 << 24, 200));
using reduce_ref = cudag::kernel_ref<void(const float*, float*, std::size_t, unsigned char)>;
cudag::graph_spec rtc_reduce_spec(int count) {
  const reduce_ref k{reinterpret_cast<const void*>(&reduce_kernel), "reduce", nullptr};
  return to_spec(graph(kernel<"rtc_reduce">(k, dim3(1), dim3(256), x, y, count, 7)));
}

// launch_dimension_out_of_range: launch dimensions within CUDA's limits,
// written as literals, a parameter and scaled() of each (a literal folded).
constexpr auto rows = param<"rows", int>;
constexpr auto twin_launch =
    graph(kernel<"rows", cf::scale>(dims(4, 65535), dims(scaled(1000, 1, 4), 1, 4),
                                    shared_bytes(scaled(rows, 4)), x, 2.0f, n));
// A graph made at run time (a run-time kernel: not a constant) checks them
// there, naming the node and the dimension.
using scale_ref = cudag::kernel_ref<void(float*, float, int)>;
cudag::graph_spec rtc_rows_spec(int grid_rows, std::uint64_t divisor) {
  const scale_ref k{reinterpret_cast<const void*>(&cf::scale), "scale", nullptr};
  return to_spec(graph(kernel<"rtc_rows">(k, dims(4, grid_rows), dims(scaled(n, 1, divisor)), x,
                                          2.0f, n)));
}

template <class Make>
std::string refusal_of(Make&& make) {
  try {
    (void)make();
  } catch (const cudag::error& e) {
    return e.node() + ": " + e.what();
  }
  return "accepted";
}

TEST(DslCompileFailTwins, LaunchDimensionsWithinLimitsAreFoldedAndChecked) {
  const auto spec = to_spec(twin_launch);
  const auto& k = std::get<cudag::kernel_node>(spec.nodes[0].params);
  EXPECT_EQ(k.grid.x, 4u);
  EXPECT_EQ(k.grid.y, 65535u);
  EXPECT_EQ(k.block.x, 250u);
  EXPECT_EQ(k.block.z, 4u);
  EXPECT_EQ(k.shared_bytes, 0u);
  EXPECT_EQ(k.shape_rules,
            (std::vector<cudag::shape_rule>{{cudag::launch_dim::shared_bytes, "rows", 4, 1}}));
  const auto fits = rtc_rows_spec(65535, 32);
  EXPECT_EQ(std::get<cudag::kernel_node>(fits.nodes[0].params).grid.y, 65535u);
  EXPECT_EQ(refusal_of([] { return rtc_rows_spec(70000, 32); }),
            "rtc_rows: kernel node 'rtc_rows': grid.y = 70000 is outside CUDA's range (1 to 65535)");
  EXPECT_EQ(refusal_of([] { return rtc_rows_spec(0, 32); }),
            "rtc_rows: kernel node 'rtc_rows': grid.y = 0 is outside CUDA's range (1 to 65535)");
  EXPECT_EQ(refusal_of([] { return rtc_rows_spec(8, 0); }),
            "rtc_rows: kernel node 'rtc_rows': shape rule block.x has a multiplier or divisor of 0");
}

// launch_attributes_refused (cluster_does_not_divide_grid): a cluster that
// divides the grid compiles, and a graph made at run time refuses one that
// does not, naming the node, with check()'s message.
constexpr auto twin_cluster = graph(
    with_priority(with_attributes(kernel<"rows", cf::scale>(6, 32, x, 2.0f, n), {.cluster = dim3(3, 1, 1)}), 1));
cudag::graph_spec rtc_cluster_spec(unsigned cluster) {
  const scale_ref k{reinterpret_cast<const void*>(&cf::scale), "scale", nullptr};
  return to_spec(graph(with_attributes(kernel<"rtc_rows">(k, dim3(6), dim3(32), x, 2.0f, n),
                                       {.cluster = dim3(cluster, 1, 1)})));
}

TEST(DslCompileFailTwins, AClusterThatDividesTheGridCompiles) {
  const auto spec = to_spec(twin_cluster);
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[0].params).cluster.x, 3u);
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[0].params).priority, 1);
  EXPECT_NO_THROW(cudag::check(spec));
  EXPECT_EQ(std::get<cudag::kernel_node>(rtc_cluster_spec(2).nodes[0].params).cluster.x, 2u);
  EXPECT_EQ(refusal_of([] { return rtc_cluster_spec(4); }),
            "rtc_rows: kernel node 'rtc_rows' has a cluster of 4x1x1 blocks, which does not divide its "
            "grid of 6x1x1 blocks");
}

// race_missing_edge: the two writers of x ordered; a graph made at run time
// whose two kernels write through one literal address (a value the
// compile-time rule cannot follow) is refused by check() on its spec,
// naming both nodes.
constexpr auto twin_race = graph(kernel<"load", cf::scale>(1, 32, x, 2.0f, n),
                                 kernel<"scale", cf::scale>(1, 32, x, 2.0f, n),
                                 kernel<"shift", cf::scale>(1, 32, x, 3.0f, n),
                                 fan_out<"load", "scale", "shift">, edge<"scale", "shift">);
cudag::graph_spec literal_address_spec(float* data) {
  return to_spec(graph(kernel<"scale", cf::scale>(1, 32, data, 2.0f, n),
                       kernel<"shift", cf::scale>(1, 32, data, 3.0f, n)));
}
// race_concurrent_beside_read: the reader declared concurrent too (both
// update y atomically).
constexpr auto twin_counting = graph(
    with_access<1, access_mode::concurrent>(kernel<"count", cf::axpy>(1, 32, x, y, 1.0f, n)));
constexpr auto twin_concurrent = graph(
    child<"tally">(twin_counting),
    with_access<0, access_mode::concurrent>(
        kernel<"report", cf::axpy>(1, 32, y, param<"out", float*>, 1.0f, n)));
// access_declared_for_value: the declaration names the pointer argument.
constexpr auto twin_declared = graph(
    with_access<0, access_mode::read, 128>(kernel<"scale", cf::scale>(1, 32, x, 2.0f, n)));

TEST(DslCompileFailTwins, OrderedOrDeclaredAccessesCompileAndCheck) {
  EXPECT_NO_THROW(cudag::check(to_spec(twin_race)));
  float data[4] = {};
  const std::string refusal = refusal_of([&] {
    cudag::check(literal_address_spec(data));
    return 0;
  });
  EXPECT_NE(refusal.find("race: 'scale' writes the memory at 0x"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find(" while 'shift' writes it, and no path orders them"), std::string::npos)
      << refusal;
  const cudag::graph_spec concurrent = to_spec(twin_concurrent);
  EXPECT_NO_THROW(cudag::check(concurrent));
  EXPECT_EQ(std::get<cudag::kernel_node>(concurrent.nodes[1].params).accesses,
            (cudag::access_declarations{{0, access_mode::concurrent, to_the_end}}));
  const cudag::graph_spec declared = to_spec(twin_declared);
  EXPECT_EQ(std::get<cudag::kernel_node>(declared.nodes[0].params).accesses,
            (cudag::access_declarations{{0, access_mode::read, 128}}));
  EXPECT_NO_THROW(cudag::check(declared));
}

template <class T>
T literal_of(const cudag::value& v) {
  const auto& bytes = std::get<cudag::literal>(v.source).bytes;
  T out{};
  EXPECT_EQ(bytes.size(), sizeof(T));
  std::memcpy(&out, bytes.data(), sizeof(T));
  return out;
}

TEST(DslCompileFailTwins, IntegralLiteralsThatFitArePassedConverted) {
  const auto spec = to_spec(twin_integral);
  const auto& k = std::get<cudag::kernel_node>(spec.nodes[0].params);
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[2].type, cudag::type_of<std::size_t>());
  EXPECT_EQ(k.args[3].type, cudag::type_of<unsigned char>());
  EXPECT_EQ(literal_of<std::size_t>(k.args[2]), std::size_t{1} << 24);
  EXPECT_EQ(literal_of<unsigned char>(k.args[3]), 200);
  // A graph made at run time checks the value there, naming node and position.
  const auto fits = rtc_reduce_spec(1024);
  EXPECT_EQ(literal_of<std::size_t>(std::get<cudag::kernel_node>(fits.nodes[0].params).args[2]), 1024u);
  try {
    (void)rtc_reduce_spec(-1);
    ADD_FAILURE() << "a negative count for a std::size_t was accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel node 'rtc_reduce': argument 2 (-1)"), std::string::npos)
        << e.what();
  }
}

TEST(DslCompileFailTwins, ShapesCompileAndMeanWhatTheySay) {
  EXPECT_EQ(decltype(twin_duplicate)::node_count, 2u);
  EXPECT_EQ(twin_edges.shape.names[twin_edges.shape.order[2]], "n16");
  EXPECT_EQ(to_spec(twin_edges).nodes[2].deps, (std::vector<std::string>{"n8", "n1"}));
  EXPECT_EQ(to_spec(twin_arrows).nodes[1].deps, (std::vector<std::string>{"load"}));
  EXPECT_EQ(to_spec(twin_arguments).params.size(), 3u);
  EXPECT_EQ(to_spec(twin_one_type).params.size(), 1u);
  const auto variable_spec = to_spec(twin_variable_graph);
  ASSERT_EQ(variable_spec.nodes.size(), 2u);
  EXPECT_EQ(variable_spec.nodes[0].name, "scale_k");
  EXPECT_EQ(variable_spec.nodes[1].deps, (std::vector<std::string>{"scale_k"}));
  const auto wrapped_spec = to_spec(twin_wrapped);
  const auto& report = std::get<cudag::host_node>(wrapped_spec.nodes[1].params);
  ASSERT_EQ(report.accesses.size(), 1u);
  EXPECT_EQ(report.accesses[0].mode, cudag::access_mode::read);
  const auto attributed_spec = to_spec(twin_attributed);
  const auto& scale_w = std::get<cudag::kernel_node>(attributed_spec.nodes[0].params);
  EXPECT_EQ(scale_w.priority, 1);
  EXPECT_TRUE(scale_w.synchronizes_grid_dependencies);
  EXPECT_EQ(to_spec(twin_bodies).conditions.size(), 2u);
  const auto conditions_spec = to_spec(twin_conditions);
  ASSERT_EQ(conditions_spec.conditions.size(), 1u);  // "again" lives in the child graph
  EXPECT_EQ(conditions_spec.conditions[0].name, "more");
  EXPECT_EQ(std::get<cudag::child_node>(conditions_spec.nodes[2].params).graph->conditions[0].name,
            "again");
  const auto buffer_spec = to_spec(twin_buffer);
  const auto& late = std::get<cudag::kernel_node>(buffer_spec.nodes[2].params);
  EXPECT_EQ(std::get<cudag::buffer_ref>(late.args[0].source).offset_bytes, 128 * sizeof(float));
  EXPECT_EQ(std::get<cudag::memcpy_node>(to_spec(twin_memcpy).nodes[0].params).bytes, 64u);
}

TEST(DslCompileFailTwins, TypedEdgesCompileAndMeanWhatTheySay) {
  using cudag::edge_kind;
  const cudag::graph_spec spec = to_spec(twin_typed_edges);
  EXPECT_NO_THROW(cudag::check(spec));
  ASSERT_EQ(spec.nodes.size(), 5u);
  EXPECT_EQ(spec.nodes[1].deps, (std::vector<std::string>{"warm", "clear_y"}));
  EXPECT_EQ(spec.nodes[1].dependency_kinds,
            (std::vector<edge_kind>{edge_kind::programmatic, edge_kind::full}));
  EXPECT_TRUE(spec.nodes[3].dependency_kinds.empty());  // join: a full edge only
  EXPECT_EQ(spec.nodes[4].dependency_kinds, std::vector<edge_kind>{edge_kind::launch_completion});
  EXPECT_FALSE(std::get<cudag::kernel_node>(spec.nodes[0].params).synchronizes_grid_dependencies);
  EXPECT_TRUE(std::get<cudag::kernel_node>(spec.nodes[1].params).synchronizes_grid_dependencies);
  // Lowered with the edge data on combine's and finish's dependencies.
  cudag::native::recorder rec;
  rec.name_kernel(&cf::scale, "scale");
  rec.name_kernel(&cf::axpy, "axpy");
  float* const d = reinterpret_cast<float*>(0x7f00000);
  float* const d2 = reinterpret_cast<float*>(0x7f10000);  // apart: one address for both would race
  auto e = instantiate(twin_typed_edges, x = d, y = d2, n = 32);
  const std::string state = rec.exec_state(e.native_exec());
  EXPECT_NE(state.find("add_node deps=[0:programmatic,1] axpy"), std::string::npos) << state;
  EXPECT_NE(state.find("add_node deps=[2:launch_completion] scale"), std::string::npos) << state;
  EXPECT_NE(state.find("add_empty_node deps=[0]"), std::string::npos) << state;
}

TEST(DslCompileFailTwins, OperandsAndCallablesCompileAndMeanWhatTheySay) {
  const auto buffers = to_spec(twin_two_buffers);
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(buffers.nodes[0].params).buffer, "tmp");
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(buffers.nodes[1].params).buffer, "other");
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(buffers.nodes[1].params).bytes, 128 * sizeof(float));

  const auto callables = to_spec(twin_callables);
  ASSERT_EQ(callables.nodes.size(), 2u);
  const auto& report = std::get<cudag::host_node>(callables.nodes[0].params);
  ASSERT_EQ(report.args.size(), 2u);
  EXPECT_EQ(std::get<cudag::param_ref>(report.args[0].source).name, "x");
  const auto& gemm = std::get<cudag::captured_node>(callables.nodes[1].params);
  EXPECT_EQ(gemm.what, "gemm");
  EXPECT_EQ(gemm.args.size(), 2u);
  EXPECT_EQ(callables.nodes[1].deps, (std::vector<std::string>{"report"}));

  const auto memsets = to_spec(twin_memsets);
  const auto& clear = std::get<cudag::memset_node>(memsets.nodes[0].params);
  EXPECT_EQ(clear.element_size, 4u);
  EXPECT_EQ(clear.width, 1024u);
  const auto& tile = std::get<cudag::memset_node>(memsets.nodes[1].params);
  EXPECT_EQ(tile.element_size, 2u);
  EXPECT_EQ(tile.pitch_bytes, 256u);
  EXPECT_EQ(tile.height, 4u);
  EXPECT_EQ(std::get<cudag::param_ref>(tile.dst.source).name, "y");

  const auto events = to_spec(twin_events);
  EXPECT_EQ(events.nodes[0].kind(), cudag::node_kind::event_record);
  EXPECT_EQ(events.nodes[1].kind(), cudag::node_kind::event_wait);
  EXPECT_EQ(std::get<cudag::param_ref>(std::get<cudag::event_wait_node>(events.nodes[1].params)
                                           .event.source).name,
            "event");
  ASSERT_EQ(events.params.size(), 1u);
  EXPECT_EQ(events.params[0].type, cudag::type_of<cudaEvent_t>());

  const auto short_edges = to_spec(twin_short_edges);
  EXPECT_EQ(short_edges.nodes[1].deps, (std::vector<std::string>{"scale"}));
  EXPECT_EQ(short_edges.nodes[2].deps, (std::vector<std::string>{"store"}));

  const auto labels = to_spec(twin_label);
  ASSERT_EQ(labels.params.size(), 1u);
  EXPECT_EQ(labels.params[0].type, cudag::type_of<const char*>());

  const auto rtc = rtc_twin_spec();
  const auto& k = std::get<cudag::kernel_node>(rtc.nodes[0].params);
  EXPECT_EQ(k.function_name, "scale");
  ASSERT_EQ(k.args.size(), 3u);
  EXPECT_EQ(k.args[1].type, cudag::type_of<float>());
}

// bind_wrong_type / missing_binding / binding_unknown_parameter /
// parameter_bound_twice / binding_type_differs / rebind_wrong_type /
// rebind_unknown_parameter / disable_* / node_handle_unknown: every
// parameter bound once with its own type (x through a parameter of the same
// name and type declared apart), rebound, nodes named by their names. The
// recorder stands in for CUDA, so this runs without a GPU.
TEST(DslCompileFailTwins, BindingsRebindingAndNodesByName) {
  cudag::native::recorder rec;
  float* d = reinterpret_cast<float*>(std::uintptr_t{0x1000});
  {
    auto e = instantiate(twin_arguments, param<"x", float*> = d, y = d, count = 4);
    EXPECT_EQ(rec.calls_starting("add_kernel_node").size(), 2u) << rec.transcript();
    rec.clear();
    EXPECT_EQ(e.rebind(count = 8), cudag::rebind_path::node_setters);
    EXPECT_EQ(rec.calls().size(), 2u) << rec.transcript();  // both kernels read count
    e.set_enabled<"scale_x">(false);
    EXPECT_FALSE(e.enabled<"scale_x">());
    EXPECT_TRUE(e.enabled<"full_call">());
    EXPECT_FALSE(rec.node_enabled(e.native_exec(), e.node_handle<"scale_x">()));
    EXPECT_NE(e.node_handle<"full_call">(), e.node_handle<"scale_x">());
  }
  EXPECT_EQ(rec.live_execs(), 0u);
  EXPECT_TRUE(rec.misuse().empty()) << rec.misuse().size();
}

// buffer_address_unknown: the buffer the graph allocates, read back by its
// view, offset included, at the address its reader was given.
constexpr auto staging = buffer<"staging", float>;
constexpr auto twin_owned_buffer = graph(mem_alloc<"make">(staging, 64),
                                         kernel<"fill", cf::scale>(1, 32, staging + 8, 2.0f, 56),
                                         edge<"make", "fill">);

TEST(DslCompileFailTwins, AGraphOwnedBufferIsReadBackByItsView) {
  cudag::native::recorder rec;
  rec.name_kernel(&cf::scale, "scale");
  auto e = instantiate(twin_owned_buffer);
  float* base = e.buffer(staging);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(e.buffer(staging + 8), base + 8);
  // Up to one past its last element; past that the view is refused, naming
  // the buffer, as the builder's exec does.
  EXPECT_EQ(e.buffer(staging + 64), base + 64);
  try {
    (void)e.buffer(staging + 65);
    FAIL() << "a view past the end of 'staging' was handed out";
  } catch (const cudag::error& err) {
    EXPECT_EQ(std::string(err.what()),
              "buffer 'staging': a view at element 65 of 4 bytes is past the end of its 256-byte "
              "allocation (64 elements)");
  }
  char text[64];
  std::snprintf(text, sizeof text, "args=[0x%llx,",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(base + 8)));
  const auto kernels = rec.calls_starting("add_kernel_node");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_NE(kernels[0].find(text), std::string::npos) << kernels[0] << " should hold " << text;
}

// buffer_view_offset_overflows: the farthest view whose byte offset fits
// std::size_t is accepted in a constant graph; past it, a view made at run
// time is refused, naming the buffer, with the builder's message.
constexpr auto wide = buffer<"wide", float>;
constexpr std::size_t farthest = ~std::size_t{0} / sizeof(float);
using wide_view = std::remove_cv_t<decltype(wide)>;
// (The buffer is as large: a view past its end is refused, see below.)
constexpr auto twin_farthest_view = graph(mem_alloc<"make">(wide, farthest),
                                          kernel<"fill", cf::scale>(1, 32, wide + farthest, 2.0f, 0),
                                          edge<"make", "fill">);
static_assert((wide + 8 + (farthest - 8)).offset == farthest);

TEST(DslCompileFailTwins, ABufferViewIsRefusedOnlyWhereItsByteOffsetOverflows) {
  EXPECT_EQ(to_spec(twin_farthest_view).nodes.size(), 2u);
  volatile std::size_t one = 1;  // a run-time value: the check runs at run time
  try {
    (void)(wide + farthest + one);
    FAIL() << "a view one element past the farthest was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()), "buffer 'wide': an offset of " + std::to_string(farthest) +
                                         " + 1 elements of 4 bytes overflows std::size_t");
  }
  try {  // a view made directly, not by +, is checked the same way
    (void)wide_view{farthest + one};
    FAIL() << "a view made one element past the farthest was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()), "buffer 'wide': an offset of " + std::to_string(farthest + 1) +
                                         " elements of 4 bytes overflows std::size_t");
  }
  try {
    (void)(wide + 3 + ~std::size_t{0} * one);  // the sum would wrap to 2
    FAIL() << "a view whose offset wraps was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "buffer 'wide': an offset of 3 + 18446744073709551615 elements of 4 bytes "
              "overflows std::size_t");
  }
}

// allocation_size_overflows: the most floats whose bytes fit std::size_t are
// accepted where declared (CUDA refuses such a size; it does not wrap); one
// more is refused, naming the node, with the builder's text less the graph.
constexpr auto huge = buffer<"huge", float>;
constexpr auto twin_most_floats = graph(mem_alloc<"make">(huge, farthest));

TEST(DslCompileFailTwins, AnAllocationIsRefusedOnlyWhereItsSizeOverflows) {
  const cudag::graph_spec spec = to_spec(twin_most_floats);
  ASSERT_EQ(spec.nodes.size(), 1u);
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(spec.nodes[0].params).bytes, farthest * sizeof(float));
  volatile std::size_t one = 1;  // a run-time value: the check runs at run time
  const std::string text = "mem_alloc node 'make': " + std::to_string(farthest + 1) +
                           " elements of 4 bytes overflow std::size_t";
  try {
    (void)mem_alloc<"make">(huge, farthest + one);
    FAIL() << "an allocation of one float more than the farthest was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()), text);
    EXPECT_EQ(e.node(), "make");
  }
  cudag::builder b("g");  // the builder's twin
  try {
    (void)b.alloc<float>("make", farthest + one);
    FAIL() << "the builder accepted the allocation";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()), "graph 'g': " + text);
    EXPECT_EQ(e.node(), "make");
  }
}

// memcpy_past_buffer_end: a copy, sets and an argument that end at the
// buffer's last byte (an argument's address: one past it) are accepted
// where declared. One byte further, the DSL refuses at run time with
// check()'s text, and check() refuses the builder's twin naming the same
// node and the allocation.
constexpr auto bounded = buffer<"bounded", float>;
constexpr auto twin_bounded = graph(mem_alloc<"make">(bounded, 64), memcpy<"copy">(bounded + 32, x, 128),
                                    memset<"clear">(bounded + 1, 0.0f, 63),
                                    memset_2d<"rows">(bounded, 64, 0.0f, 16, 4),
                                    kernel<"end", cf::scale>(1, 32, bounded + 64, 2.0f, 0),
                                    chain<"make", "copy", "clear", "rows", "end">);

/// The views a node's body reports to graph()'s check, as (offset, extent,
/// access) in the order reported.
struct reported_view {
  std::size_t offset = 0, extent = 0;
  cudag::view_access access = cudag::view_access::address;
  friend constexpr bool operator==(const reported_view&, const reported_view&) = default;
};
template <class Node>
constexpr std::array<reported_view, 2> views_of(const Node& node) {
  std::array<reported_view, 2> out{};
  std::size_t k = 0;
  node.body.for_each_buffer_view([&](std::string_view, std::size_t offset, std::size_t extent,
                                     cudag::view_access access) {
    out[k++] = {offset, extent, access};
  });
  return out;
}
// A copy between two views reports both ranges; a 2-D set its last row's end.
static_assert(views_of(memcpy<"copy">(bounded + 2, bounded + 32, 64)) ==
              std::array<reported_view, 2>{reported_view{8, 64, cudag::view_access::writes},
                                           reported_view{128, 64, cudag::view_access::reads}});
static_assert(views_of(memset_2d<"rows">(bounded + 1, 64, 0.0f, 16, 4)) ==
              std::array<reported_view, 2>{reported_view{4, 3 * 64 + 16 * 4, cudag::view_access::sets},
                                           reported_view{}});
static_assert(views_of(memcpy<"stage">(y, x, 64)) == std::array<reported_view, 2>{});

/// What check() says of the builder's graph: buffer 'bounded' of 64 floats
/// (its node named as the buffer, as the builder names it), then `add` its
/// one user.
template <class Add>
std::string builder_twin_refusal(Add&& add) {
  cudag::builder b("g");
  auto made = b.alloc<float>("bounded", 64);
  auto src = b.param<float*>("x");
  cudag::node_ref user = add(b, made.buffer, src);
  b.edge(made.node, user);
  try {
    cudag::check(b.build());
  } catch (const cudag::check_error& e) {
    EXPECT_EQ(e.nodes(), (std::vector<std::string>{user.name(), "bounded"}));
    return e.what();
  }
  return "(accepted)";
}

template <class MakeGraph>
std::string dsl_refusal(MakeGraph&& make, const char* node) {
  try {
    (void)make();
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), node);
    return e.what();
  }
  return "(accepted)";
}

TEST(DslCompileFailTwins, AnOperandIsRefusedOnlyPastTheEndOfItsBuffer) {
  EXPECT_NO_THROW(cudag::check(to_spec(twin_bounded)));
  volatile std::size_t one = 1;

  const std::string copy = dsl_refusal(
      [&] {
        return graph(mem_alloc<"bounded">(bounded, 64), memcpy<"copy">(bounded + 32, x, 128 + one),
                     edge<"bounded", "copy">);
      },
      "copy");
  EXPECT_EQ(copy,
            "memcpy node 'copy' writes bytes [128, 257) of buffer 'bounded', past the end of its "
            "256 bytes (allocated by 'bounded')");
  EXPECT_EQ(builder_twin_refusal([](cudag::builder& b, const auto& buf, const auto& src) {
              return b.memcpy("copy", buf + 32, src, 129);
            }),
            copy);

  const std::string set = dsl_refusal(
      [&] {
        return graph(mem_alloc<"bounded">(bounded, 64), memset<"clear">(bounded + one, 0.0f, 64),
                     edge<"bounded", "clear">);
      },
      "clear");
  EXPECT_EQ(set,
            "memset node 'clear' sets bytes [4, 260) of buffer 'bounded', past the end of its "
            "256 bytes (allocated by 'bounded')");

  const std::string address = dsl_refusal(
      [&] {
        return graph(mem_alloc<"bounded">(bounded, 64),
                     kernel<"end", cf::scale>(1, 32, bounded + 64 + one, 2.0f, 0),
                     edge<"bounded", "end">);
      },
      "end");
  EXPECT_EQ(address,
            "kernel node 'end' is given buffer 'bounded' at byte 260, past the end of its 256 "
            "bytes (allocated by 'bounded')");
  EXPECT_EQ(builder_twin_refusal([](cudag::builder& b, const auto& buf, const auto&) {
              return b.kernel("end", CUDAG_KERNEL(cf::scale), cudag::launch(1, 32), buf + 65, 2.0f,
                              0);
            }),
            address);
}

// view_past_buffer_end_in_body: a body declared before the graph that
// allocates the buffer is checked by that graph, its node named by path.
constexpr auto twin_nested_views = graph(
    mem_alloc<"bounded">(bounded, 64),
    switch_case<"pick">(condition<"which">, graph(empty<"none">()),
                        graph(kernel<"late", cf::scale>(1, 32, bounded + 64, 2.0f, 0))),
    child<"stage">(graph(memcpy<"copy">(bounded + 32, x, 128))),
    chain<"bounded", "pick", "stage">);

/// The nested graphs a node hands graph()'s walk, as the text joining the
/// node's name to each graph's paths.
template <class Node>
constexpr cudag::dsl::detail::text_buffer<64> nested_suffixes(const Node& node) {
  cudag::dsl::detail::text_buffer<64> out;
  node.body.for_each_nested_graph([&](const auto&, std::string_view suffix) { out << suffix << ";"; });
  return out;
}
static_assert(nested_suffixes(child<"stage">(graph(empty<"e">()))).view() == "/;");
static_assert(nested_suffixes(while_loop<"loop">(condition<"more">, graph(empty<"e">()))).view() ==
              "/;");
static_assert(nested_suffixes(switch_case<"pick">(condition<"which">, graph(empty<"a">()),
                                                  graph(empty<"b">()), graph(empty<"c">())))
                  .view() == "[0]/;[1]/;[2]/;");

TEST(DslCompileFailTwins, AViewInANestedBodyIsCheckedByTheGraphThatAllocates) {
  EXPECT_NO_THROW(cudag::check(to_spec(twin_nested_views)));
  volatile std::size_t one = 1;
  const auto stage = graph(memcpy<"copy">(bounded + 32, x, 128 + one));
  const std::string copy = dsl_refusal(
      [&] {
        return graph(mem_alloc<"bounded">(bounded, 64), child<"stage">(stage),
                     edge<"bounded", "stage">);
      },
      "stage/copy");
  EXPECT_EQ(copy,
            "memcpy node 'stage/copy' writes bytes [128, 257) of buffer 'bounded', past the end of "
            "its 256 bytes (allocated by 'bounded')");
  const auto late = graph(kernel<"late", cf::scale>(1, 32, bounded + 64 + one, 2.0f, 0));
  EXPECT_EQ(dsl_refusal(
                [&] {
                  return graph(mem_alloc<"bounded">(bounded, 64),
                               switch_case<"pick">(condition<"which">, graph(empty<"none">()), late),
                               edge<"bounded", "pick">);
                },
                "pick[1]/late"),
            "kernel node 'pick[1]/late' is given buffer 'bounded' at byte 260, past the end of its "
            "256 bytes (allocated by 'bounded')");

  // The builder's twin: check() names the same path.
  cudag::builder b("g");
  auto made = b.alloc<float>("bounded", 64);
  cudag::builder inner("stage");
  auto src = inner.param<float*>("x");
  inner.memcpy("copy", made.buffer + 32, src, 129);
  auto child = b.child("stage", std::move(inner).build());
  b.edge(made.node, child);
  try {
    cudag::check(b.build());
    ADD_FAILURE() << "check() accepted the builder's twin";
  } catch (const cudag::check_error& e) {
    EXPECT_EQ(std::string(e.what()), copy);
    EXPECT_EQ(e.nodes(), (std::vector<std::string>{"stage/copy", "bounded"}));
  }
}

}  // namespace
