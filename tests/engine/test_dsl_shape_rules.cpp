// Shape rules written with the DSL (dims, scaled, shared_bytes) against the
// builder's follow(): the same spec, the same native calls at lowering and
// after each rebind, the same refusals. The recorder stands in for CUDA.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/diff.hpp"
#include "cudag/dsl.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"
#include "recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;
using cudag::launch_dim;

// Host functions stand in for kernels: the recorder shows their names.
void attend(const float* q, float* out, int seq, int batch) { (void)q, (void)out, (void)seq, (void)batch; }
void normalize(float* out, int seq, int batch) { (void)out, (void)seq, (void)batch; }
void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&attend, "attend");
  rec.name_kernel(&normalize, "normalize");
  rec.name_kernel(&scale, "scale");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
}

namespace dsl = cudag::dsl;
using cudag::dsl::detail::function_name_of;  // the name the DSL gives a kernel
constexpr auto q = dsl::param<"q", float*>;
constexpr auto out = dsl::param<"out", float*>;
constexpr auto seq = dsl::param<"seq", int>;
constexpr auto batch = dsl::param<"batch", int>;

// attn: grid (ceil(seq / 128), batch), block ceil(seq / 4) threads, 4 bytes
// of shared memory a position. norm: grid.y = ceil(batch / 16). scale: the
// grid rule of blocks_for, as before.
// clang-format off
constexpr auto family = dsl::graph(
    dsl::kernel<"attn", attend>(dsl::dims(dsl::blocks_for(seq, 128), batch),
                                dsl::dims(dsl::scaled(seq, 1, 4)),
                                dsl::shared_bytes(dsl::scaled(seq, 4)), q, out, seq, batch),
    dsl::kernel<"norm", normalize>(dsl::dims(4, dsl::scaled(batch, 1, 16)), dsl::dims(256),
                                   out, seq, batch),
    dsl::kernel<"scale", scale>(dsl::blocks_for(seq, 256), 256, out, 0.5f, seq),
    dsl::chain<"attn", "norm", "scale">);
// clang-format on

/// The same graph through the builder, its kernels named as the DSL names them.
cudag::graph_spec family_by_builder() {
  cudag::builder b("graph");
  auto pq = b.param<float*>("q");
  auto pout = b.param<float*>("out");
  auto pseq = b.param<int>("seq");
  auto pbatch = b.param<int>("batch");
  const auto attn_launch = cudag::launch(dim3(1), dim3(1))
                               .follow(launch_dim::grid_x, pseq, 1, 128)
                               .follow(launch_dim::grid_y, pbatch)
                               .follow(launch_dim::block_x, pseq, 1, 4)
                               .follow(launch_dim::shared_bytes, pseq, 4);
  auto attn = b.kernel("attn", cudag::kernel_of(&attend, std::string(function_name_of<attend>())),
                       attn_launch, pq, pout, pseq, pbatch);
  auto norm = b.kernel("norm",
                       cudag::kernel_of(&normalize, std::string(function_name_of<normalize>())),
                       cudag::launch(dim3(4), dim3(256)).follow(launch_dim::grid_y, pbatch, 1, 16),
                       pout, pseq, pbatch);
  auto sc = b.kernel("scale", cudag::kernel_of(&scale, std::string(function_name_of<scale>())),
                     cudag::launch_over(pseq, 256), pout, 0.5f, pseq);
  b.chain(attn, norm, sc);
  return b.build();
}

std::vector<cudag::binding> bindings(int seq_value, int batch_value) {
  return {cudag::bind("q", dev_x), cudag::bind("out", dev_y), cudag::bind("seq", seq_value),
          cudag::bind("batch", batch_value)};
}

TEST(DslShapeRules, ToSpecWritesTheBuildersShapeRules) {
  const cudag::graph_spec by_dsl = dsl::to_spec(family);
  const cudag::graph_spec by_builder = family_by_builder();
  const cudag::spec_diff d = cudag::diff(by_builder, by_dsl);
  EXPECT_TRUE(d.empty()) << d.text();
  ASSERT_EQ(by_dsl.nodes.size(), 3u);
  const auto& attn = std::get<cudag::kernel_node>(by_dsl.nodes[0].params);
  EXPECT_EQ(attn.shape_rules,
            (std::vector<cudag::shape_rule>{{launch_dim::grid_x, "seq", 1, 128},
                                            {launch_dim::grid_y, "batch", 1, 1},
                                            {launch_dim::block_x, "seq", 1, 4},
                                            {launch_dim::shared_bytes, "seq", 4, 1}}));
  EXPECT_FALSE(attn.grid_from.has_value());
  const auto& norm = std::get<cudag::kernel_node>(by_dsl.nodes[1].params);
  EXPECT_EQ(norm.grid.x, 4u);
  EXPECT_EQ(norm.block.x, 256u);
  EXPECT_EQ(norm.shape_rules,
            (std::vector<cudag::shape_rule>{{launch_dim::grid_y, "batch", 1, 16}}));
  // blocks_for as the whole grid keeps the spec's grid rule.
  const auto& sc = std::get<cudag::kernel_node>(by_dsl.nodes[2].params);
  EXPECT_EQ(sc.grid_from, (cudag::grid_rule{"seq", 256}));
  EXPECT_TRUE(sc.shape_rules.empty());
  for (std::size_t i = 0; i < by_dsl.nodes.size(); ++i)
    EXPECT_EQ(std::get<cudag::kernel_node>(by_dsl.nodes[i].params).shape_rules,
              std::get<cudag::kernel_node>(by_builder.nodes[i].params).shape_rules)
        << by_dsl.nodes[i].name;
}

// A parameter or scaled() is a grid or block of its own, in x.
constexpr auto bare = dsl::graph(dsl::kernel<"bare", scale>(batch, dsl::scaled(seq, 1, 8), out, 1.0f, seq));

TEST(DslShapeRules, AParameterAloneIsARuleInX) {
  cudag::builder b("graph");
  auto pbatch = b.param<int>("batch");
  auto pout = b.param<float*>("out");
  auto pseq = b.param<int>("seq");
  b.kernel("bare", cudag::kernel_of(&scale, std::string(function_name_of<scale>())),
           cudag::launch(dim3(1), dim3(1))
               .follow(launch_dim::grid_x, pbatch)
               .follow(launch_dim::block_x, pseq, 1, 8),
           pout, 1.0f, pseq);
  const cudag::spec_diff d = cudag::diff(b.build(), dsl::to_spec(bare));
  EXPECT_TRUE(d.empty()) << d.text();
  EXPECT_EQ(std::get<cudag::kernel_node>(dsl::to_spec(bare).nodes[0].params).shape_rules.size(), 2u);
}

TEST(DslShapeRules, LaunchesFollowTheParametersAsTheBuildersDo) {
  std::string dsl_lowered, dsl_rebound, builder_lowered, builder_rebound;
  std::vector<cudag::rebind_path> dsl_paths, builder_paths;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = dsl::instantiate(family, q = dev_x, out = dev_y, seq = 1000, batch = 3);
    dsl_lowered = rec.transcript();
    rec.clear();
    dsl_paths.push_back(e.rebind(seq = 4096));
    dsl_paths.push_back(e.rebind(batch = 40, seq = 0));
    dsl_rebound = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = cudag::instantiate(family_by_builder(), bindings(1000, 3));
    builder_lowered = rec.transcript();
    rec.clear();
    builder_paths.push_back(e.rebind("seq", 4096));
    const cudag::binding both[] = {cudag::bind("batch", 40), cudag::bind("seq", 0)};
    builder_paths.push_back(e.rebind(both));
    builder_rebound = rec.transcript();
  }
  EXPECT_EQ(dsl_lowered, builder_lowered);
  EXPECT_EQ(dsl_rebound, builder_rebound);
  EXPECT_EQ(dsl_paths, builder_paths);
  // What both recorded, by hand: seq = 1000 gives 8 blocks of 250 threads
  // and 4000 bytes; batch = 3 gives 3 rows of attn and one of norm.
  EXPECT_NE(builder_lowered.find("add_kernel_node n1 g1 deps=[] attend grid=(8,3,1) block=(250,1,1) "
                                 "shared=4000 args=[x, y, 0x3e8, 0x3]"),
            std::string::npos)
      << builder_lowered;
  EXPECT_NE(builder_lowered.find("add_kernel_node n2 g1 deps=[n1] normalize grid=(4,1,1) "
                                 "block=(256,1,1) shared=0"),
            std::string::npos)
      << builder_lowered;
  // seq = 4096: 32 blocks of 1024 threads, 16384 bytes; then seq = 0
  // launches one block of one thread and no shared memory, batch = 40 three
  // rows of norm.
  EXPECT_EQ(lines({builder_rebound.substr(0, builder_rebound.find('\n'))}),
            "exec_kernel_node_set_params x1 n1 attend grid=(32,3,1) block=(1024,1,1) shared=16384 "
            "args=[x, y, 0x1000, 0x3]\n");
  EXPECT_NE(builder_rebound.find("exec_kernel_node_set_params x1 n1 attend grid=(1,40,1) "
                                 "block=(1,1,1) shared=0 args=[x, y, 0x0, 0x28]"),
            std::string::npos)
      << builder_rebound;
  EXPECT_NE(builder_rebound.find("exec_kernel_node_set_params x1 n2 normalize grid=(4,3,1)"),
            std::string::npos)
      << builder_rebound;
  EXPECT_NE(builder_rebound.find("exec_kernel_node_set_params x1 n3 scale grid=(1,1,1)"),
            std::string::npos)
      << builder_rebound;
}

/// What `rebind` throws, as "node: message", or "accepted".
template <class Rebind>
std::string refusal(Rebind&& rebind) {
  try {
    rebind();
  } catch (const cudag::error& e) {
    return e.node() + ": " + e.what();
  }
  return "accepted";
}

TEST(DslShapeRules, AShapeCudaCannotLaunchIsRefusedAsTheBuilderRefusesIt) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto by_dsl = dsl::instantiate(family, q = dev_x, out = dev_y, seq = 1000, batch = 3);
  auto by_builder = cudag::instantiate(family_by_builder(), bindings(1000, 3));
  rec.clear();
  // block.x = ceil(seq / 4) passes 1024 threads.
  const std::string dsl_block = refusal([&] { (void)by_dsl.rebind(seq = 4100); });
  EXPECT_EQ(dsl_block, refusal([&] { (void)by_builder.rebind("seq", 4100); }));
  EXPECT_EQ(dsl_block,
            "attn: kernel node 'attn': shape rule block.x = ceil(seq * 1 / 4) gives more than 1024 "
            "with seq = 4100, CUDA's limit");
  // grid.y = batch passes 65535; rebound with seq, whose nodes change nothing either.
  const std::string dsl_grid = refusal([&] { (void)by_dsl.rebind(seq = 2048, batch = 70000); });
  const cudag::binding both[] = {cudag::bind("seq", 2048), cudag::bind("batch", 70000)};
  EXPECT_EQ(dsl_grid, refusal([&] { (void)by_builder.rebind(both); }));
  EXPECT_EQ(dsl_grid,
            "attn: kernel node 'attn': shape rule grid.y = ceil(batch * 1 / 1) gives more than 65535 "
            "with batch = 70000, CUDA's limit");
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // The DSL's exec kept every value: the next rebind starts from seq = 1000.
  EXPECT_EQ(by_dsl.rebind(seq = 1000, batch = 3), cudag::rebind_path::none);
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  // A shape refused at instantiation, naming the node.
  EXPECT_EQ(refusal([&] { (void)dsl::instantiate(family, q = dev_x, out = dev_y, seq = 1000, batch = 65536); }),
            "attn: kernel node 'attn': shape rule grid.y = ceil(batch * 1 / 1) gives more than 65535 "
            "with batch = 65536, CUDA's limit");
}

// Rules on block y and z: a block of more than 1024 threads is refused as
// the builder refuses it; an unsigned parameter with its top bit set reads
// as its value in both (2^31 rows: refused, not taken as negative and so
// one thread); 0 rows give one.
constexpr auto rows = dsl::param<"rows", unsigned>;
constexpr auto tiles = dsl::graph(dsl::kernel<"tile", scale>(dsl::dims(2, 1, 3), dsl::dims(32, rows, dsl::scaled(rows, 1, 8)),
                                                             out, 1.0f, 7));

cudag::graph_spec tiles_by_builder() {
  cudag::builder b("graph");
  auto pout = b.param<float*>("out");
  auto prows = b.param<unsigned>("rows");
  b.kernel("tile", cudag::kernel_of(&scale, std::string(function_name_of<scale>())),
           cudag::launch(dim3(2, 1, 3), dim3(32))
               .follow(launch_dim::block_y, prows)
               .follow(launch_dim::block_z, prows, 1, 8),
           pout, 1.0f, 7);
  return b.build();
}

TEST(DslShapeRules, BlockRulesAndUnsignedParametersMatchTheBuilder) {
  const cudag::spec_diff d = cudag::diff(tiles_by_builder(), dsl::to_spec(tiles));
  EXPECT_TRUE(d.empty()) << d.text();
  std::string by_dsl, by_builder;
  std::string dsl_refusal, builder_refusal, dsl_top_bit, builder_top_bit;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = dsl::instantiate(tiles, out = dev_y, rows = 16u);
    (void)e.rebind(rows = 0u);
    dsl_top_bit = refusal([&] { (void)e.rebind(rows = 0x80000000u); });
    dsl_refusal = refusal([&] { (void)e.rebind(rows = 40u); });  // 32 * 40 * 5 threads
    by_dsl = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    const cudag::binding binds[] = {cudag::bind("out", dev_y), cudag::bind("rows", 16u)};
    auto e = cudag::instantiate(tiles_by_builder(), binds);
    (void)e.rebind("rows", 0u);
    builder_top_bit = refusal([&] { (void)e.rebind("rows", 0x80000000u); });
    builder_refusal = refusal([&] { (void)e.rebind("rows", 40u); });
    by_builder = rec.transcript();
  }
  EXPECT_EQ(by_dsl, by_builder);
  EXPECT_NE(by_builder.find("grid=(2,1,3) block=(32,16,2)"), std::string::npos) << by_builder;
  EXPECT_NE(by_builder.find("grid=(2,1,3) block=(32,1,1)"), std::string::npos) << by_builder;  // 0 rows
  EXPECT_EQ(dsl_refusal, builder_refusal);
  EXPECT_EQ(dsl_refusal,
            "tile: kernel node 'tile': its shape rules give a block of 32x40x5 threads; CUDA allows "
            "at most 1024");
  EXPECT_EQ(dsl_top_bit, builder_top_bit);
  EXPECT_EQ(dsl_top_bit,
            "tile: kernel node 'tile': shape rule block.y = ceil(rows * 1 / 1) gives more than 1024 "
            "with rows = 2147483648, CUDA's limit");
}

// An unsigned count above 2^31 - 1 (3 * 10^9 bytes, say) launches the blocks
// it asks for in both front ends; read as a signed int it was negative, and
// so one block.
constexpr auto count = dsl::param<"count", unsigned>;
constexpr auto wide =
    dsl::graph(dsl::kernel<"wide", scale>(dsl::blocks_for(count, 256), 256, out, 1.0f, 7));

TEST(DslShapeRules, AnUnsignedCountAboveTwoToThe31LaunchesAllItsBlocks) {
  std::string by_dsl, by_builder;
  {
    cudag::native::recorder rec;
    name_everything(rec);
    auto e = dsl::instantiate(wide, out = dev_y, count = 3'000'000'000u);
    (void)e.rebind(count = 0xFFFFFFFFu);
    by_dsl = rec.transcript();
  }
  {
    cudag::native::recorder rec;
    name_everything(rec);
    cudag::builder b("graph");
    auto pout = b.param<float*>("out");
    auto pcount = b.param<unsigned>("count");
    b.kernel("wide", cudag::kernel_of(&scale, std::string(function_name_of<scale>())),
             cudag::launch_over(pcount, 256), pout, 1.0f, 7);
    const cudag::binding binds[] = {cudag::bind("out", dev_y), cudag::bind("count", 3'000'000'000u)};
    auto e = cudag::instantiate(b.build(), binds);
    (void)e.rebind("count", 0xFFFFFFFFu);
    by_builder = rec.transcript();
  }
  EXPECT_EQ(by_dsl, by_builder);
  EXPECT_NE(by_builder.find("grid=(11718750,1,1)"), std::string::npos) << by_builder;
  EXPECT_NE(by_builder.find("grid=(16777216,1,1)"), std::string::npos) << by_builder;
}

// A rule inside a child graph: a rebind calls child_body::check_launch<Root>(),
// which checks the inner node's launch before anything changes.
constexpr auto nested = dsl::graph(
    dsl::kernel<"outer", scale>(1, 32, out, 1.0f, seq),
    dsl::child<"stage">(dsl::graph(dsl::kernel<"inner", normalize>(dsl::dims(dsl::scaled(seq, 2)), 64, out, seq, 1))),
    dsl::edge<"outer", "stage">);

TEST(DslShapeRules, ARuleInsideAChildGraphRefusesTheRebindWhole) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = dsl::instantiate(nested, out = dev_y, seq = 8);
  EXPECT_NE(rec.transcript().find("normalize grid=(16,1,1) block=(64,1,1)"), std::string::npos)
      << rec.transcript();
  rec.clear();
  EXPECT_EQ(refusal([&] { (void)e.rebind(seq = 0x40000000); }),
            "inner: kernel node 'inner': shape rule grid.x = ceil(seq * 2 / 1) gives more than "
            "2147483647 with seq = 1073741824, CUDA's limit");
  EXPECT_TRUE(rec.calls().empty()) << rec.transcript();
  EXPECT_EQ(e.rebind(seq = 8), cudag::rebind_path::none);
  EXPECT_EQ(e.rebind(seq = 100), cudag::rebind_path::whole_graph_update);
  EXPECT_NE(rec.transcript().find("normalize grid=(200,1,1)"), std::string::npos) << rec.transcript();
}

}  // namespace

// The wide path of a shape rule (a product past 64 bits) has a portable form
// for compilers without unsigned __int128; both give the same extents, and
// the portable one is checked at compile time too.
namespace portable {
using cudag::native::scaled_extent_wide_portable;
constexpr std::uint64_t max = ~std::uint64_t{0};
static_assert(scaled_extent_wide_portable(std::uint64_t{1} << 32, std::uint64_t{1} << 32, 1) == max);
static_assert(scaled_extent_wide_portable(std::uint64_t{1} << 32, std::uint64_t{1} << 32, 2) ==
              std::uint64_t{1} << 63);
static_assert(scaled_extent_wide_portable(max, max, max) == max);
static_assert(scaled_extent_wide_portable(max, 3, 4) == max / 4 * 3 + 3);  // (2^64-1)*3/4, rounded up
static_assert(scaled_extent_wide_portable(std::uint64_t{5} << 32, std::uint64_t{7} << 20, 3) ==
              (std::uint64_t{35} << 52) / 3 + 1);
}  // namespace portable

TEST(DslShapeRules, ThePortableWidePathAgreesWithThe128BitOne) {
  const std::uint64_t values[] = {0,
                                  1,
                                  3,
                                  0xFFFFFFFFu,
                                  std::uint64_t{1} << 32,
                                  (std::uint64_t{1} << 32) + 1,
                                  0x123456789ABCDEFull,
                                  std::uint64_t{1} << 62,
                                  (std::uint64_t{1} << 63) - 1,
                                  std::uint64_t{1} << 63,
                                  ~std::uint64_t{0} - 1,
                                  ~std::uint64_t{0}};
  for (const std::uint64_t n : values)
    for (const std::uint64_t m : values)
      for (const std::uint64_t d : values) {
        if (d == 0 || (n <= 0xFFFFFFFFu && m <= 0xFFFFFFFFu)) continue;  // not the wide path
        std::uint64_t expected = ~std::uint64_t{0};
#ifdef __SIZEOF_INT128__
        const unsigned __int128 product = static_cast<unsigned __int128>(n) * m;
        const unsigned __int128 wide = product / d + (product % d != 0);
        if (wide <= ~std::uint64_t{0}) expected = static_cast<std::uint64_t>(wide);
#else
        GTEST_SKIP() << "no 128-bit integer to compare with (the static_asserts above still ran)";
#endif
        EXPECT_EQ(cudag::native::scaled_extent_wide_portable(n, m, d), expected)
            << n << " * " << m << " / " << d;
        if (n <= static_cast<std::uint64_t>(INT64_MAX)) {
          EXPECT_EQ(cudag::native::scaled_extent(static_cast<std::int64_t>(n), m, d), expected)
              << n << " * " << m << " / " << d;
        }
      }
}
