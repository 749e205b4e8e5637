// Shape families without a GPU: launch dimensions that follow parameters
// (shape rules), reshape, and update by name, each asserted as the exact
// native calls the recorder saw.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/dot.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void layer(const float* in, float* out, int batch, int features) {
  (void)in, (void)out, (void)batch, (void)features;
}
void other_layer(const float* in, float* out, int batch, int features) {
  (void)in, (void)out, (void)batch, (void)features;
}

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&layer, "layer");
  rec.name_kernel(&other_layer, "other_layer");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
}

/// Three layers whose grids follow the batch: grid.x = ceil(batch / 16),
/// grid.y fixed at 4; the middle one also takes shared memory per row.
cudag::graph_spec mlp(bool reversed_declarations = false, int literal_features = 64) {
  cudag::builder b("mlp");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto batch = b.param<int>("batch");
  auto shape = cudag::launch(dim3(1, 4), dim3(16, 16)).follow(cudag::launch_dim::grid_x, batch, 1, 16);
  auto wide = cudag::launch(dim3(1, 4), dim3(16, 16))
                  .follow(cudag::launch_dim::grid_x, batch, 1, 16)
                  .follow(cudag::launch_dim::shared_bytes, batch, 4);
  if (!reversed_declarations) {
    auto l1 = b.kernel("l1", &layer, shape, x, y, batch, literal_features);
    auto l2 = b.kernel("l2", &layer, wide, y, x, batch, 64);
    auto l3 = b.kernel("l3", &layer, shape, x, y, batch, 64);
    b.edge(l1, l2);
    b.edge(l2, l3);
  } else {
    auto l3 = b.kernel("l3", &layer, shape, x, y, batch, 64);
    auto l2 = b.kernel("l2", &layer, wide, y, x, batch, 64);
    auto l1 = b.kernel("l1", &layer, shape, x, y, batch, literal_features);
    b.edge(l1, l2);
    b.edge(l2, l3);
  }
  return b.build();
}

std::vector<cudag::binding> at_batch(int batch) {
  return {cudag::bind("x", dev_x), cudag::bind("y", dev_y), cudag::bind("batch", batch)};
}

TEST(ShapeRules, LaunchDimensionsFollowTheParameterAtLowering) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  EXPECT_EQ(lines(rec.calls_starting("add_kernel_node")),
            "add_kernel_node n1 g1 deps=[] layer grid=(3,4,1) block=(16,16,1) shared=0 "
            "args=[x, y, 0x28, 0x40]\n"
            "add_kernel_node n2 g1 deps=[n1] layer grid=(3,4,1) block=(16,16,1) shared=160 "
            "args=[y, x, 0x28, 0x40]\n"
            "add_kernel_node n3 g1 deps=[n2] layer grid=(3,4,1) block=(16,16,1) shared=0 "
            "args=[x, y, 0x28, 0x40]\n");
  // Every node follows "batch": it reads the parameter.
  EXPECT_EQ(e.readers_of("batch"), (std::vector<std::string>{"l1", "l2", "l3"}));
}

TEST(ShapeRules, ReshapeSendsNewLaunchesThroughOneWholeUpdate) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  rec.clear();
  const cudag::binding to_256[] = {cudag::bind("batch", 256)};
  // Three of three nodes change their grid: template setters + one update.
  EXPECT_EQ(e.reshape(to_256), cudag::rebind_path::whole_graph_update);
  EXPECT_EQ(lines(rec.calls()),
            "kernel_node_set_params n1 layer grid=(16,4,1) block=(16,16,1) shared=0 "
            "args=[x, y, 0x100, 0x40]\n"
            "kernel_node_set_params n2 layer grid=(16,4,1) block=(16,16,1) shared=1024 "
            "args=[y, x, 0x100, 0x40]\n"
            "kernel_node_set_params n3 layer grid=(16,4,1) block=(16,16,1) shared=0 "
            "args=[x, y, 0x100, 0x40]\n"
            "exec_update x1 from g1\n");
  rec.clear();
  // The same shape again: nothing to send.
  EXPECT_EQ(e.reshape(to_256), cudag::rebind_path::none);
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // An explicit policy wins over the reshape's own choice.
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  EXPECT_EQ(e.reshape(cudag::bind("batch", 1)), cudag::rebind_path::node_setters);
  EXPECT_EQ(rec.calls_starting("exec_kernel_node_set_params").size(), 3u) << rec.transcript();
  EXPECT_NE(rec.calls()[0].find("grid=(1,4,1)"), std::string::npos) << rec.calls()[0];
}

// A reshape computes one launch for kernels in a row that follow the same
// rules from the same base launch; a kernel whose base block, grid or shared
// memory differs, or whose rules differ, keeps its own launch.
TEST(ShapeRules, KernelsWithTheSameRulesShareALaunchOnlyFromTheSameBase) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder b("bases");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto batch = b.param<int>("batch");
  const auto from = [&](dim3 grid, dim3 block, unsigned shared) {
    return cudag::launch(grid, block, shared).follow(cudag::launch_dim::grid_x, batch, 1, 16);
  };
  const auto by_32 =
      cudag::launch(dim3(1, 2), dim3(32), 8).follow(cudag::launch_dim::grid_x, batch, 1, 32);
  auto a1 = b.kernel("a1", &layer, from(dim3(1, 4), dim3(16), 0), x, y, batch, 1);
  auto a2 = b.kernel("a2", &layer, from(dim3(1, 4), dim3(16), 0), x, y, batch, 2);
  auto block = b.kernel("block", &layer, from(dim3(1, 4), dim3(32), 0), x, y, batch, 3);
  auto grid = b.kernel("grid", &layer, from(dim3(1, 2), dim3(32), 0), x, y, batch, 4);
  auto shared = b.kernel("shared", &layer, from(dim3(1, 2), dim3(32), 8), x, y, batch, 5);
  auto rule = b.kernel("rule", &layer, by_32, x, y, batch, 6);
  auto a3 = b.kernel("a3", &layer, from(dim3(1, 4), dim3(16), 0), x, y, batch, 7);
  b.chain(a1, a2, block, grid, shared, rule, a3);
  auto e = cudag::instantiate(b.build(), at_batch(64));
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  rec.clear();
  EXPECT_EQ(e.reshape(cudag::bind("batch", 640)), cudag::rebind_path::node_setters);
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 layer grid=(40,4,1) block=(16,1,1) shared=0 "
            "args=[x, y, 0x280, 0x1]\n"
            "exec_kernel_node_set_params x1 n2 layer grid=(40,4,1) block=(16,1,1) shared=0 "
            "args=[x, y, 0x280, 0x2]\n"
            "exec_kernel_node_set_params x1 n3 layer grid=(40,4,1) block=(32,1,1) shared=0 "
            "args=[x, y, 0x280, 0x3]\n"
            "exec_kernel_node_set_params x1 n4 layer grid=(40,2,1) block=(32,1,1) shared=0 "
            "args=[x, y, 0x280, 0x4]\n"
            "exec_kernel_node_set_params x1 n5 layer grid=(40,2,1) block=(32,1,1) shared=8 "
            "args=[x, y, 0x280, 0x5]\n"
            "exec_kernel_node_set_params x1 n6 layer grid=(20,2,1) block=(32,1,1) shared=8 "
            "args=[x, y, 0x280, 0x6]\n"
            "exec_kernel_node_set_params x1 n7 layer grid=(40,4,1) block=(16,1,1) shared=0 "
            "args=[x, y, 0x280, 0x7]\n")
      << rec.transcript();
}

TEST(ShapeRules, AShapeCudaCannotLaunchIsRefusedBeforeAnythingChanges) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  rec.clear();
  // shared_bytes = batch * 4 fits; grid.x = ceil(batch / 16) exceeds 2^31 - 1.
  try {
    (void)e.reshape(cudag::bind("batch", 2147483647));
    // 2^31-1 / 16 fits; push the shared bytes past 32 bits instead.
    FAIL() << "expected a refusal";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "l2");
    EXPECT_EQ(std::string(err.what()),
              "kernel node 'l2': shape rule shared_bytes = ceil(batch * 4 / 1) gives more than "
              "4294967295 with batch = 2147483647, CUDA's limit");
  }
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // The exec kept its shape: the next change starts from batch = 40.
  EXPECT_EQ(e.reshape(cudag::bind("batch", 40)), cudag::rebind_path::none);
}

TEST(ShapeRules, CheckRefusesRulesItCannotApply) {
  const auto refused = [](auto&& configure) {
    cudag::builder b("g");
    auto x = b.param<float*>("x");
    auto n = b.param<int>("n");
    auto f = b.param<float>("f");
    cudag::launch_config c = cudag::launch(dim3(1), dim3(32));
    configure(c, n, f);
    b.kernel("k", &layer, c, x, x, n, 1);
    try {
      cudag::check(b.build());
    } catch (const cudag::check_error& e) {
      EXPECT_EQ(e.nodes(), std::vector<std::string>{"k"});
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused([](auto& c, auto& n, auto&) { c.follow(cudag::launch_dim::block_x, n, 1, 0); }),
            "kernel node 'k': shape rule block.x = ceil(n * 1 / 0) has a divisor of 0");
  EXPECT_EQ(refused([](auto& c, auto& n, auto&) {
              c.follow(cudag::launch_dim::grid_y, n).follow(cudag::launch_dim::grid_y, n, 2);
            }),
            "kernel node 'k': shape rule grid.y = ceil(n * 2 / 1) sets grid.y, which another rule "
            "of the node already sets");
  EXPECT_EQ(refused([](auto& c, auto&, auto&) {
              c.shape_rules.push_back(cudag::shape_rule{cudag::launch_dim::grid_x, "f"});
            }),
            "kernel node 'k': shape rule grid.x = ceil(f * 1 / 1) reads parameter 'f' of type "
            "float, which is not an integral type");
  EXPECT_EQ(refused([](auto& c, auto&, auto&) {
              c.shape_rules.push_back(cudag::shape_rule{cudag::launch_dim::grid_z, "batch"});
            }),
            "kernel node 'k': shape rule grid.z = ceil(batch * 1 / 1) reads parameter 'batch', "
            "which is not declared in its graph or an enclosing one");
  // A zero block dimension is fine when a rule sets it.
  EXPECT_EQ(refused([](auto& c, auto& n, auto&) {
              c.block = dim3(0);
              c.follow(cudag::launch_dim::block_x, n);
            }),
            "accepted");
}

/// One kernel whose grid follows "rows" and "cols" (x from the first
/// named, y from the second), with a node before it that follows nothing.
cudag::graph_spec two_axis(bool rows_on_x) {
  cudag::builder b("two_axis");
  auto x = b.param<float*>("x");
  auto rows = b.param<int>("rows");
  auto cols = b.param<int>("cols");
  auto lead = b.kernel("lead", &layer, cudag::launch(dim3(1), dim3(32)), x, x, 1, 1);
  cudag::launch_config tile = cudag::launch(dim3(1), dim3(16));
  if (rows_on_x)
    tile.follow(cudag::launch_dim::grid_x, rows, 1, 16).follow(cudag::launch_dim::grid_y, cols, 1, 8);
  else
    tile.follow(cudag::launch_dim::grid_x, cols, 1, 16).follow(cudag::launch_dim::grid_y, rows, 1, 8);
  auto t = b.kernel("tile", &layer, tile, x, x, rows, cols);
  b.edge(lead, t);
  return b.build();
}

TEST(ShapeRules, ARuleReadsItsOwnParameterAfterAnUpdateMovedTheRules) {
  cudag::native::recorder rec;
  name_everything(rec);
  const auto at = [](int rows, int cols) {
    return std::vector<cudag::binding>{cudag::bind("x", dev_x), cudag::bind("rows", rows),
                                       cudag::bind("cols", cols)};
  };
  auto e = cudag::instantiate(two_axis(true), at(64, 64));
  e.set_rebind_policy(cudag::rebind_policy::node_setters);
  (void)e.reshape(cudag::bind("rows", 160));  // grid.x = ceil(160 / 16)
  EXPECT_NE(lines(rec.calls()).find("grid=(10,8,1)"), std::string::npos) << rec.transcript();
  // The same parameters, the rules swapped between the axes.
  e.update(two_axis(false), at(160, 64));
  rec.clear();
  (void)e.reshape(cudag::bind("rows", 320));  // now grid.y = ceil(320 / 8)
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n2 layer grid=(4,40,1) block=(16,1,1) shared=0 "
            "args=[x, x, 0x140, 0x40]\n")
      << rec.transcript();
  rec.clear();
  (void)e.reshape(cudag::bind("cols", 32));  // grid.x = ceil(32 / 16)
  EXPECT_NE(lines(rec.calls()).find("grid=(2,40,1)"), std::string::npos) << rec.transcript();
}

TEST(ShapeRules, PicturesShowTheRules) {
  const std::string dot = cudag::to_dot(mlp());
  EXPECT_NE(dot.find("grid.x = ceil(batch/16)"), std::string::npos) << dot;
  EXPECT_NE(dot.find("shared_bytes = ceil(batch*4)"), std::string::npos) << dot;
}

// ----------------------------------------------------------- update by name --
TEST(UpdateByName, NodesPairByNameWhateverTheDeclarationOrder) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  rec.clear();
  // The same graph declared in reverse: nothing changed, nothing sent.
  e.update(mlp(true), at_batch(40));
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // One literal changed in one node: one exec setter, for that node only.
  e.update(mlp(true, 32), at_batch(40));
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n1 layer grid=(3,4,1) block=(16,16,1) shared=0 "
            "args=[x, y, 0x28, 0x20]\n");
  rec.clear();
  // New bindings move every reader, as a rebind would.
  e.update(mlp(true, 32), at_batch(256));
  EXPECT_EQ(rec.calls_starting("kernel_node_set_params").size() +
                rec.calls_starting("exec_kernel_node_set_params").size(),
            3u)
      << rec.transcript();
  // The exec reads its new spec: a later rebind starts from it.
  EXPECT_EQ(e.spec().nodes.front().name, "l3");
  rec.clear();
  EXPECT_EQ(e.rebind("batch", 256), cudag::rebind_path::none);
}

TEST(UpdateByName, AnotherKernelIsSentWithItsNode) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  cudag::graph_spec swapped = mlp();
  std::get<cudag::kernel_node>(swapped.nodes[1].params).function =
      reinterpret_cast<const void*>(&other_layer);
  rec.clear();
  e.update(swapped, at_batch(40));
  EXPECT_EQ(lines(rec.calls()),
            "exec_kernel_node_set_params x1 n2 other_layer grid=(3,4,1) block=(16,16,1) shared=160 "
            "args=[y, x, 0x28, 0x40]\n");
}

TEST(UpdateByName, ATopologyChangeIsRefusedNamingTheNode) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(mlp(), at_batch(40));
  rec.clear();
  // l3 also waits for l1 directly: another topology. (Dropping l2 -> l3
  // instead would be refused first as a race: l2 writes x, which l3 reads.)
  cudag::graph_spec more = mlp();
  more.nodes[2].deps.push_back("l1");
  try {
    e.update(more, at_batch(40));
    FAIL() << "expected a refusal";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "l3");
    EXPECT_EQ(std::string(err.what()),
              "update: graph 'mlp' cannot be updated in place: node 'l3' changes its dependencies or their kinds; "
              "CUDA updates only a graph of the same topology (instantiate again, or call "
              "update_or_reinstantiate)\nwhat changed:\nadded edge 'l1' -> 'l3'");
  }
  cudag::graph_spec renamed = mlp();
  renamed.nodes[2].name = "l4";
  try {
    e.update(renamed, at_batch(40));
    FAIL() << "expected a refusal";
  } catch (const cudag::error& err) {
    EXPECT_EQ(err.node(), "l3");
    EXPECT_NE(std::string(err.what()).find("node 'l3' is not in the changed spec"),
              std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("\nwhat changed:\nadded l4: kernel\n"), std::string::npos)
        << err.what();
  }
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // update_or_reinstantiate takes the refusal and instantiates anew.
  EXPECT_TRUE(e.update_or_reinstantiate(renamed, at_batch(40)));
  EXPECT_EQ(rec.calls_starting("instantiate").size(), 1u) << rec.transcript();
  EXPECT_EQ(e.readers_of("batch"), (std::vector<std::string>{"l1", "l2", "l4"}));
}

TEST(UpdateByName, NestedChangesGoThroughOneWholeUpdate) {
  const auto with_inner = [](int features) {
    cudag::builder inner("inner");
    auto y = inner.param<float*>("y");
    auto batch = inner.param<int>("batch");
    inner.kernel("deep", &layer, cudag::launch(dim3(2), dim3(32)), y, y, batch, features);
    cudag::builder b("outer");
    auto x = b.param<float*>("x");
    auto yy = b.param<float*>("y");
    auto bb = b.param<int>("batch");
    auto first = b.kernel("first", &layer, cudag::launch(dim3(1), dim3(32)), x, yy, bb, 1);
    auto stage = b.child("stage", inner.build());
    b.edge(first, stage);
    return b.build();
  };
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(with_inner(8), at_batch(4));
  rec.clear();
  e.update(with_inner(8), at_batch(4));
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // Only the nested kernel changed: exec setters cannot reach it.
  e.update(with_inner(9), at_batch(4));
  EXPECT_EQ(rec.calls_starting("kernel_node_set_params").size(), 1u) << rec.transcript();
  EXPECT_NE(rec.calls_starting("kernel_node_set_params")[0].find("0x9]"), std::string::npos)
      << rec.transcript();
  EXPECT_EQ(rec.calls_starting("exec_update").size(), 1u) << rec.transcript();
  EXPECT_TRUE(rec.calls_starting("exec_kernel_node_set_params").empty()) << rec.transcript();
}

TEST(UpdateByName, HostAndMemsetNodesChangeInPlace) {
  int seen = 0;
  const auto spec_with = [&](int add, std::size_t count) {
    cudag::builder b("mixed");
    auto y = b.param<float*>("y");
    auto clear = b.memset("clear", y, 0, count);
    auto report = b.host("report", [&seen, add](int v) { seen = v + add; }, 5);
    b.edge(clear, report);
    return b.build();
  };
  cudag::native::recorder rec;
  name_everything(rec);
  const cudag::binding binds[] = {cudag::bind("y", dev_y)};
  auto e = cudag::instantiate(spec_with(1, 64), binds);
  e.launch(nullptr);
  EXPECT_EQ(seen, 6);
  rec.clear();
  // A new callable is a change of the host node; the memset did not change.
  e.update(spec_with(10, 64), binds);
  EXPECT_EQ(rec.calls().size(), 1u) << rec.transcript();
  EXPECT_EQ(rec.calls_starting("exec_host_node_set_params").size(), 1u) << rec.transcript();
  e.launch(nullptr);
  EXPECT_EQ(seen, 15);
  rec.clear();
  e.update(spec_with(10, 32), binds);  // a new width (and, built anew, a new callable)
  EXPECT_EQ(rec.calls_starting("exec_memset_node_set_params").size(), 1u) << rec.transcript();
  EXPECT_NE(rec.calls_starting("exec_memset_node_set_params")[0].find("width=32"), std::string::npos)
      << rec.transcript();
}

}  // namespace
