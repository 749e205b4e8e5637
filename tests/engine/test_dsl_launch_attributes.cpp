// Launch attributes declared with the DSL (with_attributes), without a GPU:
// to_spec() writes what the builder writes; lowering makes the builder's
// calls exactly; a constexpr graph refuses bad attributes at compile time
// (tests/compile_fail/cluster_does_not_divide_grid.cpp) and a graph made at
// run time with check()'s message, naming the node; a cooperative grid too
// large to be resident is refused at lowering and at a rebind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;
namespace dsl = cudag::dsl;

constexpr auto px = dsl::param<"x", float*>;
constexpr auto pn = dsl::param<"n", int>;

constexpr cudag::launch_attributes every_attribute{
    .cluster = dim3(2, 2, 1),
    .cooperative = true,
    .mem_sync_domain = cudaLaunchMemSyncDomainRemote,
    .shared_carveout = 25,
};

// clang-format off
constexpr auto with_each = dsl::graph(
    dsl::with_priority(dsl::with_attributes(dsl::kernel<"k", scale>(dim3(4, 2), 32, px, 1.0f, 1), every_attribute), 3),
    dsl::kernel<"plain", scale>(4, 32, px, 2.0f, 1),
    dsl::with_attributes(dsl::kernel<"carved", scale>(4, 32, px, 3.0f, 1), {.shared_carveout = 0}),
    dsl::edge<"k", "plain">, dsl::edge<"plain", "carved">);
// clang-format on

/// with_each by the builder ("k" of priority 3), with an access-policy
/// window on "k" where `window` is given.
cudag::graph_spec with_each_by_builder(cudag::access_policy_window window = {}) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  cudag::launch_config k_config = cudag::launch(dim3(4, 2), 32)
                                      .cluster(2, 2)
                                      .cooperative()
                                      .mem_sync_domain(cudaLaunchMemSyncDomainRemote)
                                      .shared_carveout(25)
                                      .access_policy(window.base, window.bytes, window.hit_ratio, window.hit,
                                                     window.miss);
  k_config.priority = 3;
  auto k = b.kernel("k", cudag::kernel_of(&scale, ""), k_config, x, 1.0f, 1);
  auto plain = b.kernel("plain", cudag::kernel_of(&scale, ""), cudag::launch(4, 32), x, 2.0f, 1);
  auto carved =
      b.kernel("carved", cudag::kernel_of(&scale, ""), cudag::launch(4, 32).shared_carveout(0), x, 3.0f, 1);
  b.chain(k, plain, carved);
  return b.build();
}

std::string attributes_of_node(const cudag::graph_spec& g, std::size_t i) {
  return cudag::describe_launch_attributes(std::get<cudag::kernel_node>(g.nodes[i].params));
}

TEST(DslLaunchAttributes, ToSpecWritesThemAsTheBuilderDoes) {
  const cudag::graph_spec spec = dsl::to_spec(with_each);
  const cudag::graph_spec builder = with_each_by_builder();
  ASSERT_EQ(spec.nodes.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& a = std::get<cudag::kernel_node>(spec.nodes[i].params);
    const auto& b = std::get<cudag::kernel_node>(builder.nodes[i].params);
    EXPECT_TRUE(cudag::same_launch_attributes(a, b))
        << spec.nodes[i].name << ": " << cudag::describe_launch_attributes(a) << " against "
        << cudag::describe_launch_attributes(b);
  }
  EXPECT_EQ(attributes_of_node(spec, 0),
            "cluster 2x2x1, cooperative, memory-sync domain remote, shared carveout 25%");
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[0].params).priority, 3);
  EXPECT_EQ(std::get<cudag::kernel_node>(spec.nodes[1].params).priority, 0);
  EXPECT_EQ(attributes_of_node(spec, 1), "none");
  EXPECT_EQ(attributes_of_node(spec, 2), "shared carveout 0%");
  EXPECT_NO_THROW(cudag::check(spec));
}

/// The transcript and exec state of instantiating `spec`, or DSL graph `g`.
template <class Instantiate>
std::pair<std::string, std::string> record(Instantiate&& instantiate) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  auto e = instantiate();
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  return {rec.transcript(), rec.exec_state(e.native_exec())};
}

TEST(DslLaunchAttributes, LoweringMakesTheBuildersCalls) {
  const auto by_dsl = record([] { return dsl::instantiate(with_each, px = dev_x); });
  const auto by_builder = record([] {
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    return cudag::instantiate(with_each_by_builder(), binds);
  });
  EXPECT_EQ(by_dsl, by_builder);
  for (const char* sent : {"attribute=8 priority=3", "attribute=4 cluster=2,2,1", "attribute=2 cooperative=1",
                           "attribute=10 mem_sync_domain=1", "attribute=14 shared_carveout=25",
                           "attribute=14 shared_carveout=0", "occupancy_max_active_blocks scale"})
    EXPECT_NE(by_dsl.first.find(sent), std::string::npos) << sent << "\n" << by_dsl.first;
}

TEST(DslLaunchAttributes, AWindowAtARunTimeAddressIsSentAsTheBuildersIs) {
  // A window's base is an address known at run time: a graph made there.
  const cudag::access_policy_window window{dev_y, 4096, 0.5f};
  const auto g = dsl::graph(
      dsl::with_priority(dsl::with_attributes(dsl::kernel<"k", scale>(dim3(4, 2), 32, px, 1.0f, 1),
                                              {.cluster = dim3(2, 2, 1), .cooperative = true,
                                               .mem_sync_domain = cudaLaunchMemSyncDomainRemote,
                                               .shared_carveout = 25, .access_policy = window}),
                         3),
      dsl::kernel<"plain", scale>(4, 32, px, 2.0f, 1),
      dsl::with_attributes(dsl::kernel<"carved", scale>(4, 32, px, 3.0f, 1), {.shared_carveout = 0}),
      dsl::edge<"k", "plain">, dsl::edge<"plain", "carved">);
  const auto by_dsl = record([&] { return dsl::instantiate(g, px = dev_x); });
  const auto by_builder = record([&] {
    const cudag::binding binds[] = {cudag::bind("x", dev_x)};
    return cudag::instantiate(with_each_by_builder(window), binds);
  });
  EXPECT_EQ(by_dsl, by_builder);
  EXPECT_NE(by_dsl.first.find("attribute=1 access_policy=" +
                              std::to_string(reinterpret_cast<std::uintptr_t>(dev_y)) + ",4096,0.5,2,1"),
            std::string::npos)
      << by_dsl.first;
  EXPECT_TRUE(cudag::same_launch_attributes(
      std::get<cudag::kernel_node>(dsl::to_spec(g).nodes[0].params),
      std::get<cudag::kernel_node>(with_each_by_builder(window).nodes[0].params)));
}

/// What declaring a node with attributes `a` at run time throws, or "".
std::string run_time_refusal(dim3 grid, const cudag::launch_attributes& a) {
  try {
    (void)dsl::with_attributes(dsl::kernel<"rows", scale>(grid, 32, px, 1.0f, 1), a);
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "rows");
    return e.what();
  }
  return "";
}

/// What check() says of the builder's twin, or "".
std::string check_refusal(dim3 grid, const cudag::launch_attributes& a) {
  cudag::builder b("g");
  cudag::launch_config config = cudag::launch(grid, 32);
  config.attributes = a;
  b.kernel("rows", cudag::kernel_of(&scale, ""), config, b.param<float*>("x"), 1.0f, 1);
  try {
    cudag::check(b.build());
  } catch (const cudag::error& e) {
    return e.what();
  }
  return "";
}

TEST(DslLaunchAttributes, AGraphMadeAtRunTimeRefusesWhatCheckRefusesWithItsMessage) {
  const struct {
    dim3 grid;
    cudag::launch_attributes attributes;
    const char* said;
  } cases[] = {
      {dim3(6), {.cluster = dim3(4, 1, 1)}, "kernel node 'rows' has a cluster of 4x1x1 blocks, which does not divide its grid of 6x1x1 blocks"},
      {dim3(16, 2), {.cluster = dim3(8, 2, 1)}, "kernel node 'rows' has a cluster of 8x2x1 = 16 blocks; the portable limit is 8 blocks a cluster"},
      {dim3(4), {.cluster = dim3(2, 0, 1)}, "every dimension must be at least 1"},
      {dim3(4), {.shared_carveout = 101}, "prefers a shared-memory carveout of 101%"},
      {dim3(4), {.access_policy = {nullptr, 4096}}, "has an access-policy window of 4096 bytes at a null address"},
      {dim3(4), {.access_policy = {dev_y, 4096, 2.0f}}, "whose hit ratio 2 is not between 0 and 1"},
  };
  for (const auto& c : cases) {
    const std::string dsl_said = run_time_refusal(c.grid, c.attributes);
    EXPECT_NE(dsl_said.find(c.said), std::string::npos) << dsl_said;
    // check() says the same of the builder's twin (its first message).
    EXPECT_NE(check_refusal(c.grid, c.attributes).find(dsl_said), std::string::npos)
        << check_refusal(c.grid, c.attributes);
  }
  EXPECT_EQ(run_time_refusal(dim3(8), {.cluster = dim3(4, 1, 1), .shared_carveout = 100}), "");
}

TEST(DslLaunchAttributes, AClusterOverAGridThatFollowsAParameterIsRefused) {
  try {
    (void)dsl::with_attributes(dsl::kernel<"over", scale>(dsl::blocks_for(pn, 256), 256, px, 1.0f, pn),
                               {.cluster = dim3(2, 1, 1)});
    FAIL() << "a cluster over a counted grid was declared";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel node 'over' has a cluster of 2x1x1 blocks, and its grid's x "
                                         "follows a parameter"),
              std::string::npos)
        << e.what();
  }
  // In y, over a literal: fine.
  EXPECT_NO_THROW((void)dsl::with_attributes(
      dsl::kernel<"over", scale>(dsl::dims(dsl::blocks_for(pn, 256), 2), 256, px, 1.0f, pn),
      {.cluster = dim3(1, 2, 1)}));
}

TEST(DslLaunchAttributes, ACooperativeGridIsJudgedAtLoweringAndAtEveryRebind) {
  constexpr auto g = dsl::graph(dsl::with_attributes(
      dsl::kernel<"k", scale>(dsl::blocks_for(pn, 256), 256, px, 1.0f, pn), {.cooperative = true}));
  cudag::native::recorder rec;
  rec.set_occupancy(1, 100);
  try {
    (void)dsl::instantiate(g, px = dev_x, pn = 101 * 256);
    FAIL() << "101 cooperative blocks were lowered";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "k");
    EXPECT_NE(std::string(e.what()).find("cooperative launch of 101 blocks, but at most 100"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  auto e = dsl::instantiate(g, px = dev_x, pn = 100 * 256);
  const std::string before = rec.exec_state(e.native_exec());
  try {
    e.rebind(pn = 100 * 256 + 1);
    FAIL() << "a rebind to 101 cooperative blocks was taken";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "k");
    EXPECT_NE(std::string(err.what()).find("cooperative launch of 101 blocks"), std::string::npos) << err.what();
  }
  EXPECT_EQ(rec.exec_state(e.native_exec()), before);
  e.rebind(pn = 50 * 256);
  EXPECT_NE(rec.exec_state(e.native_exec()), before);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

}  // namespace
