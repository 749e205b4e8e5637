// Graph diff as data and text: pairing by name, the exact line of every
// change kind and of every field of every node kind, nested paths, order,
// same_topology, bounded text, hostile names, nesting limits.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cudag/diff.hpp"
#include "cudag/error.hpp"
#include "diff/diff_helpers.hpp"

namespace cudag {
namespace {
using namespace diff_test;

graph_spec one(node n) { return graph({std::move(n)}); }

std::string text_of(const graph_spec& before, const graph_spec& after) {
  return diff(before, after).text();
}

// The line diff() gives when the single node `before` becomes `after`.
std::string node_text(node before, node after) {
  return text_of(one(std::move(before)), one(std::move(after)));
}

TEST(Diff, IdenticalSpecsHaveNoChanges) {
  const graph_spec g = graph({empty("a"), make_node("b", kernel({param<int>("n")}), {"a"})},
                             {declare<int>("n")}, {declare_condition("c")});
  const spec_diff d = diff(g, g);
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(d.same_topology());
  EXPECT_EQ(d.text(), "");
}

TEST(Diff, ReorderedDeclarationsGiveAnEmptyDiff) {
  const auto body = [](bool reversed) {
    std::vector<node> nodes{empty("x"), make_node("y", kernel(), {"x"}), empty("z", {"x", "y"})};
    if (reversed) {
      std::swap(nodes[0], nodes[2]);
      nodes[0].deps = {"y", "x"};
    }
    return graph(std::move(nodes));
  };
  const auto spec = [&](bool reversed) {
    std::vector<node> nodes{
        empty("a"),
        make_node("b", kernel({param<float*>("x"), param<int>("n")}), {"a"}),
        make_node("stage", child_of(body(reversed)), {"a", "b"}),
        make_node("branch", conditional(conditional_kind::if_else, "c", {body(reversed), body(!reversed)}),
                  {"stage", "b"})};
    std::vector<param_decl> params{declare<float*>("x"), declare<int>("n")};
    std::vector<condition_decl> conditions{declare_condition("c"), declare_condition("d", 1)};
    if (reversed) {
      std::swap(nodes[0], nodes[3]);
      std::swap(nodes[1], nodes[2]);
      nodes[0].deps = {"b", "stage"};
      nodes[1].deps = {"b", "a"};
      std::swap(params[0], params[1]);
      std::swap(conditions[0], conditions[1]);
    }
    return graph(std::move(nodes), std::move(params), std::move(conditions));
  };
  const graph_spec before = spec(false);
  const graph_spec after = spec(true);
  ASSERT_NE(before.nodes[0].name, after.nodes[0].name) << "the test reorders";
  const spec_diff d = diff(before, after);
  EXPECT_TRUE(d.empty()) << d.text();
  // The bodies of 'branch' are swapped in the reversed spec on purpose: the
  // same nodes, declared in another order within each body.
  EXPECT_TRUE(diff(after, before).empty());
}

TEST(Diff, AddedAndRemovedNodesInTheAfterSpecsOrder) {
  kernel_node k4 = kernel(), k8 = kernel();
  k8.grid = dim3(8, 1, 1);
  const graph_spec before = graph({make_node("p", k4), empty("q"), make_node("r", k4)});
  const graph_spec after =
      graph({make_node("r", k8), make_node("s", memset_of(param<void*>("y")), {"r"}),
             make_node("p", k8, {"s"})});
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(),
            "changed r: grid (4,1,1) -> (8,1,1)\n"
            "added s: memset\n"
            "changed p: grid (4,1,1) -> (8,1,1)\n"
            "added edge 's' -> 'p'\n"
            "removed q: empty\n");
  ASSERT_EQ(d.changes.size(), 5u);
  EXPECT_EQ(d.changes[1], (spec_change{change_kind::node_added, "s", "memset"}));
  EXPECT_EQ(d.changes[3], (spec_change{change_kind::edge_added, "p", "edge 's' -> 'p'"}));
  EXPECT_EQ(d.changes[4], (spec_change{change_kind::node_removed, "q", "empty"}));
  EXPECT_FALSE(d.same_topology());
}

TEST(Diff, EdgesAddedAndRemovedOncePerDependency) {
  const graph_spec before = graph({empty("a"), empty("c"), empty("b", {"a", "a", "c"})});
  const graph_spec after = graph({empty("b", {"c", "d", "d"}), empty("a"), empty("c"), empty("d")});
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(),
            "added edge 'd' -> 'b'\n"
            "removed edge 'a' -> 'b'\n"
            "added d: empty\n");
  EXPECT_EQ(d.changes[1].kind, change_kind::edge_removed);
  EXPECT_EQ(d.changes[1].node, "b");
  EXPECT_FALSE(d.same_topology());
  // The same dependencies in another order, or repeated: no change.
  EXPECT_TRUE(diff(graph({empty("a"), empty("c"), empty("b", {"a", "c"})}),
                   graph({empty("a"), empty("c"), empty("b", {"c", "a", "c"})}))
                  .empty());
}

// p -> c of kind `pc`, p -> d of kind `pd`, c -> d full; c and d marked as
// synchronizing their grid dependencies when `marked`.
graph_spec launched_early(edge_kind pc, edge_kind pd, bool marked = true) {
  kernel_node k = kernel();
  k.synchronizes_grid_dependencies = marked;
  node c = make_node("c", k, {"p"});
  node d = make_node("d", k, {"c", "p"});
  if (pc != edge_kind::full) c.dependency_kinds = {pc};
  if (pd != edge_kind::full) d.dependency_kinds = {edge_kind::full, pd};
  return graph({make_node("p", kernel()), std::move(c), std::move(d)});
}

TEST(Diff, AnEdgeOfAnotherKindIsReportedAndIsAnotherTopology) {
  const graph_spec before = launched_early(edge_kind::full, edge_kind::programmatic);
  const graph_spec after = launched_early(edge_kind::programmatic, edge_kind::launch_completion);
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(),
            "edge 'p' -> 'c' changes kind: full -> programmatic\n"
            "edge 'p' -> 'd' changes kind: programmatic -> launch_completion\n");
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0], (spec_change{change_kind::edge_kind_changed, "c",
                                       "edge 'p' -> 'c' changes kind: full -> programmatic"}));
  EXPECT_EQ(d.changes[1].node, "d");
  EXPECT_FALSE(d.same_topology());
  EXPECT_EQ(change_kind_name(change_kind::edge_kind_changed), "edge_kind_changed");
  // Back again, and to every edge full (no kinds listed at all).
  EXPECT_EQ(diff(after, before).text(),
            "edge 'p' -> 'c' changes kind: programmatic -> full\n"
            "edge 'p' -> 'd' changes kind: launch_completion -> programmatic\n");
  EXPECT_EQ(diff(before, launched_early(edge_kind::full, edge_kind::full)).text(),
            "edge 'p' -> 'd' changes kind: programmatic -> full\n");
}

TEST(Diff, EdgeKindsPairByDependencyNotByPosition) {
  // The same edges and kinds listed in another order, or the kinds of full
  // edges listed outright: no change.
  graph_spec before = launched_early(edge_kind::programmatic, edge_kind::launch_completion);
  graph_spec reordered = before;
  node& d = reordered.nodes[2];
  std::swap(d.deps[0], d.deps[1]);
  std::swap(d.dependency_kinds[0], d.dependency_kinds[1]);
  EXPECT_TRUE(diff(before, reordered).empty()) << diff(before, reordered).text();
  graph_spec spelled_out = launched_early(edge_kind::full, edge_kind::full);
  spelled_out.nodes[1].dependency_kinds = {edge_kind::full};
  spelled_out.nodes[2].dependency_kinds = {edge_kind::full, edge_kind::full};
  EXPECT_TRUE(diff(launched_early(edge_kind::full, edge_kind::full), spelled_out).empty());
  // An edge removed and another added beside a kind changed: each once.
  graph_spec after = before;
  after.nodes[2].deps = {"p"};
  after.nodes[2].dependency_kinds = {edge_kind::programmatic};
  EXPECT_EQ(diff(before, after).text(),
            "removed edge 'c' -> 'd'\n"
            "edge 'p' -> 'd' changes kind: launch_completion -> programmatic\n");
}

TEST(Diff, TheGridDependencyMarkerIsAChangeOfTheNode) {
  const graph_spec before = launched_early(edge_kind::full, edge_kind::full, false);
  const graph_spec after = launched_early(edge_kind::full, edge_kind::full, true);
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(),
            "changed c: synchronizes grid dependencies no -> yes\n"
            "changed d: synchronizes grid dependencies no -> yes\n");
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].kind, change_kind::params_changed);
  // CUDA never sees the marker: the same topology.
  EXPECT_TRUE(d.same_topology());
}

TEST(Diff, EdgeKindsInsideANestedGraphAreNamedByPath) {
  const graph_spec before = graph({make_node(
      "stage", child_of(launched_early(edge_kind::full, edge_kind::full)))});
  const graph_spec after = graph({make_node(
      "stage", child_of(launched_early(edge_kind::programmatic, edge_kind::full)))});
  EXPECT_EQ(diff(before, after).text(),
            "edge 'stage/p' -> 'stage/c' changes kind: full -> programmatic\n");
  EXPECT_EQ(diff(before, after).changes[0].node, "stage/c");
}

TEST(Diff, KindChanges) {
  EXPECT_EQ(node_text(make_node("k", kernel()), make_node("k", memset_of(param<void*>("y")))),
            "changed kind of k: kernel -> memset\n");
  const graph_spec body = graph({empty("e")});
  EXPECT_EQ(node_text(make_node("loop", conditional(conditional_kind::if_then, "c", {body})),
                      make_node("loop", conditional(conditional_kind::while_loop, "c", {body}))),
            "changed kind of loop: if with 1 body -> while with 1 body\n");
  EXPECT_EQ(node_text(make_node("sw", conditional(conditional_kind::switch_case, "c", {body, body})),
                      make_node("sw", conditional(conditional_kind::switch_case, "c",
                                                  {body, body, body}))),
            "changed kind of sw: switch with 2 bodies -> switch with 3 bodies\n");
  const spec_diff d = diff(one(make_node("k", kernel())), one(empty("k")));
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].kind, change_kind::kind_changed);
  EXPECT_FALSE(d.same_topology());
}

TEST(Diff, KernelFields) {
  const kernel_node base = kernel({param<float*>("x"), make_literal(2.0f), param<int>("n")});
  const auto changed = [&](auto edit) {
    kernel_node k = base;
    edit(k);
    return node_text(make_node("k", base), make_node("k", std::move(k)));
  };
  EXPECT_EQ(changed([](kernel_node& k) { k.function = reinterpret_cast<const void*>(&kernel_b); }),
            "changed k: function kernel_a -> kernel_a (another function)\n");
  EXPECT_EQ(changed([](kernel_node& k) {
              k.function = reinterpret_cast<const void*>(&kernel_b);
              k.function_name = "kernel_b";
            }),
            "changed k: function kernel_a -> kernel_b\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.grid = dim3(8, 1, 1); }),
            "changed k: grid (4,1,1) -> (8,1,1)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.grid = dim3(4, 1, 2); }),
            "changed k: grid (4,1,1) -> (4,1,2)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.block = dim3(128, 2, 1); }),
            "changed k: block (128,1,1) -> (128,2,1)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.shared_bytes = 1024; }),
            "changed k: shared bytes 0 -> 1024\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.grid_from = grid_rule{"n", 256}; }),
            "changed k: grid_from none -> ceil(n/256)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.shape_rules.push_back({launch_dim::grid_x, "batch", 4, 1}); }),
            "changed k: shape rules 0 -> 1\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.priority = 1; }), "changed k: priority 0 -> 1\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[0] = param<float*>("y"); }),
            "changed k: argument 0: param 'x' -> param 'y'\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[0] = buffer<float*>("tmp", 16); }),
            "changed k: argument 0: param 'x' -> buffer 'tmp'+16\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[1] = make_literal(3.5f); }),
            "changed k: argument 1: literal 2 -> literal 3.5\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[1] = make_literal(2.0); }),
            "changed k: argument 1: literal 2 (float) -> literal 2 (double)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[2] = make_literal(-3); }),
            "changed k: argument 2: param 'n' -> literal -3\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args[2] = condition("go"); }),
            "changed k: argument 2: param 'n' (int) -> condition 'go' (unsigned long long)\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args.push_back(buffer<float*>("tmp")); }),
            "changed k: arguments 3 -> 4\n");
  EXPECT_EQ(changed([](kernel_node& k) { k.args.pop_back(); }), "changed k: arguments 3 -> 2\n");
  // Several fields: one line each, in the order of the node's fields.
  EXPECT_EQ(changed([](kernel_node& k) {
              k.args[0] = param<float*>("y");
              k.priority = 2;
              k.grid = dim3(2, 2, 2);
            }),
            "changed k: grid (4,1,1) -> (2,2,2)\n"
            "changed k: priority 0 -> 2\n"
            "changed k: argument 0: param 'x' -> param 'y'\n");
  // keep_alive is not a parameter of the graph.
  EXPECT_EQ(changed([](kernel_node& k) { k.keep_alive = std::make_shared<int>(1); }), "");

  kernel_node ruled = base;
  ruled.grid_from = grid_rule{"n", 256};
  ruled.shape_rules.push_back({launch_dim::grid_x, "batch", 4, 1});
  kernel_node reruled = ruled;
  reruled.grid_from = grid_rule{"m", 128};
  reruled.shape_rules[0] = {launch_dim::block_y, "seq", 1, 2};
  EXPECT_EQ(node_text(make_node("k", ruled), make_node("k", reruled)),
            "changed k: grid_from ceil(n/256) -> ceil(m/128)\n"
            "changed k: shape rule 0: grid.x = ceil(batch * 4 / 1) -> block.y = ceil(seq * 1 / 2)\n");
}

TEST(Diff, LiteralsReadAsTheirTypes) {
  const auto arg = [](value before, value after) {
    return node_text(make_node("k", kernel({std::move(before)})),
                     make_node("k", kernel({std::move(after)})));
  };
  EXPECT_EQ(arg(make_literal(7u), make_literal(4000000000u)),
            "changed k: argument 0: literal 7 -> literal 4000000000\n");
  EXPECT_EQ(arg(make_literal<std::int64_t>(-1), make_literal<std::int64_t>(1)),
            "changed k: argument 0: literal -1 -> literal 1\n");
  EXPECT_EQ(arg(make_literal<short>(-2), make_literal<short>(2)),
            "changed k: argument 0: literal -2 -> literal 2\n");
  EXPECT_EQ(arg(make_literal(true), make_literal(false)),
            "changed k: argument 0: literal true -> literal false\n");
  EXPECT_EQ(arg(make_literal(0.1), make_literal(-1e300)),
            "changed k: argument 0: literal 0.1 -> literal -1e+300\n");
  EXPECT_EQ(arg(make_literal(reinterpret_cast<float*>(0x1000)), make_literal(static_cast<float*>(nullptr))),
            "changed k: argument 0: literal 0x0000000000001000 -> literal 0x0000000000000000\n");
  struct big {
    unsigned char bytes[20];
  };
  big b1{}, b2{};
  for (int i = 0; i < 20; ++i) b1.bytes[i] = static_cast<unsigned char>(i);
  b2 = b1;
  b2.bytes[19] = 0xAB;
  EXPECT_EQ(arg(make_literal(b1), make_literal(b2)),
            "changed k: argument 0: literal bytes 000102030405060708090A0B0C0D0E0F... (20 bytes) -> "
            "literal bytes 000102030405060708090A0B0C0D0E0F... (20 bytes)\n");
  struct twelve {
    unsigned char bytes[12];
  };
  twelve t1{}, t2{};
  t2.bytes[11] = 1;
  EXPECT_EQ(arg(make_literal(t1), make_literal(t2)),
            "changed k: argument 0: literal bytes 000000000000000000000000 (12 bytes) -> "
            "literal bytes 000000000000000000000001 (12 bytes)\n");
}

TEST(Diff, MemcpyAndMemsetFields) {
  const memcpy_node copy = memcpy_of(param<void*>("dst"), param<const void*>("src"), 1024);
  const auto copy_changed = [&](auto edit) {
    memcpy_node c = copy;
    edit(c);
    return node_text(make_node("c", copy), make_node("c", c));
  };
  EXPECT_EQ(copy_changed([](memcpy_node& c) { c.dst = param<void*>("dst2"); }),
            "changed c: dst: param 'dst' -> param 'dst2'\n");
  EXPECT_EQ(copy_changed([](memcpy_node& c) { c.src = buffer<const void*>("tmp", 8); }),
            "changed c: src: param 'src' -> buffer 'tmp'+8\n");
  EXPECT_EQ(copy_changed([](memcpy_node& c) { c.bytes = 2048; }), "changed c: bytes 1024 -> 2048\n");
  EXPECT_EQ(copy_changed([](memcpy_node& c) { c.kind = cudaMemcpyDeviceToDevice; }),
            "changed c: copy kind default -> device to device\n");
  EXPECT_EQ(copy_changed([](memcpy_node& c) { c.kind = cudaMemcpyHostToDevice; }),
            "changed c: copy kind default -> host to device\n");

  const memset_node set = memset_of(param<void*>("y"), 256);
  const auto set_changed = [&](auto edit) {
    memset_node s = set;
    edit(s);
    return node_text(make_node("s", set), make_node("s", s));
  };
  EXPECT_EQ(set_changed([](memset_node& s) { s.dst = buffer<void*>("tmp"); }),
            "changed s: dst: param 'y' -> buffer 'tmp'\n");
  EXPECT_EQ(set_changed([](memset_node& s) { s.fill = make_literal(1u); }),
            "changed s: fill: literal 0 -> literal 1\n");
  EXPECT_EQ(set_changed([](memset_node& s) { s.element_size = 2; }),
            "changed s: element size 4 -> 2\n");
  EXPECT_EQ(set_changed([](memset_node& s) { s.width = 512; }), "changed s: width 256 -> 512\n");
  EXPECT_EQ(set_changed([](memset_node& s) { s.height = 3; }), "changed s: height 1 -> 3\n");
  EXPECT_EQ(set_changed([](memset_node& s) { s.pitch_bytes = 1024; }),
            "changed s: pitch bytes 0 -> 1024\n");
}

TEST(Diff, HostAndCapturedCallablesByIdentity) {
  const auto fn = some_host_function();
  const host_node h{fn, {param<int>("n")}};
  EXPECT_EQ(node_text(make_node("h", h), make_node("h", host_node{fn, {param<int>("n")}})), "");
  EXPECT_EQ(node_text(make_node("h", h), make_node("h", host_node{some_host_function(), {param<int>("n")}})),
            "changed h: host function replaced by another\n");
  EXPECT_EQ(node_text(make_node("h", h), make_node("h", host_node{fn, {param<int>("m")}})),
            "changed h: argument 0: param 'n' -> param 'm'\n");

  const auto rec = std::make_shared<const capture_function>([](cudaStream_t, std::span<const void* const>) {});
  const auto rec2 = std::make_shared<const capture_function>(*rec);
  const captured_node g{rec, {param<float*>("x")}, "gemm 64"};
  EXPECT_EQ(node_text(make_node("g", g), make_node("g", captured_node{rec, {param<float*>("x")}, "gemm 64"})),
            "");
  EXPECT_EQ(node_text(make_node("g", g), make_node("g", captured_node{rec2, {param<float*>("x")}, "gemm 64"})),
            "changed g: recording replaced by another\n");
  EXPECT_EQ(node_text(make_node("g", g), make_node("g", captured_node{rec, {param<float*>("x")}, "gemm 128"})),
            "changed g: what 'gemm 64' -> 'gemm 128'\n");
  EXPECT_EQ(node_text(make_node("g", g), make_node("g", captured_node{rec, {}, "gemm 64"})),
            "changed g: arguments 1 -> 0\n");
}

TEST(Diff, ChildEventMemoryAndConditionalFields) {
  EXPECT_EQ(node_text(make_node("sub", child_of(graph({empty("e")}, {}, {}, "helper"))),
                      make_node("sub", child_of(graph({empty("e")}, {}, {}, "helper2")))),
            "changed sub: child graph name 'helper' -> 'helper2'\n");
  EXPECT_EQ(node_text(make_node("sub", child_node{}),
                      make_node("sub", child_of(graph({empty("e")}, {}, {}, "helper")))),
            "changed sub: child graph none -> 'helper'\n"
            "added sub/e: empty\n");
  EXPECT_EQ(node_text(make_node("sub", child_of(graph({empty("e")}))), make_node("sub", child_node{})),
            "changed sub: child graph '' -> none\n"
            "removed sub/e: empty\n");
  EXPECT_EQ(node_text(empty("e"), empty("e")), "");

  EXPECT_EQ(node_text(make_node("r", event_record_node{param<cudaEvent_t>("e1")}),
                      make_node("r", event_record_node{param<cudaEvent_t>("e2")})),
            "changed r: event: param 'e1' -> param 'e2'\n");
  EXPECT_EQ(node_text(make_node("w", event_wait_node{param<cudaEvent_t>("e1")}),
                      make_node("w", event_wait_node{param<cudaEvent_t>("e3")})),
            "changed w: event: param 'e1' -> param 'e3'\n");
  EXPECT_EQ(node_text(make_node("r", event_record_node{param<cudaEvent_t>("e1")}),
                      make_node("r", event_wait_node{param<cudaEvent_t>("e1")})),
            "changed kind of r: event_record -> event_wait\n");

  EXPECT_EQ(node_text(make_node("al", mem_alloc_node{"tmp", 1024, -1}),
                      make_node("al", mem_alloc_node{"tmp2", 2048, 0})),
            "changed al: buffer 'tmp' -> 'tmp2'\n"
            "changed al: bytes 1024 -> 2048\n"
            "changed al: device -1 -> 0\n");
  EXPECT_EQ(node_text(make_node("fr", mem_free_node{"tmp"}), make_node("fr", mem_free_node{"tmp2"})),
            "changed fr: buffer 'tmp' -> 'tmp2'\n");

  const graph_spec body = graph({empty("e")});
  EXPECT_EQ(node_text(make_node("loop", conditional(conditional_kind::while_loop, "c", {body})),
                      make_node("loop", conditional(conditional_kind::while_loop, "d", {body}))),
            "changed loop: condition 'c' -> 'd'\n");
  EXPECT_TRUE(diff(one(make_node("loop", conditional(conditional_kind::while_loop, "c", {body}))),
                   one(make_node("loop", conditional(conditional_kind::while_loop, "d", {body}))))
                  .same_topology());
}

TEST(Diff, Declarations) {
  const graph_spec before =
      graph({}, {declare<float*>("x"), declare<int>("n"), declare<float*>("e", true), declare<int>("old")},
            {declare_condition("go"), declare_condition("stop", 1, false), declare_condition("gone")});
  const graph_spec after =
      graph({}, {declare<long>("n"), declare<float*>("x"), declare<float*>("e"), declare<int>("new1")},
            {declare_condition("go", 1), declare_condition("stop", 1, true),
             declare_condition("fresh", 2)});
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(),
            "changed declaration of n: param type int -> long\n"
            "changed declaration of e: param external buffer yes -> no\n"
            "changed declaration of new1: param added (int)\n"
            "changed declaration of old: param removed (int)\n"
            "changed declaration of go: condition default 0 -> 1\n"
            "changed declaration of stop: condition reset at every launch no -> yes\n"
            "changed declaration of fresh: condition added (default 2, reset at every launch)\n"
            "changed declaration of gone: condition removed (default 0, reset at every launch)\n");
  EXPECT_EQ(d.changes[0], (spec_change{change_kind::declaration_changed, "n", "param type int -> long"}));
  EXPECT_TRUE(d.same_topology()) << "declarations are not topology";
  EXPECT_EQ(text_of(graph({}, {declare<float*>("buf", true)}), graph({})),
            "changed declaration of buf: param removed (float*, external buffer)\n");
  EXPECT_EQ(text_of(graph({}), graph({}, {}, {declare_condition("k", 0, false)})),
            "changed declaration of k: condition added (default 0, kept between launches)\n");
}

// before: a; stage (child: fill, b after fill, loop: while go { inner }) after a;
// br (if_else c: { w1 } { write }) after stage.
graph_spec nested_spec(bool changed) {
  kernel_node fill = kernel();
  kernel_node inner = kernel();
  kernel_node write = kernel({param<float*>("x")});
  std::vector<node> stage_nodes{make_node("fill", fill), empty("b", {"fill"}),
                                make_node("loop", conditional(conditional_kind::while_loop, "go",
                                                              {graph({make_node("inner", inner)})}))};
  if (changed) {
    std::get<kernel_node>(stage_nodes[0].params).grid = dim3(8, 1, 1);
    stage_nodes[1].deps.clear();
    stage_nodes.push_back(empty("extra"));
    std::get<conditional_node>(stage_nodes[2].params).bodies[0].nodes[0].params =
        [] {
          kernel_node k = kernel();
          k.block = dim3(64, 1, 1);
          return k;
        }();
    write.args[0] = param<float*>("y");
  }
  std::vector<node> top{
      empty("a"), make_node("stage", child_of(graph(std::move(stage_nodes))), {"a"}),
      make_node("br",
                conditional(conditional_kind::if_else, "c",
                            {graph({empty("w1")}), graph({make_node("write", write)})}),
                {"stage"})};
  if (changed) top.push_back(empty("z"));
  return graph(std::move(top));
}

TEST(Diff, NestedNodesByPathGraphByGraph) {
  const spec_diff d = diff(nested_spec(false), nested_spec(true));
  EXPECT_EQ(d.text(),
            "added z: empty\n"
            "changed stage/fill: grid (4,1,1) -> (8,1,1)\n"
            "removed edge 'stage/fill' -> 'stage/b'\n"
            "added stage/extra: empty\n"
            "changed stage/loop/inner: block (128,1,1) -> (64,1,1)\n"
            "changed br[1]/write: argument 0: param 'x' -> param 'y'\n");
  ASSERT_EQ(d.changes.size(), 6u);
  EXPECT_EQ(d.changes[2].node, "stage/b");
  EXPECT_EQ(d.changes[4].node, "stage/loop/inner");
  EXPECT_EQ(d.changes[5].node, "br[1]/write");
  EXPECT_FALSE(d.same_topology());

  // Only parameter changes, nested: the topology is the same.
  graph_spec params_only = nested_spec(false);
  auto stage = std::make_shared<graph_spec>(*std::get<child_node>(params_only.nodes[1].params).graph);
  std::get<kernel_node>(stage->nodes[0].params).shared_bytes = 64;
  std::get<child_node>(params_only.nodes[1].params).graph = stage;
  const spec_diff p = diff(nested_spec(false), params_only);
  EXPECT_EQ(p.text(), "changed stage/fill: shared bytes 0 -> 64\n");
  EXPECT_TRUE(p.same_topology());
  // A nested node added is a topology change.
  stage->nodes.push_back(empty("new"));
  EXPECT_FALSE(diff(nested_spec(false), params_only).same_topology());
}

TEST(Diff, ChildGraphsSharedByBothSpecsAreNotCompared) {
  auto shared = std::make_shared<const graph_spec>(graph({empty("e")}));
  const graph_spec g = graph({make_node("sub", child_node{shared})});
  EXPECT_TRUE(diff(g, g).empty());
  // A copy of the same graph compares equal too, by content.
  const graph_spec copy = graph({make_node("sub", child_of(*shared))});
  EXPECT_TRUE(diff(g, copy).empty());
}

TEST(Diff, NamesDeclaredTwicePairByTheirFirstDeclaration) {
  kernel_node k8 = kernel();
  k8.grid = dim3(8, 1, 1);
  EXPECT_EQ(text_of(graph({make_node("x", kernel()), make_node("x", memset_of(param<void*>("y")))}),
                    graph({make_node("x", k8)})),
            "changed x: grid (4,1,1) -> (8,1,1)\n"
            "removed x: memset\n");
  EXPECT_EQ(text_of(graph({make_node("x", kernel())}), graph({make_node("x", kernel()), empty("x")})),
            "added x: empty\n");
}

TEST(Diff, TextCanBeCut) {
  const graph_spec before = graph({});
  const graph_spec after = graph({empty("a"), empty("b"), empty("c"), empty("d"), empty("e")});
  const spec_diff d = diff(before, after);
  EXPECT_EQ(d.text(2), "added a: empty\nadded b: empty\n... and 3 more changes\n");
  EXPECT_EQ(d.text(4), "added a: empty\nadded b: empty\nadded c: empty\nadded d: empty\n"
                       "... and 1 more change\n");
  EXPECT_EQ(d.text(5), d.text());
  EXPECT_EQ(d.text(100), d.text());
  EXPECT_EQ(d.text(0), "... and 5 more changes\n");
  // The text for a refused update's message.
  EXPECT_EQ(diff_text(before, after, 3), "added a: empty\nadded b: empty\nadded c: empty\n"
                                         "... and 2 more changes\n");
  EXPECT_EQ(diff_text(before, after), d.text());
  EXPECT_EQ(diff_text(after, after), "");
  EXPECT_EQ(change_kind_name(change_kind::params_changed), "params_changed");
  EXPECT_EQ(change_kind_name(change_kind::declaration_changed), "declaration_changed");
}

TEST(Diff, HostileNamesStayOnOneBoundedLine) {
  using namespace std::string_literals;
  const std::string long_name(20000, 'L');
  const std::string hostile = "two\nlines\0nul\xff"s;
  const graph_spec before = graph({empty("a")});
  const graph_spec after = graph({empty("a", {hostile}), empty(hostile), empty(long_name)});
  const spec_diff d = diff(before, after);
  ASSERT_EQ(d.changes.size(), 3u);
  EXPECT_EQ(d.changes[1].node, hostile) << "the node's path is kept as it is";
  const std::string text = d.text();
  EXPECT_EQ(text.substr(0, text.find("added two")),
            "added edge 'two\\x0Alines\\x00nul\\xFF' -> 'a'\n");
  EXPECT_NE(text.find("added two\\x0Alines\\x00nul\\xFF: empty\n"), std::string::npos) << text;
  EXPECT_NE(text.find("... (20000 bytes): empty\n"), std::string::npos) << text;
  EXPECT_LT(text.size(), 1000u);
  std::size_t lines = 0;
  for (char c : text) {
    lines += c == '\n';
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << int(c);
  }
  EXPECT_EQ(lines, d.changes.size());
}

graph_spec nested_loops(std::size_t depth, unsigned grid) {
  kernel_node k = kernel();
  k.grid = dim3(grid, 1, 1);
  graph_spec g = graph({make_node("k", k)});
  for (std::size_t i = 0; i < depth; ++i)
    g = graph({make_node("loop", conditional(conditional_kind::while_loop, "c", {std::move(g)}))});
  return g;
}

std::string loop_path(std::size_t depth) {
  std::string path = "loop";
  for (std::size_t i = 1; i < depth; ++i) path += "/loop";
  return path;
}

TEST(Diff, NestingBeyondTheLimitIsRefusedNamingTheNode) {
  const spec_diff d = diff(nested_loops(64, 4), nested_loops(64, 8));
  EXPECT_EQ(d.text(), "changed " + loop_path(64) + "/k: grid (4,1,1) -> (8,1,1)\n");
  try {
    (void)diff(nested_loops(65, 4), nested_loops(65, 8));
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 64 deep"), std::string::npos) << e.what();
    EXPECT_EQ(e.node(), loop_path(65));
  }
}

TEST(Diff, ChildGraphContainingItselfIsRefused) {
  auto first = std::make_shared<graph_spec>();
  first->nodes.push_back(make_node("again", child_node{first}));
  auto second = std::make_shared<graph_spec>();
  second->nodes.push_back(make_node("again", child_node{second}));
  const graph_spec before = graph({make_node("outer", child_node{first})});
  const graph_spec after = graph({make_node("outer", child_node{second})});
  try {
    (void)diff(before, after);
    ADD_FAILURE() << "expected cudag::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("the child graph of 'outer/again' in the 'before' spec "
                                         "contains itself"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.node(), "outer/again");
  }
  // The same graph on both sides is not descended into.
  EXPECT_TRUE(diff(before, before).empty());
  first->nodes.clear();  // break the ownership cycles
  second->nodes.clear();
}

}  // namespace
}  // namespace cudag
