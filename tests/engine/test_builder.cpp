// The run-time builder produces the spec its calls describe; mistakes in
// names and edges are refused at once, naming the node or edge.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"

namespace {

void scale(float*, float, int) {}
void axpy(const float*, float*, float, int) {}

template <class T>
T literal_value(const cudag::value& v) {
  const auto& lit = std::get<cudag::literal>(v.source);
  EXPECT_EQ(lit.bytes.size(), sizeof(T));
  T out{};
  std::memcpy(&out, lit.bytes.data(), sizeof(T));
  return out;
}

}  // namespace

TEST(Builder, KernelArgumentsBecomeTypedValues) {
  cudag::builder b("saxpy");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  float* raw = reinterpret_cast<float*>(0x1000);
  b.kernel("scale", CUDAG_KERNEL(scale), cudag::launch_over(n, 128), x, 2.5f, n);
  b.kernel("axpy", &axpy, cudag::launch(dim3(4), dim3(64), 128), raw, x, 3.0f, n);
  const cudag::graph_spec& s = b.spec();
  ASSERT_EQ(s.nodes.size(), 2u);
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].type, cudag::type_of<float*>());

  const auto& k = std::get<cudag::kernel_node>(s.nodes[0].params);
  EXPECT_EQ(k.function, reinterpret_cast<const void*>(&scale));
  EXPECT_EQ(k.function_name, "scale");
  ASSERT_EQ(k.args.size(), 3u);
  EXPECT_EQ(std::get<cudag::param_ref>(k.args[0].source).name, "x");
  EXPECT_FLOAT_EQ(literal_value<float>(k.args[1]), 2.5f);
  EXPECT_EQ(k.args[1].type, cudag::type_of<float>());
  ASSERT_TRUE(k.grid_from.has_value());
  EXPECT_EQ(k.grid_from->param, "n");
  EXPECT_EQ(k.grid_from->items_per_block, 128u);
  EXPECT_EQ(k.block.x, 128u);

  const auto& a = std::get<cudag::kernel_node>(s.nodes[1].params);
  // A float* literal passed where const float* is expected keeps its value.
  EXPECT_EQ(a.args[0].type, cudag::type_of<const float*>());
  EXPECT_EQ(literal_value<const float*>(a.args[0]), raw);
  EXPECT_EQ(a.grid.x, 4u);
  EXPECT_EQ(a.shared_bytes, 128u);
}

TEST(Builder, BuffersConditionsAndEdges) {
  cudag::builder b("g");
  auto c = b.condition("again", 1);
  auto [alloc, tmp] = b.alloc<float>("tmp", 100);
  auto fill = b.memset("clear", tmp + 10, 0u, 90);
  auto rel = b.free("release", tmp);
  b.chain(alloc, fill, rel);
  cudag::builder body("body");
  body.kernel("k", &scale, cudag::launch(1, 1), tmp, 1.0f, 1);
  auto loop = b.while_loop("loop", c, body.build());
  loop.after(alloc).precede(rel);

  const cudag::graph_spec& s = b.spec();
  const auto& a = std::get<cudag::mem_alloc_node>(s.find("tmp")->params);
  EXPECT_EQ(a.bytes, 100 * sizeof(float));
  const auto& m = std::get<cudag::memset_node>(s.find("clear")->params);
  const auto& dst = std::get<cudag::buffer_ref>(m.dst.source);
  EXPECT_EQ(dst.name, "tmp");
  EXPECT_EQ(dst.offset_bytes, 10 * sizeof(float));
  EXPECT_EQ(m.element_size, 4u);
  EXPECT_EQ(s.find("clear")->deps, std::vector<std::string>{"tmp"});
  EXPECT_EQ(s.find("release")->deps, (std::vector<std::string>{"clear", "loop"}));
  EXPECT_EQ(s.find("loop")->deps, std::vector<std::string>{"tmp"});
  const auto& cond = std::get<cudag::conditional_node>(s.find("loop")->params);
  EXPECT_EQ(cond.kind, cudag::conditional_kind::while_loop);
  EXPECT_EQ(cond.condition, "again");
  ASSERT_EQ(cond.bodies.size(), 1u);
  EXPECT_EQ(s.conditions.at(0).default_value, 1u);
  EXPECT_EQ(s.total_nodes(), 5u);
}

TEST(Builder, DuplicateNamesAndUnknownEdgesAreRefusedByName) {
  cudag::builder b("g");
  b.empty("a");
  try {
    b.empty("a");
    FAIL();
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "a");
    EXPECT_NE(std::string(e.what()).find("duplicate node name 'a'"), std::string::npos);
  }
  try {
    b.edge("a", "typo");
    FAIL();
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("edge a -> typo"), std::string::npos) << e.what();
    EXPECT_EQ(e.node(), "typo");
  }
  (void)b.param<int>("n");
  EXPECT_THROW(b.param<int>("n"), cudag::error);
}

TEST(Builder, HostCallableSeesTypedArguments) {
  cudag::builder b("g");
  auto n = b.param<int>("n");
  int seen_n = 0;
  float seen_f = 0;
  b.host("h", [&](int v, float f) { seen_n = v; seen_f = f; }, n, 1.5f);
  const auto& h = std::get<cudag::host_node>(b.spec().nodes[0].params);
  ASSERT_EQ(h.args.size(), 2u);
  EXPECT_EQ(h.args[0].type, cudag::type_of<int>());
  const int value_n = 42;
  const float value_f = 1.5f;
  const void* pointers[] = {&value_n, &value_f};
  (*h.function)(pointers);
  EXPECT_EQ(seen_n, 42);
  EXPECT_FLOAT_EQ(seen_f, 1.5f);
}

TEST(Builder, InstantiateWithoutAUsableDeviceSaysWhy) {
  cudag::builder b("g");
  b.empty("a");
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a device is present";
  (void)cudaGetLastError();
  try {
    (void)cudag::instantiate(b.build(), {});
    FAIL();
  } catch (const cudag::error& e) {
    // Without a driver CUDA answers cudaErrorInsufficientDriver; with a
    // driver and no GPU, cudaErrorNoDevice. The message names the error and
    // the CUDA call (not compared with cudaGetErrorName(e.code()), which
    // would accept whatever code the library reported).
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("no usable CUDA device was found: ", 0), 0u) << message;
    EXPECT_TRUE(e.code() == cudaErrorInsufficientDriver || e.code() == cudaErrorNoDevice)
        << "code " << int(e.code()) << ": " << message;
    const char* name =
        e.code() == cudaErrorInsufficientDriver ? "cudaErrorInsufficientDriver" : "cudaErrorNoDevice";
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_EQ(e.call().rfind("cuda", 0), 0u) << "call: '" << e.call() << "'";
    EXPECT_NE(message.find(e.call()), std::string::npos) << message;
  }
}

TEST(Builder, ParameterReadersAreNamedByPath) {
  cudag::builder b("g");
  auto x = b.param<float*>("x");
  auto n = b.param<int>("n");
  auto c = b.condition("which");
  b.kernel("direct", &scale, cudag::launch(1, 1), x, 1.0f, 4);
  b.kernel("sized", &scale, cudag::launch_over(n, 64), static_cast<float*>(nullptr), 1.0f, 4);
  cudag::builder inner("inner");
  inner.memset("clear", x, 0u, 16);
  b.child("stage", inner.build());
  cudag::builder then_body("then"), else_body("else");
  then_body.empty("nothing");
  else_body.host("report", [](float*) {}, x);
  b.if_else("branch", c, then_body.build(), else_body.build());
  const cudag::graph_spec s = b.build();
  EXPECT_EQ(cudag::parameter_readers(s, "x"),
            (std::vector<std::string>{"direct", "stage/clear", "branch[1]/report"}));
  EXPECT_EQ(cudag::parameter_readers(s, "n"), std::vector<std::string>{"sized"});
  EXPECT_TRUE(cudag::parameter_readers(s, "unknown").empty());
}

// The builder's name index grows while nodes are added: every name stays
// found, in order, and a duplicate is refused at any size.
TEST(Builder, EveryNameIsFoundAfterTheIndexGrows) {
  cudag::builder b("many");
  constexpr int count = 5000;
  for (int i = 0; i < count; ++i) b.empty("node_" + std::to_string(i));
  for (int i = 0; i < count; ++i) {
    const std::string name = "node_" + std::to_string(i);
    ASSERT_EQ(b.node(name).index(), std::size_t(i)) << name;
  }
  for (int i = 1; i < count; i += 97) b.edge("node_" + std::to_string(i - 1), "node_" + std::to_string(i));
  EXPECT_EQ(b.spec().nodes[98].deps, std::vector<std::string>{"node_97"});
  EXPECT_TRUE(b.spec().nodes[97].deps.empty());
  try {
    b.empty("node_4321");
    FAIL() << "a duplicate name was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "node_4321");
  }
  EXPECT_EQ(b.spec().nodes.size(), std::size_t(count)) << "a refused node is not kept";
  EXPECT_THROW((void)b.node("node_5000"), cudag::error);
  b.empty("node_5000");  // the refused name did not leave a trace in the index
  EXPECT_EQ(b.node("node_5000").index(), std::size_t(count));
}

// A kernel node whose argument is refused is taken back out of the name
// index, and only it: every other name is still found, the refused one is
// free. The table is kept near its fullest (half), so that most refused
// names probe past others, whose slots must be left alone.
TEST(Builder, ARefusedNodeLeavesEveryOtherNameFound) {
  cudag::builder b("crowded");
  const cudag::buffer_handle<float> too_far{"nowhere", std::size_t(1) << 62};
  constexpr int count = 1000;  // 1000 of 2048 slots, with a refused node after each
  for (int i = 0; i < count; ++i) {
    b.empty("n" + std::to_string(i));
    EXPECT_THROW(b.kernel("refused" + std::to_string(i), &scale, cudag::launch(1, 32), too_far,
                          1.0f, 1),
                 cudag::error);
  }
  for (int i = 0; i < count; ++i) {
    const std::string name = "n" + std::to_string(i);
    ASSERT_EQ(b.node(name).index(), std::size_t(i)) << name;
    EXPECT_THROW((void)b.node("refused" + std::to_string(i)), cudag::error);
  }
  EXPECT_EQ(b.spec().nodes.size(), std::size_t(count));
}

// reserve() makes room up front: the nodes are not moved as the graph grows,
// and names indexed before and after it are all found.
TEST(Builder, ReserveKeepsTheNodesInPlaceAndEveryNameFound) {
  cudag::builder b("reserved");
  for (int i = 0; i < 40; ++i) b.empty("early_" + std::to_string(i));
  constexpr int count = 3000;
  b.reserve(count, count);
  const cudag::node* first = b.spec().nodes.data();
  for (int i = 40; i < count; ++i) b.empty("late_" + std::to_string(i));
  EXPECT_EQ(b.spec().nodes.data(), first) << "the nodes moved after reserve()";
  for (int i = 0; i < count; ++i) {
    const std::string name = (i < 40 ? "early_" : "late_") + std::to_string(i);
    ASSERT_EQ(b.node(name).index(), std::size_t(i)) << name;
  }
  EXPECT_THROW(b.empty("early_7"), cudag::error);
  EXPECT_THROW(b.empty("late_2999"), cudag::error);
  b.reserve(10);  // less than there is: nothing changes
  EXPECT_EQ(b.node("early_39").index(), 39u);
  b.edge("early_0", "late_2999");
  EXPECT_EQ(b.spec().nodes.back().deps, std::vector<std::string>{"early_0"});
}

// resolve() gives each dependency as its node's index (all nodes' lists in
// order, as `deps` names them), whatever order the edges were added in; a
// repeated edge adds none.
TEST(Builder, ResolveGivesEachDependencysIndex) {
  cudag::builder b("resolved");
  auto a = b.empty("a");
  auto c = b.empty("c");
  auto bb = b.empty("b");
  auto d = b.empty("d");
  d.after(c, bb);           // edges to a later node first
  c.after(a);               // then to an earlier one
  bb.after(a);
  b.edge("a", "d");
  d.after(c);               // repeated: ignored
  b.chain(a, d);            // repeated through chain(): ignored
  // The indices by name, and the resolved graph's rows of them.
  const auto expected_indices = [](const cudag::graph_spec& s) {
    std::vector<std::uint32_t> indices;
    for (const cudag::node& n : s.nodes)
      for (const std::string& dep : n.deps) {
        std::uint32_t i = 0;
        while (s.nodes[i].name != dep) ++i;
        indices.push_back(i);
      }
    return indices;
  };
  const auto rows = [](const cudag::resolved_graph& g) {
    std::vector<std::uint32_t> all;
    for (std::size_t v = 0; v < g.size(); ++v)
      for (const std::uint32_t u : g.dependencies(v)) all.push_back(u);
    EXPECT_EQ(all, std::vector<std::uint32_t>(g.dependency_indices().begin(),
                                              g.dependency_indices().end()));
    return all;
  };
  const cudag::resolved_graph copy = b.resolve();
  EXPECT_EQ(copy[3].deps, (std::vector<std::string>{"c", "b", "a"}));
  EXPECT_EQ(rows(copy), expected_indices(copy.spec()));
  EXPECT_EQ(rows(copy), (std::vector<std::uint32_t>{0, 0, 1, 2, 0}));
  EXPECT_EQ(cudag::topological_order(copy), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(cudag::topological_order(copy), cudag::topological_order(b.build()));
  EXPECT_EQ(rows(cudag::resolve(b.build())), rows(copy));  // the one resolver agrees

  // Edges added in node order (a chain as it is built): the same.
  cudag::builder chain("chain");
  std::optional<cudag::node_ref> previous;
  for (int i = 0; i < 100; ++i) {
    auto n = chain.empty("n" + std::to_string(i));
    if (previous) n.after(*previous);
    if (i >= 2) n.after(chain.node("n" + std::to_string(i - 2)));
    previous = n;
  }
  const cudag::resolved_graph moved = std::move(chain).resolve();
  EXPECT_EQ(rows(moved), expected_indices(moved.spec()));
  EXPECT_EQ(moved.dependency_indices().size(), 99u + 98u);
  cudag::check(moved);
  EXPECT_EQ(chain.spec().nodes.size(), 0u);  // resolve() && started the builder again
}

// A join of many nodes: a repeated edge is ignored whether its node's list
// is short or long (past 16 dependencies it is found by key, not by a scan
// of the list, so that a fan-in of n costs O(n)), before and after the
// list turns long and the set grows, and across a build() &&.
TEST(Builder, RepeatedEdgesIntoALongListAreIgnored) {
  cudag::builder b("join");
  constexpr int leaves = 300;
  std::vector<cudag::node_ref> leaf;
  for (int i = 0; i < leaves; ++i) leaf.push_back(b.empty("leaf" + std::to_string(i)));
  auto join = b.empty("join");
  auto other = b.empty("other");
  for (int i = 0; i < leaves; ++i) {
    b.edge(leaf[std::size_t(i)], join);
    b.edge(leaf[std::size_t(i / 2)], join);  // half of these repeat an edge
    b.edge(leaf[0], join);                   // repeats from the second on
    if (i % 3 == 0) b.edge(leaf[std::size_t(i)], other);
  }
  for (int i = 0; i < leaves; ++i) b.edge(leaf[std::size_t(i)], join);  // every one again
  const std::vector<std::string>& deps = b.spec().nodes[std::size_t(leaves)].deps;
  ASSERT_EQ(deps.size(), std::size_t(leaves));
  for (int i = 0; i < leaves; ++i) EXPECT_EQ(deps[std::size_t(i)], "leaf" + std::to_string(i));
  EXPECT_EQ(b.spec().nodes[std::size_t(leaves) + 1].deps.size(), std::size_t(leaves / 3));
  const cudag::resolved_graph built = b.resolve();
  EXPECT_EQ(built.dependency_indices().size(), std::size_t(leaves + leaves / 3));
  EXPECT_EQ(built.dependencies(std::size_t(leaves)).size(), std::size_t(leaves));
  for (int i = 0; i < leaves; ++i)
    EXPECT_EQ(built.dependencies(std::size_t(leaves))[std::size_t(i)], std::uint32_t(i));
  cudag::check(built);

  // After build() && the builder starts again: the same names, fresh edges.
  const cudag::graph_spec first = std::move(b).build();
  std::vector<cudag::node_ref> again;
  for (int i = 0; i < 40; ++i) again.push_back(b.empty("leaf" + std::to_string(i)));
  auto join_again = b.empty("join");
  for (int round = 0; round < 2; ++round)
    for (const cudag::node_ref& l : again) b.edge(l, join_again);
  EXPECT_EQ(b.spec().nodes[40].deps.size(), 40u);
  cudag::check(std::move(b).build());
}

// count * sizeof(T) past std::size_t is refused before the node is added (it
// used to wrap: 2^61 + 1 doubles allocated 8 bytes, 2^62 floats none).
TEST(Builder, AllocationWhoseSizeOverflowsIsRefusedByName) {
  cudag::builder b("g");
  try {
    (void)b.alloc<double>("tmp", (std::size_t(1) << 61) + 1);
    FAIL() << "an allocation of 2^61 + 1 doubles was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "graph 'g': mem_alloc node 'tmp': 2305843009213693953 elements of 8 bytes overflow "
              "std::size_t");
    EXPECT_EQ(e.node(), "tmp");
  }
  try {
    (void)b.alloc<float>("buf", std::size_t(1) << 62);
    FAIL() << "an allocation of 2^62 floats was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(e.node(), "buf");
  }
  EXPECT_TRUE(b.spec().nodes.empty()) << "a refused allocation left a node";
  // Both names are free; the largest count that fits is accepted.
  auto tmp = b.alloc<double>("tmp", 4);
  auto buf = b.alloc<float>("buf", ~std::size_t{0} / sizeof(float));
  EXPECT_EQ(b.node("tmp").index(), tmp.node.index());
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(b.spec().nodes[0].params).bytes, 32u);
  EXPECT_EQ(std::get<cudag::mem_alloc_node>(b.spec().nodes[1].params).bytes,
            ~std::size_t{0} / sizeof(float) * sizeof(float));
  EXPECT_EQ(buf.node.name(), "buf");
}

// A buffer view whose byte offset overflows is refused, naming the buffer:
// by buffer + k (the sum of offsets too), and when a handle made by hand is
// passed to a node, which is then not added.
TEST(Builder, BufferViewWhoseOffsetOverflowsIsRefusedByName) {
  cudag::builder b("g");
  auto tmp = b.alloc<float>("tmp", 64);
  const std::size_t too_far = (std::size_t(1) << 62);
  try {
    (void)(tmp.buffer + too_far);
    FAIL() << "an offset of 2^62 floats was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "buffer 'tmp': an offset of 4611686018427387904 elements of 4 bytes overflows "
              "std::size_t");
  }
  try {
    (void)(tmp.buffer + 3 + ~std::size_t{0});  // the sum wraps to 2
    FAIL() << "an offset that wraps was accepted";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "buffer 'tmp': an offset of 3 + 18446744073709551615 elements of 4 bytes "
              "overflows std::size_t");
  }
  const cudag::buffer_handle<float> by_hand{"tmp", too_far};
  try {
    b.kernel("use", &scale, cudag::launch(1, 32), by_hand, 1.0f, 64);
    FAIL() << "a kernel argument at 2^62 floats was accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 'tmp': an offset of 4611686018427387904"),
              std::string::npos)
        << e.what();
  }
  try {
    b.memset("clear", by_hand, 0u, 1);
    FAIL() << "a memset at 2^62 floats was accepted";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 'tmp'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.spec().nodes.size(), 1u) << "a refused node was kept";
  b.kernel("use", &scale, cudag::launch(1, 32), tmp.buffer + 8, 1.0f, 56);
  const auto& k = std::get<cudag::kernel_node>(b.spec().nodes[1].params);
  EXPECT_EQ(std::get<cudag::buffer_ref>(k.args[0].source).offset_bytes, 8 * sizeof(float));
  const auto last = tmp.buffer + ~std::size_t{0} / sizeof(float);  // the farthest that fits
  EXPECT_EQ(last.offset, ~std::size_t{0} / sizeof(float));
}

// build() && hands the nodes to the spec: refs made before are refused (they
// used to name whichever new node took their index), and the builder starts
// a new graph of the same name with every name free.
TEST(Builder, RefsMadeBeforeBuildAreRefusedAndTheBuilderStartsAgain) {
  cudag::builder b("g");
  auto first = b.empty("first");
  auto second = b.empty("second");
  b.edge(first, second);
  const cudag::graph_spec copy = b.build();  // a copy: the refs stay valid
  EXPECT_EQ(first.name(), "first");
  const cudag::graph_spec spec = std::move(b).build();
  EXPECT_EQ(spec.name, "g");
  EXPECT_EQ(spec.nodes.size(), 2u);
  EXPECT_TRUE(b.spec().nodes.empty());
  auto p = b.empty("p");
  auto q = b.empty("q");
  try {
    b.edge(first, second);
    FAIL() << "refs made before build() && were accepted against the new nodes";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "graph 'g': node #0 was made before this builder's build() && and belongs to the "
              "spec it returned");
    EXPECT_EQ(e.node(), "#0");
  }
  EXPECT_THROW(b.edge(p, second), cudag::error);
  EXPECT_THROW(q.after(first), cudag::error);
  EXPECT_THROW((void)first.name(), cudag::error);
  EXPECT_TRUE(b.spec().nodes[1].deps.empty()) << "a refused edge was added";
  // A fresh name table: the old names are free, and unknown until reused.
  EXPECT_THROW((void)b.node("first"), cudag::error);
  auto again_first = b.empty("first");
  b.chain(p, q, again_first);
  EXPECT_EQ(b.node("first").index(), 2u);
  try {
    b.empty("q");
    FAIL() << "a duplicate name was accepted after build() &&";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()), "graph 'g': duplicate node name 'q'");
  }
  const cudag::graph_spec again = std::move(b).build();
  EXPECT_EQ(again.name, "g");
  EXPECT_EQ(again.nodes.size(), 3u);
  EXPECT_EQ(again.nodes[1].deps, (std::vector<std::string>{"p"}));
  EXPECT_EQ(again.nodes[2].deps, (std::vector<std::string>{"q"}));
  cudag::check(again);
  EXPECT_THROW(b.edge(p, q), cudag::error) << "refs of the second build were accepted";
}
