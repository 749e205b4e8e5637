// Launch attributes of kernel nodes beyond priority (cluster, cooperative,
// memory-sync domain, shared-memory carveout, access-policy window): what the builder's launch
// helpers set, what check() refuses and how it says so, the exact native
// calls lowering makes, and what update, the exec cache and diff make of a
// change. Against the recorder; the effect on a device is in
// test_launch_attributes_gpu.cu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/diff.hpp"
#include "cudag/eager.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

/// One kernel "k" over x, launched as `config` says.
cudag::graph_spec one_kernel(const cudag::launch_config& config) {
  cudag::builder b("g");
  b.kernel("k", &scale, config, b.param<float*>("x"), 1.0f, 1);
  return b.build();
}

/// check()'s message for `spec`, or "" when it passes.
std::string refusal(const cudag::graph_spec& spec) {
  try {
    cudag::check(spec);
  } catch (const cudag::error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const cudag::binding binds[] = {cudag::bind("x", dev_x)};

TEST(LaunchAttributes, TheBuilderSetsEachOnTheNode) {
  const cudag::graph_spec spec = one_kernel(cudag::launch(dim3(4, 2), 64)
                                                .cluster(2, 2)
                                                .cooperative()
                                                .mem_sync_domain(cudaLaunchMemSyncDomainRemote)
                                                .shared_carveout(50)
                                                .access_policy(dev_y, 1 << 20, 0.5f));
  const auto& k = std::get<cudag::kernel_node>(spec.nodes[0].params);
  EXPECT_EQ(k.cluster.x, 2u);
  EXPECT_EQ(k.cluster.y, 2u);
  EXPECT_EQ(k.cluster.z, 1u);
  EXPECT_TRUE(k.cooperative);
  EXPECT_EQ(k.mem_sync_domain, cudaLaunchMemSyncDomainRemote);
  EXPECT_EQ(k.shared_carveout, 50);
  EXPECT_EQ(k.access_policy, (cudag::access_policy_window{dev_y, 1 << 20, 0.5f, cudaAccessPropertyPersisting,
                                                          cudaAccessPropertyStreaming}));
  EXPECT_EQ(refusal(spec), "");
  // Nothing set: nothing beyond the grid.
  const cudag::graph_spec plain_spec = one_kernel(cudag::launch(4, 64));
  const auto& plain = std::get<cudag::kernel_node>(plain_spec.nodes[0].params);
  EXPECT_FALSE(cudag::has_cluster(plain));
  EXPECT_EQ(cudag::describe_launch_attributes(plain), "none");
}

TEST(LaunchAttributes, CheckRefusesAClusterThatDoesNotDivideTheGrid) {
  const std::string m = refusal(one_kernel(cudag::launch(dim3(6, 3), 32).cluster(4)));
  EXPECT_TRUE(has(m, "kernel node 'k' has a cluster of 4x1x1 blocks, which does not divide its grid of 6x3x1 blocks"))
      << m;
  EXPECT_TRUE(has(refusal(one_kernel(cudag::launch(dim3(6, 3), 32).cluster(2, 2))), "does not divide"));
  EXPECT_TRUE(has(refusal(one_kernel(cudag::launch(dim3(6, 3, 3), 32).cluster(1, 1, 2))), "does not divide"));
  EXPECT_EQ(refusal(one_kernel(cudag::launch(dim3(6, 3), 32).cluster(2, 3))), "");
}

TEST(LaunchAttributes, CheckRefusesAClusterOfMoreThanEightBlocks) {
  const std::string m = refusal(one_kernel(cudag::launch(dim3(16, 2), 32).cluster(8, 2)));
  EXPECT_TRUE(has(m, "kernel node 'k' has a cluster of 8x2x1 = 16 blocks; the portable limit is 8 blocks a cluster"))
      << m;
  EXPECT_EQ(refusal(one_kernel(cudag::launch(dim3(16, 2), 32).cluster(8))), "");
  EXPECT_TRUE(has(refusal(one_kernel(cudag::launch(dim3(16, 2), 32).cluster(2, 0))),
                  "every dimension must be at least 1 (0x0x0: no cluster)"));
}

TEST(LaunchAttributes, CheckRefusesAClusterOverAGridThatFollowsAParameter) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  b.kernel("k", &scale, cudag::launch_over(n, 256).cluster(2), x, 1.0f, n);
  const std::string m = refusal(b.build());
  EXPECT_TRUE(has(m, "kernel node 'k' has a cluster of 2x1x1 blocks, and its grid's x follows a parameter"))
      << m;
  // A shape rule on y, a cluster of 2 in y: refused; a cluster in x only: fine.
  cudag::builder c("g");
  auto cx = c.param<float*>("x");
  auto cn = c.param<int>("n");
  c.kernel("k", &scale, cudag::launch(dim3(2, 1), 32).follow(cudag::launch_dim::grid_y, cn).cluster(1, 2),
           cx, 1.0f, cn);
  EXPECT_TRUE(has(refusal(c.build()), "its grid's y follows a parameter"));
  cudag::builder d("g");
  auto dx = d.param<float*>("x");
  auto dn = d.param<int>("n");
  d.kernel("k", &scale, cudag::launch(dim3(2, 1), 32).follow(cudag::launch_dim::grid_y, dn).cluster(2),
           dx, 1.0f, dn);
  EXPECT_EQ(refusal(d.build()), "");
}

TEST(LaunchAttributes, CheckRefusesACarveoutOverAHundredPercent) {
  const std::string m = refusal(one_kernel(cudag::launch(1, 32).shared_carveout(101)));
  EXPECT_TRUE(has(m, "kernel node 'k' prefers a shared-memory carveout of 101%; a carveout is 0 to 100 percent"))
      << m;
  EXPECT_EQ(refusal(one_kernel(cudag::launch(1, 32).shared_carveout(100))), "");
  EXPECT_EQ(refusal(one_kernel(cudag::launch(1, 32).shared_carveout(0))), "");
}

TEST(LaunchAttributes, CheckRefusesAnAccessPolicyWindowWithoutABaseOrWithABadRatio) {
  std::string m = refusal(one_kernel(cudag::launch(1, 32).access_policy(nullptr, 4096)));
  EXPECT_TRUE(has(m, "kernel node 'k' has an access-policy window of 4096 bytes at a null address")) << m;
  m = refusal(one_kernel(cudag::launch(1, 32).access_policy(dev_y, 4096, 1.5f)));
  EXPECT_TRUE(has(m, "kernel node 'k' has an access-policy window whose hit ratio 1.5")) << m;
  EXPECT_TRUE(has(refusal(one_kernel(cudag::launch(1, 32).access_policy(dev_y, 4096, -0.25f))),
                  "is not between 0 and 1"));
  EXPECT_EQ(refusal(one_kernel(cudag::launch(1, 32).access_policy(dev_y, 4096, 0.0f))), "");
  EXPECT_EQ(refusal(one_kernel(cudag::launch(1, 32).access_policy(dev_y, 4096, 1.0f))), "");
  // No bytes, no window: nothing to refuse.
  EXPECT_EQ(refusal(one_kernel(cudag::launch(1, 32).access_policy(nullptr, 0))), "");
}

TEST(LaunchAttributes, ACooperativeGridLargerThanCanBeResidentIsRefusedAtLowering) {
  cudag::native::recorder rec;
  rec.name_kernel(&scale, "scale");
  rec.set_occupancy(2, 132);  // 264 blocks at once
  EXPECT_NO_THROW((void)cudag::instantiate(one_kernel(cudag::launch(dim3(132, 2), 256).cooperative()), binds));
  EXPECT_EQ(rec.calls_starting("occupancy_max_active_blocks"),
            std::vector<std::string>{"occupancy_max_active_blocks scale threads=256 shared=0 -> 2"});
  rec.clear();
  try {
    (void)cudag::instantiate(one_kernel(cudag::launch(265, dim3(16, 16), 512).cooperative()), binds);
    FAIL() << "a cooperative grid of 265 blocks was lowered";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "k");
    EXPECT_EQ(err.code(), cudaErrorCooperativeLaunchTooLarge);
    EXPECT_TRUE(has(err.what(), "kernel node 'k' is a cooperative launch of 265 blocks, but at most 264 can be "
                                "resident at once on device 0 (2 a multiprocessor x 132 multiprocessors, at "
                                "256 threads and 512 shared bytes a block)"))
        << err.what();
  }
  EXPECT_EQ(rec.live_graphs(), 0u);
  // Not cooperative: never asked.
  rec.clear();
  (void)cudag::instantiate(one_kernel(cudag::launch(1000, 256)), binds);
  EXPECT_TRUE(rec.calls_starting("occupancy_max_active_blocks").empty());
}

TEST(LaunchAttributes, ACooperativeGridThatFollowsAParameterIsJudgedAtEveryRebind) {
  cudag::native::recorder rec;
  rec.set_occupancy(1, 100);
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  b.kernel("k", &scale, cudag::launch_over(n, 256).cooperative(), x, 1.0f, n);
  const cudag::binding first[] = {cudag::bind("x", dev_x), cudag::bind("n", 100 * 256)};
  auto e = cudag::instantiate(b.build(), first);
  const std::string before = rec.exec_state(e.native_exec());
  try {
    e.rebind("n", 100 * 256 + 1);
    FAIL() << "a rebind to 101 cooperative blocks was taken";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "k");
    EXPECT_TRUE(has(err.what(), "cooperative launch of 101 blocks, but at most 100")) << err.what();
  }
  EXPECT_EQ(rec.exec_state(e.native_exec()), before);
  e.rebind("n", 50 * 256);
  EXPECT_NE(rec.exec_state(e.native_exec()), before);
}

TEST(LaunchAttributes, EachIsSentAfterTheNodeIsAdded) {
  cudag::native::recorder rec;
  auto e = cudag::instantiate(one_kernel(cudag::launch(dim3(4, 2), 32)
                                             .cluster(2, 2)
                                             .cooperative()
                                             .mem_sync_domain(cudaLaunchMemSyncDomainRemote)
                                             .shared_carveout(25)
                                             .access_policy(dev_y, 8192, 0.75f, cudaAccessPropertyPersisting,
                                                            cudaAccessPropertyNormal)),
                              binds);
  EXPECT_EQ(rec.calls_starting("kernel_node_set_attribute"),
            (std::vector<std::string>{
                "kernel_node_set_attribute n1 attribute=4 cluster=2,2,1",
                "kernel_node_set_attribute n1 attribute=2 cooperative=1",
                "kernel_node_set_attribute n1 attribute=10 mem_sync_domain=1",
                "kernel_node_set_attribute n1 attribute=14 shared_carveout=25",
                "kernel_node_set_attribute n1 attribute=1 access_policy=" +
                    std::to_string(reinterpret_cast<std::uintptr_t>(dev_y)) + ",8192,0.75,2,0"}));
  // After the node is added, before the graph is instantiated.
  const std::vector<std::string> calls = rec.calls();
  std::size_t add = calls.size(), first = calls.size(), inst = calls.size();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].starts_with("add_kernel_node") && add == calls.size()) add = i;
    if (calls[i].starts_with("kernel_node_set_attribute") && first == calls.size()) first = i;
    if (calls[i].starts_with("instantiate") && inst == calls.size()) inst = i;
  }
  EXPECT_LT(add, first) << rec.transcript();
  EXPECT_LT(first, inst) << rec.transcript();
  // None set: none sent.
  rec.clear();
  auto plain = cudag::instantiate(one_kernel(cudag::launch(4, 32)), binds);
  EXPECT_TRUE(rec.calls_starting("kernel_node_set_attribute").empty()) << rec.transcript();
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(LaunchAttributes, AnUpdateThatChangesOneIsRefusedNamingTheNode) {
  cudag::native::recorder rec;
  auto e = cudag::instantiate(one_kernel(cudag::launch(4, 32)), binds);
  const cudag::launch_config changes[] = {
      cudag::launch(4, 32).cluster(2), cudag::launch(4, 32).cooperative(),
      cudag::launch(4, 32).mem_sync_domain(cudaLaunchMemSyncDomainRemote),
      cudag::launch(4, 32).shared_carveout(10), cudag::launch(4, 32).access_policy(dev_y, 4096, 0.5f)};
  const std::string said[] = {
      "(none -> cluster 2x1x1)", "(none -> cooperative)", "(none -> memory-sync domain remote)",
      "(none -> shared carveout 10%)",
      "(none -> access-policy window " + cudag::describe_access_policy({dev_y, 4096, 0.5f}) + ")"};
  for (std::size_t i = 0; i < std::size(changes); ++i) {
    try {
      e.update(one_kernel(changes[i]), binds);
      ADD_FAILURE() << "change " << i << " was dropped";
    } catch (const cudag::error& err) {
      EXPECT_EQ(err.node(), "k");
      EXPECT_TRUE(has(err.what(), std::string("kernel node 'k' changes its launch attributes ") + said[i]))
          << err.what();
    }
  }
  rec.clear();
  EXPECT_TRUE(e.update_or_reinstantiate(one_kernel(changes[0]), binds));
  EXPECT_EQ(rec.calls_starting("kernel_node_set_attribute"),
            std::vector<std::string>{"kernel_node_set_attribute n2 attribute=4 cluster=2,1,1"})
      << rec.transcript();
}

TEST(LaunchAttributes, AnotherAttributeIsAnotherTopologyToTheCache) {
  const cudag::graph_spec plain = one_kernel(cudag::launch(4, 32));
  for (const cudag::launch_config& c :
       {cudag::launch(4, 32).cluster(2), cudag::launch(4, 32).cooperative(),
        cudag::launch(4, 32).mem_sync_domain(cudaLaunchMemSyncDomainRemote),
        cudag::launch(4, 32).shared_carveout(10), cudag::launch(4, 32).access_policy(dev_y, 4096)}) {
    EXPECT_NE(cudag::topology_key(plain), cudag::topology_key(one_kernel(c)));
  }
  // Each part of a window is the key's.
  const auto window = [](const void* base, std::size_t bytes, float ratio, cudaAccessProperty hit,
                         cudaAccessProperty miss) {
    return cudag::topology_key(one_kernel(cudag::launch(4, 32).access_policy(base, bytes, ratio, hit, miss)));
  };
  const auto reference =
      window(dev_y, 4096, 0.5f, cudaAccessPropertyPersisting, cudaAccessPropertyStreaming);
  EXPECT_NE(reference, window(dev_x, 4096, 0.5f, cudaAccessPropertyPersisting, cudaAccessPropertyStreaming));
  EXPECT_NE(reference, window(dev_y, 8192, 0.5f, cudaAccessPropertyPersisting, cudaAccessPropertyStreaming));
  EXPECT_NE(reference, window(dev_y, 4096, 0.25f, cudaAccessPropertyPersisting, cudaAccessPropertyStreaming));
  EXPECT_NE(reference, window(dev_y, 4096, 0.5f, cudaAccessPropertyNormal, cudaAccessPropertyStreaming));
  EXPECT_NE(reference, window(dev_y, 4096, 0.5f, cudaAccessPropertyPersisting, cudaAccessPropertyNormal));
  EXPECT_NE(cudag::topology_key(one_kernel(cudag::launch(4, 32).cluster(2))),
            cudag::topology_key(one_kernel(cudag::launch(4, 32).cluster(4))));
  EXPECT_NE(cudag::topology_key(one_kernel(cudag::launch(4, 32).shared_carveout(10))),
            cudag::topology_key(one_kernel(cudag::launch(4, 32).shared_carveout(20))));
}

TEST(LaunchAttributes, DiffReportsEachChange) {
  const cudag::graph_spec plain = one_kernel(cudag::launch(4, 32));
  EXPECT_EQ(cudag::diff(plain, one_kernel(cudag::launch(4, 32).cluster(2))).text(),
            "changed k: cluster none -> (2,1,1)\n");
  EXPECT_EQ(cudag::diff(plain, one_kernel(cudag::launch(4, 32).cooperative())).text(),
            "changed k: cooperative no -> yes\n");
  EXPECT_EQ(cudag::diff(plain, one_kernel(cudag::launch(4, 32).mem_sync_domain(cudaLaunchMemSyncDomainRemote)))
                .text(),
            "changed k: memory-sync domain default -> remote\n");
  EXPECT_EQ(cudag::diff(plain, one_kernel(cudag::launch(4, 32).shared_carveout(30))).text(),
            "changed k: shared carveout none -> 30%\n");
  EXPECT_EQ(cudag::diff(plain, one_kernel(cudag::launch(4, 32).access_policy(dev_y, 4096, 0.5f))).text(),
            "changed k: access-policy window none -> " +
                cudag::describe_access_policy({dev_y, 4096, 0.5f}) + "\n");
  EXPECT_EQ(cudag::describe_access_policy({dev_y, 4096, 0.5f, cudaAccessPropertyNormal}).substr(0, 11),
            "4096 bytes ");
  EXPECT_TRUE(has(cudag::describe_access_policy({dev_y, 4096, 0.5f, cudaAccessPropertyNormal}),
                  ", normal for 0.5 of it, else streaming"));
}

TEST(LaunchAttributes, AnEagerRunRefusesThemNamingTheNode) {
  cudag::native::recorder rec;
  try {
    (void)cudag::run_eagerly(one_kernel(cudag::launch(4, 32).cluster(2)), binds, nullptr);
    FAIL() << "an eager run dropped the cluster";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "k");
    EXPECT_TRUE(has(err.what(), "kernel node 'k' has launch attributes (cluster 2x1x1) that an eager run does not send"))
        << err.what();
  }
}

}  // namespace
