// Near twins of the compile-fail cases (tests/compile_fail): the same
// declarations with the fault corrected compile, and mean what they say.
#include <gtest/gtest.h>

#include "../compile_fail/common.hpp"
#include "cudag/error.hpp"
#include "gpu_support.hpp"

namespace {

// duplicate_node: two distinct names.
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
// parameter_two_types: one type.
constexpr auto twin_one_type = graph(memset<"clear_a">(param<"data", float*>, 0, 16),
                                     memset<"clear_b">(param<"data", float*>, 0, 16));
// host_in_while_body / event_in_if_body / alloc_in_switch_body: allowed kinds.
constexpr auto body = graph(kernel<"step", cf::scale>(1, 32, x, 2.0f, n), memset<"reset">(y, 0, 8),
                            edge<"step", "reset">);
constexpr auto twin_bodies = graph(while_loop<"iterate">(condition<"more">, body),
                                   switch_case<"pick">(condition<"which">, body, graph(empty<"nothing">())),
                                   host<"report">([](int v) { (void)v; }, n),
                                   chain<"iterate", "pick", "report">);
// condition_tested_twice(_nested): one conditional node per condition; any
// number of kernels may set it.
constexpr auto again = condition<"again", 1>;
constexpr auto nested_loop = graph(while_loop<"again_loop">(again, body));
constexpr auto twin_conditions = graph(kernel<"arm", cf::set_flag>(1, 1, condition<"more", 1>),
                                       while_loop<"loop">(condition<"more", 1>, body),
                                       child<"inner">(nested_loop), chain<"arm", "loop", "inner">);
// buffer_before_alloc / buffer_after_free: users inside the window.
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto twin_buffer = graph(mem_alloc<"alloc_tmp">(tmp, 256),
                                   kernel<"use_tmp", cf::scale>(1, 256, tmp, 2.0f, 256),
                                   kernel<"late", cf::scale>(1, 256, tmp + 128, 1.0f, 128),
                                   mem_free<"free_tmp">(tmp),
                                   chain<"alloc_tmp", "use_tmp", "late", "free_tmp">);
// memcpy_operand: pointers.
constexpr auto twin_memcpy = graph(memcpy<"stage">(y, x, 64));

TEST(DslCompileFailTwins, ShapesCompileAndMeanWhatTheySay) {
  EXPECT_EQ(decltype(twin_duplicate)::node_count, 2u);
  EXPECT_EQ(twin_edges.shape.names[twin_edges.shape.order[2]], "n16");
  EXPECT_EQ(to_spec(twin_edges).nodes[2].deps, (std::vector<std::string>{"n8", "n1"}));
  EXPECT_EQ(to_spec(twin_arrows).nodes[1].deps, (std::vector<std::string>{"load"}));
  EXPECT_EQ(to_spec(twin_arguments).params.size(), 3u);
  EXPECT_EQ(to_spec(twin_one_type).params.size(), 1u);
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

// bind_wrong_type / missing_binding / binding_unknown_parameter /
// rebind_wrong_type / disable_*: every parameter bound with its own type.
void bind_and_toggle(float* d) {
  auto e = instantiate(twin_arguments, x = d, y = d, count = 4);
  e.rebind(count = 8);
  e.set_enabled<"scale_x">(false);
}

TEST(DslCompileFailTwins, BindingsCompile) {
  if (!cudag::testing::why_no_gpu().empty()) {
    // No device here: the first CUDA call reports it, as a cudag::error.
    EXPECT_THROW(bind_and_toggle(nullptr), cudag::error);
    return;
  }
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64 * sizeof(float)), cudaSuccess);
  EXPECT_NO_THROW(bind_and_toggle(d));
  (void)cudaFree(d);
}

}  // namespace
