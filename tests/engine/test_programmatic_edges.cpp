// Programmatic and launch-completion edges (Programmatic Dependent Launch)
// without a GPU: what the builder writes, what check() refuses and how it
// names the edge, the exact native calls lowering makes (CUDA's edge data on
// every typed dependency, none on the others), and what an exec's update
// and the exec cache make of an edge whose kind changed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/dsl.hpp"
#include "cudag/edge_payoff.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"
#include "cudag/native_recorder.hpp"
#include "cudag/resolved_graph.hpp"
#include "recorder_support.hpp"
#include "refusal_support.hpp"

namespace {

// Host functions stand in for kernels: the recorder shows their names.
void produce(float* x, int n) { (void)x, (void)n; }
void consume(const float* x, float* y, int n) { (void)x, (void)y, (void)n; }
void inspect(const float* x, int n) { (void)x, (void)n; }

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void name_everything(cudag::native::recorder& rec) {
  rec.name_kernel(&produce, "produce");
  rec.name_kernel(&consume, "consume");
  rec.name_kernel(&inspect, "inspect");
  rec.name_pointer(dev_x, "x");
  rec.name_pointer(dev_y, "y");
}

/// produce -> consume (of `kind`), and a second consumer after both, its
/// edge from produce programmatic and from the first consumer full.
cudag::resolved_graph pipeline(cudag::edge_kind kind, bool synchronizing = true) {
  cudag::builder b("pipeline");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto p = b.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(4, 128), x, 512);
  auto consumer = CUDAG_KERNEL(consume);
  if (synchronizing) consumer = cudag::synchronizes_grid_dependencies(consumer);
  auto c = b.kernel("consume", consumer, cudag::launch(4, 128), x, y, 512);
  auto d = b.kernel("drain", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)),
                    cudag::launch(4, 128), x, y, 512);
  b.edge(p, c, kind);
  b.edge(c, d);
  b.edge(p, d, cudag::edge_kind::programmatic);
  return std::move(b).resolve();
}

std::vector<cudag::binding> bindings() {
  return {cudag::bind("x", dev_x), cudag::bind("y", dev_y)};
}

using engine_test::expect_refused;

TEST(ProgrammaticEdges, TheBuilderKeepsEachDependencysKindAndOnlyWhereOneIsNotFull) {
  const cudag::resolved_graph g = pipeline(cudag::edge_kind::launch_completion);
  const cudag::graph_spec& spec = g.spec();
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_TRUE(spec.nodes[0].dependency_kinds.empty());  // no dependency at all
  EXPECT_EQ(spec.nodes[1].dependency_kinds,
            std::vector<cudag::edge_kind>{cudag::edge_kind::launch_completion});
  // 'drain': its full edge was added first, before any kind was kept.
  ASSERT_EQ(spec.nodes[2].deps.size(), 2u);
  EXPECT_EQ(spec.nodes[2].deps[0], "consume");
  EXPECT_EQ(spec.nodes[2].dependency_kinds,
            (std::vector<cudag::edge_kind>{cudag::edge_kind::full, cudag::edge_kind::programmatic}));
  EXPECT_TRUE(std::get<cudag::kernel_node>(spec.nodes[1].params).synchronizes_grid_dependencies);
  EXPECT_FALSE(std::get<cudag::kernel_node>(spec.nodes[0].params).synchronizes_grid_dependencies);

  // Only full edges: no kinds kept at all.
  cudag::builder plain("plain");
  auto x = plain.param<float*>("x");
  auto a = plain.kernel("a", CUDAG_KERNEL(produce), cudag::launch(1, 32), x, 1);
  auto b = plain.kernel("b", CUDAG_KERNEL(produce), cudag::launch(1, 32), x, 1);
  plain.edge(a, b);
  plain.edge(a, b, cudag::edge_kind::full);  // the same edge again: nothing changes
  EXPECT_TRUE(plain.spec().nodes[1].dependency_kinds.empty());
  EXPECT_EQ(plain.spec().nodes[1].deps.size(), 1u);
}

TEST(ProgrammaticEdges, AnEdgeAddedAgainWithAnotherKindIsRefusedNamingIt) {
  cudag::builder b("twice");
  auto x = b.param<float*>("x");
  auto y = b.param<float*>("y");
  auto p = b.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(1, 32), x, 32);
  auto c = b.kernel("consume", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)),
                    cudag::launch(1, 32), x, y, 32);
  b.edge(p, c, cudag::edge_kind::programmatic);
  b.edge(p, c, cudag::edge_kind::programmatic);  // the same kind: nothing changes
  try {
    b.edge("produce", "consume", cudag::edge_kind::full);
    FAIL() << "an edge of two kinds was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "graph 'twice': edge produce -> consume is programmatic and is added again as full");
    EXPECT_EQ(e.node(), "consume");
  }
  EXPECT_EQ(b.spec().nodes[1].deps.size(), 1u);
}

TEST(ProgrammaticEdges, LoweringSendsCudasEdgeDataOnEachTypedDependencyOnly) {
  cudag::native::recorder rec;
  name_everything(rec);
  {
    auto e = cudag::instantiate(pipeline(cudag::edge_kind::programmatic), bindings());
    const std::string calls = lines(rec.calls());
    EXPECT_NE(calls.find("add_kernel_node n1 g1 deps=[] produce"), std::string::npos) << calls;
    // A node with a typed dependency goes through cudaGraphAddNode with its edge data.
    EXPECT_NE(calls.find("add_node n2 g1 deps=[n1:programmatic] consume grid=(4,1,1)"),
              std::string::npos)
        << calls;
    EXPECT_NE(calls.find("add_node n3 g1 deps=[n2,n1:programmatic] consume"), std::string::npos)
        << calls;
    EXPECT_EQ(rec.exec_state(e.native_exec()),
              "0 add_kernel_node deps=[] produce grid=(4,1,1) block=(128,1,1) shared=0 args=[x, 0x200]\n"
              "1 add_node deps=[0:programmatic] consume grid=(4,1,1) block=(128,1,1) shared=0 args=[x, y, 0x200]\n"
              "2 add_node deps=[1,0:programmatic] consume grid=(4,1,1) block=(128,1,1) shared=0 args=[x, y, 0x200]\n");
  }
  {
    rec.clear();
    auto e = cudag::instantiate(pipeline(cudag::edge_kind::launch_completion), bindings());
    EXPECT_NE(lines(rec.calls()).find("add_node n5 g2 deps=[n4:launch_completion] consume"),
              std::string::npos)
        << lines(rec.calls());
  }
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(ProgrammaticEdges, ATypedEdgeIntoAKernelThatDoesNotSynchronizeIsRefused) {
  expect_refused(pipeline(cudag::edge_kind::programmatic, false).spec(),
                 "programmatic edge 'produce' -> 'consume': kernel node 'consume' does not "
                 "synchronize its grid dependencies, so it may read what 'produce' writes before "
                 "it is written; mark its kernel with cudag::synchronizes_grid_dependencies() once "
                 "it calls cudaGridDependencySynchronize() before those reads",
                 {"consume"});
  // The same graph resolved, and through instantiate: refused alike.
  cudag::native::recorder rec;
  EXPECT_THROW(cudag::check(pipeline(cudag::edge_kind::launch_completion, false)), cudag::check_error);
  EXPECT_THROW((void)cudag::instantiate(pipeline(cudag::edge_kind::programmatic, false), bindings()),
               cudag::check_error);
  EXPECT_TRUE(rec.calls().empty()) << lines(rec.calls());
}

TEST(ProgrammaticEdges, ATypedEdgeOnlyJoinsKernelNodes) {
  {  // from a memset node
    cudag::builder b("from_memset");
    auto x = b.param<float*>("x");
    auto y = b.param<float*>("y");
    auto clear = b.memset("clear", y, 0, 64);
    auto c = b.kernel("consume", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)),
                      cudag::launch(1, 64), x, y, 64);
    b.edge(clear, c, cudag::edge_kind::programmatic);
    expect_refused(b.build(),
                   "programmatic edge 'clear' -> 'consume': CUDA allows one only from a kernel "
                   "node into a kernel node, and 'clear' is a memset node",
                   {"consume"});
  }
  {  // into an empty node
    cudag::builder b("into_empty");
    auto x = b.param<float*>("x");
    auto p = b.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(1, 64), x, 64);
    auto join = b.empty("join");
    b.edge(p, join, cudag::edge_kind::launch_completion);
    expect_refused(b.build(),
                   "launch_completion edge 'produce' -> 'join': CUDA allows one only from a "
                   "kernel node into a kernel node, and 'join' is an empty node",
                   {"join"});
  }
}

TEST(ProgrammaticEdges, AHandWrittenSpecGivesOneKindPerDependencyOrNone) {
  cudag::graph_spec spec = pipeline(cudag::edge_kind::programmatic).spec();
  spec.nodes[2].dependency_kinds.pop_back();
  expect_refused(spec,
                 "node 'drain' lists 1 dependency kinds for its 2 dependencies; give one kind per "
                 "dependency, or none (every edge full)",
                 {"drain"});
  // Resolved from the spec: the same kinds, the same refusal.
  EXPECT_THROW(cudag::check(cudag::resolve(spec)), cudag::check_error);
  spec.nodes[2].dependency_kinds.clear();  // every edge full: accepted
  EXPECT_NO_THROW(cudag::check(spec));
}

TEST(ProgrammaticEdges, TypedEdgesInsideChildGraphsAndBodiesAreLoweredWithTheirData) {
  cudag::native::recorder rec;
  name_everything(rec);
  cudag::builder body("body");
  auto bx = body.param<float*>("x");
  auto by = body.param<float*>("y");
  auto bp = body.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(1, 32), bx, 32);
  auto bc = body.kernel("consume", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)),
                        cudag::launch(1, 32), bx, by, 32);
  body.edge(bp, bc, cudag::edge_kind::programmatic);
  cudag::resolved_graph resolved_body = std::move(body).resolve();

  cudag::builder b("outer");
  (void)b.param<float*>("x");
  (void)b.param<float*>("y");
  auto flag = b.condition("flag", 1);
  auto stage = b.child("stage", resolved_body);
  b.if_then("maybe", flag, resolved_body).after(stage);  // both bodies write x and y
  auto e = cudag::instantiate(std::move(b).resolve(), bindings());
  const std::string state = rec.exec_state(e.native_exec());
  EXPECT_NE(state.find("0/b0/1 add_node deps=[0/b0/0:programmatic] consume"), std::string::npos) << state;
  EXPECT_NE(state.find("1/b0/1 add_node deps=[1/b0/0:programmatic] consume"), std::string::npos)
      << state;
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

TEST(ProgrammaticEdges, AKindChangedIsAnotherTopology) {
  const cudag::graph_spec programmatic = pipeline(cudag::edge_kind::programmatic).spec();
  const cudag::graph_spec launch = pipeline(cudag::edge_kind::launch_completion).spec();
  cudag::graph_spec full = programmatic;
  full.nodes[1].dependency_kinds.clear();
  full.nodes[1].params = launch.nodes[1].params;
  EXPECT_NE(cudag::topology_key(programmatic), cudag::topology_key(launch));
  EXPECT_NE(cudag::topology_key(programmatic), cudag::topology_key(full));
  EXPECT_EQ(cudag::topology_key(programmatic), cudag::topology_key(pipeline(cudag::edge_kind::programmatic).spec()));

  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(programmatic, bindings());
  const std::string before = rec.exec_state(e.native_exec());
  try {
    e.update(launch, bindings());
    FAIL() << "an update changed an edge's kind";
  } catch (const cudag::error& err) {
    EXPECT_NE(std::string(err.what()).find("node 'consume' changes its dependencies or their kinds"),
              std::string::npos)
        << err.what();
  }
  EXPECT_EQ(rec.exec_state(e.native_exec()), before);
  // Where CUDA cannot update, a fresh instantiation carries the new kind.
  EXPECT_TRUE(e.update_or_reinstantiate(launch, bindings()));
  EXPECT_NE(rec.exec_state(e.native_exec()).find("deps=[0:launch_completion]"), std::string::npos)
      << rec.exec_state(e.native_exec());
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
}

// ------------------------------------------------ the DSL and the builder --
// The same graphs declared with the DSL: the DSL's lowering walk sends CUDA's
// edge data on a kernel node's typed dependencies exactly as the engine does.
namespace dsl = cudag::dsl;
constexpr auto px = dsl::param<"x", float*>;
constexpr auto py = dsl::param<"y", float*>;

/// pipeline(kind) in the DSL. The kernels are named as CUDAG_KERNEL names them.
template <cudag::edge_kind Kind>
constexpr auto dsl_pipeline = dsl::graph(
    dsl::kernel<"produce", produce>(4, 128, px, 512),
    dsl::synchronizes_grid_dependencies(dsl::kernel<"consume", consume>(4, 128, px, py, 512)),
    dsl::synchronizes_grid_dependencies(dsl::kernel<"drain", consume>(4, 128, px, py, 512)),
    dsl::edge<"produce", "consume", Kind>, dsl::edge<"consume", "drain">,
    dsl::edge<"produce", "drain", dsl::edge_kind::programmatic>);

/// The calls instantiating `g` (a DSL graph) record, and the exec's state.
template <class G>
std::pair<std::string, std::string> record_dsl(const G& g) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = dsl::instantiate(g, px = dev_x, py = dev_y);
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  return {rec.transcript(), rec.exec_state(e.native_exec())};
}
std::pair<std::string, std::string> record_builder(cudag::resolved_graph g) {
  cudag::native::recorder rec;
  name_everything(rec);
  auto e = cudag::instantiate(std::move(g), bindings());
  EXPECT_TRUE(rec.misuse().empty()) << lines(rec.misuse());
  return {rec.transcript(), rec.exec_state(e.native_exec())};
}

TEST(ProgrammaticEdges, ADslGraphRecordsTheBuildersCallsEdgeDataIncluded) {
  const auto programmatic = record_dsl(dsl_pipeline<cudag::edge_kind::programmatic>);
  EXPECT_EQ(programmatic, record_builder(pipeline(cudag::edge_kind::programmatic)));
  EXPECT_NE(programmatic.first.find("add_node n2 g1 deps=[n1:programmatic] consume"), std::string::npos)
      << programmatic.first;
  EXPECT_NE(programmatic.first.find("add_node n3 g1 deps=[n2,n1:programmatic] consume"), std::string::npos)
      << programmatic.first;
  EXPECT_NE(programmatic.first.find("add_kernel_node n1 g1 deps=[] produce"), std::string::npos)
      << programmatic.first;
  const auto launch = record_dsl(dsl_pipeline<cudag::edge_kind::launch_completion>);
  EXPECT_EQ(launch, record_builder(pipeline(cudag::edge_kind::launch_completion)));
  EXPECT_NE(launch.first.find("add_node n2 g1 deps=[n1:launch_completion] consume"), std::string::npos)
      << launch.first;
}

// Typed edges inside a child graph and a conditional body, beside kernel
// nodes of full edges only (finish, in the same graph; after, in a graph of
// full edges): each lowered with its edge data or none, as the builder's.
// finish only reads x, beside consume, which reads it too; the child and the
// conditional write x and y, so they run in turn.
// clang-format off
constexpr auto dsl_body = dsl::graph(
    dsl::kernel<"produce", produce>(1, 32, px, 32),
    dsl::synchronizes_grid_dependencies(dsl::kernel<"consume", consume>(1, 32, px, py, 32)),
    dsl::kernel<"finish", inspect>(1, 32, px, 16),
    dsl::edge<"produce", "consume", dsl::edge_kind::programmatic>, dsl::edge<"produce", "finish">);
constexpr auto dsl_outer = dsl::graph(
    dsl::child<"stage">(dsl_body),
    dsl::if_then<"maybe">(dsl::condition<"flag", 1>, dsl_body),
    dsl::kernel<"after", produce>(1, 32, px, 32),
    dsl::edge<"stage", "maybe">, dsl::edge<"maybe", "after">);
// clang-format on

TEST(ProgrammaticEdges, DslTypedEdgesInChildGraphsAndBodiesRecordTheBuildersCalls) {
  const auto by_dsl = record_dsl(dsl_outer);
  cudag::builder body("body");
  auto bx = body.param<float*>("x");
  auto by = body.param<float*>("y");
  auto bp = body.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(1, 32), bx, 32);
  auto bc = body.kernel("consume", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(consume)),
                        cudag::launch(1, 32), bx, by, 32);
  auto bf = body.kernel("finish", CUDAG_KERNEL(inspect), cudag::launch(1, 32), bx, 16);
  body.edge(bp, bc, cudag::edge_kind::programmatic);
  body.edge(bp, bf);
  const cudag::graph_spec body_spec = body.build();
  cudag::builder b("outer");
  auto x = b.param<float*>("x");
  (void)b.param<float*>("y");
  auto flag = b.condition("flag", 1);
  auto stage = b.child("stage", body_spec);
  auto maybe = b.if_then("maybe", flag, body_spec).after(stage);
  auto after = b.kernel("after", CUDAG_KERNEL(produce), cudag::launch(1, 32), x, 32);
  b.edge(maybe, after);
  EXPECT_EQ(by_dsl, record_builder(std::move(b).resolve()));
  EXPECT_NE(by_dsl.second.find("0/b0/1 add_node deps=[0/b0/0:programmatic] consume"), std::string::npos)
      << by_dsl.second;
  EXPECT_NE(by_dsl.second.find("1/b0/1 add_node deps=[1/b0/0:programmatic] consume"), std::string::npos)
      << by_dsl.second;
  EXPECT_NE(by_dsl.second.find("0/b0/2 add_kernel_node deps=[0/b0/0] inspect"), std::string::npos)
      << by_dsl.second;
  EXPECT_NE(by_dsl.second.find("add_kernel_node deps=[1] produce"), std::string::npos) << by_dsl.second;
}

}  // namespace

namespace {

TEST(EdgePayoff, FullEdgesDropEveryKindInTheTreeAndKeepTheMarkers) {
  cudag::graph_spec spec = pipeline(cudag::edge_kind::programmatic).spec();
  auto nested = std::make_shared<cudag::graph_spec>(pipeline(cudag::edge_kind::launch_completion).spec());
  cudag::node stage;
  stage.name = "stage";
  stage.params = cudag::child_node{nested};
  stage.deps = {"drain"};  // it writes x and y too: after the top-level pipeline
  spec.nodes.push_back(stage);
  EXPECT_EQ(cudag::typed_edge_count(spec), 4u);
  const cudag::graph_spec full = cudag::with_full_edges(spec);
  EXPECT_EQ(cudag::typed_edge_count(full), 0u);
  EXPECT_EQ(cudag::typed_edge_count(*nested), 2u) << "the caller's nested graph was changed";
  EXPECT_EQ(full.nodes[2].deps, spec.nodes[2].deps);
  EXPECT_TRUE(std::get<cudag::kernel_node>(full.nodes[1].params).synchronizes_grid_dependencies);
  EXPECT_NO_THROW(cudag::check(full));
}

TEST(EdgePayoff, TheChoiceReplaysBothGraphsAndShipsOneOfThem) {
  cudag::native::recorder rec;
  name_everything(rec);
  const cudag::graph_spec spec = pipeline(cudag::edge_kind::programmatic).spec();
  const cudag::edge_kind_choice choice =
      cudag::choose_edge_kinds(spec, bindings(), nullptr, /*samples=*/3, /*launches=*/2);
  EXPECT_EQ(choice.typed_edges, 2u);
  // Both graphs were instantiated and replayed: 2 warm-up + 3 * 2 launches each.
  const std::string calls = lines(rec.calls());
  std::size_t launches = 0;
  for (std::size_t at = calls.find("\nlaunch "); at != std::string::npos; at = calls.find("\nlaunch ", at + 1))
    ++launches;
  EXPECT_EQ(launches, 2u * (2 + 3 * 2)) << calls;
  EXPECT_NE(calls.find("deps=[n1:programmatic]"), std::string::npos) << calls;
  const std::size_t kept = cudag::typed_edge_count(choice.chosen);
  EXPECT_EQ(kept, choice.keep_typed ? 2u : 0u);
  EXPECT_NE(choice.text().find(choice.keep_typed ? "keep the typed edges" : "make every edge full"),
            std::string::npos)
      << choice.text();
  // Nothing typed: nothing measured, nothing launched.
  rec.clear();
  const cudag::edge_kind_choice none =
      cudag::choose_edge_kinds(cudag::with_full_edges(spec), bindings(), nullptr);
  EXPECT_EQ(none.typed_edges, 0u);
  EXPECT_TRUE(rec.calls().empty()) << lines(rec.calls());
  EXPECT_EQ(none.text(), "no typed edges: nothing to choose");
  EXPECT_THROW((void)cudag::choose_edge_kinds(spec, bindings(), nullptr, 0), cudag::error);
}

}  // namespace
