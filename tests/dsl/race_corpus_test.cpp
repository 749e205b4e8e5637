// The race rule, both front ends of it: small DSL graphs, each with its
// expected verdict. The compile-time verdict is the type graph() returns
// (race<"first", "second", "memory"> where it refuses); the run-time verdict
// is check() on the spec the DSL writes. A racy graph has no spec (graph()
// refuses it), so its run-time twin is the spec of its fixed version with
// the fix taken out again (the edge dropped, the declaration undone): what
// to_spec() would write for the racy declaration.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include "cudag/check.hpp"
#include "cudag/dsl.hpp"
#include "cudag/native_recorder.hpp"

namespace {

void write_all(float* p, int count) { (void)p, (void)count; }
void read_all(const float* p, int count) { (void)p, (void)count; }
void count_into(float* histogram, const float* keys, int count) { (void)histogram, (void)keys, (void)count; }
void set_flag(cudaGraphConditionalHandle h, int limit) { (void)h, (void)limit; }

using namespace cudag::dsl;
using cudag::graph_spec;
constexpr auto x = param<"x", float*>;
constexpr auto y = param<"y", float*>;
constexpr auto n = param<"n", int>;
constexpr auto tmp = buffer<"tmp", float>;
constexpr auto go = condition<"go">;

template <fixed_string Name, class Pointer>
constexpr auto writes(const Pointer& p) {
  return kernel<Name, write_all>(1, 128, p, n);
}
template <fixed_string Name, class Pointer>
constexpr auto reads(const Pointer& p) {
  return kernel<Name, read_all>(1, 128, p, n);
}
/// `T*` parameters the kernel only reads, declared so.
template <fixed_string Name, class Pointer>
constexpr auto reads_declared(const Pointer& p) {
  return with_access<0, access_mode::read>(kernel<Name, write_all>(1, 128, p, n));
}
/// Atomic updates of `histogram`.
template <fixed_string Name, class Pointer>
constexpr auto counts(const Pointer& histogram) {
  return with_access<0, access_mode::concurrent>(kernel<Name, count_into>(1, 128, histogram, y, n));
}

// ------------------------------------------------------ verdict helpers --
template <class Result>
constexpr bool accepted = !std::is_base_of_v<detail::refused_graph, std::remove_cvref_t<Result>>;
template <class Result, fixed_string First, fixed_string Second, fixed_string Memory>
constexpr bool refused_as = std::is_same_v<std::remove_cvref_t<Result>, race<First, Second, Memory>>;

/// The graph of `spec` at `path` ("" the top level, "stage" a child node's
/// graph, "maybe[0]" a conditional node's body), changed by `change`.
void change_graph(graph_spec& spec, std::string_view path,
                  const std::function<void(graph_spec&)>& change) {
  if (path.empty()) return change(spec);
  const std::size_t slash = path.find('/');
  const std::string_view head = path.substr(0, slash);
  const std::string_view rest = slash == std::string_view::npos ? "" : path.substr(slash + 1);
  const std::size_t bracket = head.find('[');
  const std::string_view name = head.substr(0, bracket);
  for (cudag::node& node : spec.nodes) {
    if (node.name != name) continue;
    if (auto* c = std::get_if<cudag::child_node>(&node.params)) {
      auto inner = std::make_shared<graph_spec>(*c->graph);
      change_graph(*inner, rest, change);
      c->graph = std::move(inner);
      return;
    }
    auto& conditional = std::get<cudag::conditional_node>(node.params);
    const std::size_t body = std::stoul(std::string(head.substr(bracket + 1)));
    return change_graph(conditional.bodies.at(body), rest, change);
  }
  FAIL() << "no node " << name;
}

cudag::node& node_named(graph_spec& g, std::string_view name) {
  for (cudag::node& node : g.nodes)
    if (node.name == name) return node;
  throw std::runtime_error("no node " + std::string(name));
}

/// `spec` without the edge from -> to of the graph at `path`.
graph_spec without_edge(graph_spec spec, std::string_view from, std::string_view to,
                        std::string_view path = "") {
  change_graph(spec, path, [&](graph_spec& g) {
    auto& deps = node_named(g, to).deps;
    const std::size_t before = deps.size();
    for (std::size_t k = 0; k < deps.size(); ++k)
      if (deps[k] == from) {
        deps.erase(deps.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
    ASSERT_EQ(deps.size() + 1, before) << "no edge " << from << " -> " << to;
  });
  return spec;
}

/// `spec` with kernel node `name`'s declarations dropped.
graph_spec without_declarations(graph_spec spec, std::string_view name) {
  auto& kernel = std::get<cudag::kernel_node>(node_named(spec, name).params);
  EXPECT_FALSE(kernel.accesses.empty());
  kernel.accesses.clear();
  return spec;
}

void expect_accepted(const graph_spec& spec) { EXPECT_NO_THROW(cudag::check(spec)); }

/// check() refuses `spec` with a race naming both nodes (`first` and
/// `second`: contained in the names check() gives, which are paths) and
/// the memory.
void expect_race(const graph_spec& spec, std::string_view first, std::string_view second,
                 std::string_view memory) {
  try {
    cudag::check(spec);
    ADD_FAILURE() << "check() accepted the racy graph";
  } catch (const cudag::check_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("race: ", 0), 0u) << message;
    EXPECT_NE(message.find(std::string(first)), std::string::npos) << message;
    EXPECT_NE(message.find(std::string(second)), std::string::npos) << message;
    EXPECT_NE(message.find("'" + std::string(memory) + "'"), std::string::npos) << message;
  }
}

// ================================================================ chains --
// 1-2: a chain a -> b, then c reading without its edge.
constexpr auto chain_fixed =
    graph(writes<"a">(x), writes<"b">(x), reads<"c">(x), chain<"a", "b", "c">);
static_assert(accepted<decltype(chain_fixed)>);
static_assert(refused_as<decltype(graph(writes<"a">(x), writes<"b">(x), reads<"c">(x),
                                        edge<"a", "b">)),
                         "b", "c", "x">);
// 3-4: two writers, no edge at all.
constexpr auto writers_fixed = graph(writes<"first">(x), writes<"second">(x), edge<"first", "second">);
static_assert(refused_as<decltype(graph(writes<"first">(x), writes<"second">(x))), "first",
                         "second", "x">);
// 5: two writers of different memory need no edge.
constexpr auto separate_memory = graph(writes<"a">(x), writes<"b">(y));
static_assert(accepted<decltype(separate_memory)>);

TEST(RaceCorpus, Chains) {
  expect_accepted(to_spec(chain_fixed));
  expect_race(without_edge(to_spec(chain_fixed), "b", "c"), "b", "c", "x");
  expect_accepted(to_spec(writers_fixed));
  expect_race(without_edge(to_spec(writers_fixed), "first", "second"), "first", "second", "x");
  expect_accepted(to_spec(separate_memory));
}

// ============================================================ fork-joins --
// 6-7: a fork whose branches read and write x, joined after.
constexpr auto fork_fixed =
    graph(writes<"source">(x), reads<"left">(x), writes<"right">(x), empty<"join">(),
          fan_out<"source", "left", "right">, fan_in<"join", "left", "right">, edge<"left", "right">);
static_assert(refused_as<decltype(graph(writes<"source">(x), reads<"left">(x), writes<"right">(x),
                                        empty<"join">(), fan_out<"source", "left", "right">,
                                        fan_in<"join", "left", "right">)),
                         "left", "right", "x">);
// 8: branches that both read: no race.
constexpr auto fork_of_readers =
    graph(writes<"source">(x), reads<"left">(x), reads<"right">(x), writes<"sink">(x),
          fan_out<"source", "left", "right">, fan_in<"sink", "left", "right">);
static_assert(accepted<decltype(fork_of_readers)>);
// 9-10: the join writes while a branch's reader is not joined.
constexpr auto join_fixed = graph(writes<"source">(x), reads<"left">(x), reads<"right">(x),
                                  writes<"sink">(x), fan_out<"source", "left", "right">,
                                  fan_in<"sink", "left", "right">);
static_assert(refused_as<decltype(graph(writes<"source">(x), reads<"left">(x), reads<"right">(x),
                                        writes<"sink">(x), fan_out<"source", "left", "right">,
                                        edge<"left", "sink">)),
                         "right", "sink", "x">);

TEST(RaceCorpus, ForkJoins) {
  expect_accepted(to_spec(fork_fixed));
  expect_race(without_edge(to_spec(fork_fixed), "left", "right"), "left", "right", "x");
  expect_accepted(to_spec(fork_of_readers));
  expect_accepted(to_spec(join_fixed));
  expect_race(without_edge(to_spec(join_fixed), "right", "sink"), "right", "sink", "x");
}

// =================================================== conditional bodies --
// 11-12: inside an if body (the body's graph() refuses it).
constexpr auto body_fixed = graph(writes<"fill">(x), reads<"use">(x), edge<"fill", "use">);
constexpr auto in_body_fixed = graph(kernel<"decide", set_flag>(1, 1, go, 4),
                                     if_then<"maybe">(go, body_fixed), edge<"decide", "maybe">);
static_assert(refused_as<decltype(graph(writes<"fill">(x), reads<"use">(x))), "fill", "use", "x">);
// 13-14: a body writing y, a top-level reader of y not ordered with it:
// the conditional node touches y for its body.
constexpr auto writes_y = graph(writes<"produce">(y));
constexpr auto body_and_top_fixed =
    graph(kernel<"decide", set_flag>(1, 1, go, 4), if_then<"maybe">(go, writes_y), reads<"after">(y),
          chain<"decide", "maybe", "after">);
static_assert(refused_as<decltype(graph(kernel<"decide", set_flag>(1, 1, go, 4),
                                        if_then<"maybe">(go, writes_y), reads<"after">(y),
                                        edge<"decide", "maybe">)),
                         "maybe", "after", "y">);

TEST(RaceCorpus, ConditionalBodies) {
  expect_accepted(to_spec(in_body_fixed));
  expect_race(without_edge(to_spec(in_body_fixed), "fill", "use", "maybe[0]"), "fill", "use", "x");
  expect_accepted(to_spec(body_and_top_fixed));
  // check() names the node inside the body by its path.
  expect_race(without_edge(to_spec(body_and_top_fixed), "maybe", "after"), "maybe/produce", "after",
              "y");
}

// ========================================================== child graphs --
// 15-16: inside a child graph.
constexpr auto stage_fixed = graph(writes<"inner_a">(x), writes<"inner_b">(x), edge<"inner_a", "inner_b">);
constexpr auto in_child_fixed = graph(child<"stage">(stage_fixed));
static_assert(refused_as<decltype(graph(writes<"inner_a">(x), writes<"inner_b">(x))), "inner_a",
                         "inner_b", "x">);
// 17-18: between a child graph and a top-level node, named by the child node.
constexpr auto stage_writes = graph(writes<"inner">(x));
constexpr auto child_and_top_fixed =
    graph(child<"stage">(stage_writes), reads<"report">(x), edge<"stage", "report">);
static_assert(refused_as<decltype(graph(child<"stage">(stage_writes), reads<"report">(x))), "stage",
                         "report", "x">);
// 19: a child graph that only reads, beside a reader.
constexpr auto stage_reads = graph(reads<"inner">(x));
constexpr auto readers_around_child = graph(child<"stage">(stage_reads), reads<"report">(x));
static_assert(accepted<decltype(readers_around_child)>);

TEST(RaceCorpus, ChildGraphs) {
  expect_accepted(to_spec(in_child_fixed));
  expect_race(without_edge(to_spec(in_child_fixed), "inner_a", "inner_b", "stage"), "inner_a",
              "inner_b", "x");
  expect_accepted(to_spec(child_and_top_fixed));
  expect_race(without_edge(to_spec(child_and_top_fixed), "stage", "report"), "stage/inner", "report",
              "x");
  expect_accepted(to_spec(readers_around_child));
}

// ===================================================== memcpy and memset --
// 20-21: a memcpy writes y while a kernel reads it.
constexpr auto copy_fixed =
    graph(memcpy<"copy">(y, x, 1024), reads<"consume">(y), edge<"copy", "consume">);
static_assert(refused_as<decltype(graph(memcpy<"copy">(y, x, 1024), reads<"consume">(y))), "copy",
                         "consume", "y">);
// 22: a memcpy reads x beside a kernel reading it: no race.
constexpr auto copy_beside_reader = graph(memcpy<"copy">(y, x, 1024), reads<"peek">(x));
static_assert(accepted<decltype(copy_beside_reader)>);
// 23-24: a memset clears x while a kernel writes it.
constexpr auto clear_fixed =
    graph(memset<"clear">(x, 0.0f, 256), writes<"fill">(x), edge<"clear", "fill">);
static_assert(refused_as<decltype(graph(memset<"clear">(x, 0.0f, 256), writes<"fill">(x))), "clear",
                         "fill", "x">);
// 25-26: a memcpy's source written by a kernel it is not ordered with.
constexpr auto source_fixed =
    graph(writes<"produce">(x), memcpy<"copy">(y, x, 1024), edge<"produce", "copy">);
static_assert(refused_as<decltype(graph(writes<"produce">(x), memcpy<"copy">(y, x, 1024))),
                         "produce", "copy", "x">);

TEST(RaceCorpus, MemcpyAndMemset) {
  expect_accepted(to_spec(copy_fixed));
  expect_race(without_edge(to_spec(copy_fixed), "copy", "consume"), "copy", "consume", "y");
  expect_accepted(to_spec(copy_beside_reader));
  expect_accepted(to_spec(clear_fixed));
  expect_race(without_edge(to_spec(clear_fixed), "clear", "fill"), "clear", "fill", "x");
  expect_accepted(to_spec(source_fixed));
  expect_race(without_edge(to_spec(source_fixed), "produce", "copy"), "produce", "copy", "x");
}

// ========================================================== buffer views --
// 27: disjoint views of one buffer, each kernel declaring its extent.
constexpr auto disjoint_views = graph(
    mem_alloc<"alloc">(tmp, 512),
    with_access<0, access_mode::read_write, 1024>(writes<"low">(tmp)),
    with_access<0, access_mode::read_write, 1024>(writes<"high">(tmp + 256)),
    mem_free<"free">(tmp), fan_out<"alloc", "low", "high">, fan_in<"free", "low", "high">);
static_assert(accepted<decltype(disjoint_views)>);
// 28-29: two views reaching to the buffer's end meet there.
constexpr auto overlapping_fixed =
    graph(mem_alloc<"alloc">(tmp, 512), writes<"low">(tmp), writes<"high">(tmp + 256),
          mem_free<"free">(tmp), chain<"alloc", "low", "high", "free">);
static_assert(refused_as<decltype(graph(mem_alloc<"alloc">(tmp, 512), writes<"low">(tmp),
                                        writes<"high">(tmp + 256), mem_free<"free">(tmp),
                                        fan_out<"alloc", "low", "high">,
                                        fan_in<"free", "low", "high">)),
                         "low", "high", "tmp">);

TEST(RaceCorpus, BufferViews) {
  expect_accepted(to_spec(disjoint_views));
  graph_spec overlapping = without_edge(to_spec(overlapping_fixed), "low", "high");
  change_graph(overlapping, "", [](graph_spec& g) {
    // The fork-join of the racy declaration: both after the alloc, before the free.
    node_named(g, "high").deps.push_back("alloc");
    node_named(g, "free").deps.push_back("low");
  });
  expect_accepted(to_spec(overlapping_fixed));
  expect_race(overlapping, "low", "high", "tmp");
}

// ========================================================= declarations --
// 30: two readers, one of them a `T*` kernel declared read: no race.
constexpr auto declared_read = graph(reads_declared<"a">(x), reads<"b">(x));
static_assert(accepted<decltype(declared_read)>);
// 31: the same undeclared: a race (the declaration is what fixes it).
static_assert(refused_as<decltype(graph(writes<"a">(x), reads<"b">(x))), "a", "b", "x">);
// 32: two concurrent updates of one histogram: no race.
constexpr auto concurrent_pair = graph(counts<"left">(x), counts<"right">(x));
static_assert(accepted<decltype(concurrent_pair)>);
// 33-34: a concurrent update beside a plain read: a race; ordered, none.
constexpr auto concurrent_then_read = graph(counts<"count">(x), reads<"report">(x), edge<"count", "report">);
static_assert(refused_as<decltype(graph(counts<"count">(x), reads<"report">(x))), "count", "report",
                         "x">);
// 35: a concurrent update beside a write: a race.
static_assert(refused_as<decltype(graph(counts<"count">(x), writes<"reset">(x))), "count", "reset",
                         "x">);
// 36: with_access composes with the launch wrappers, in either order.
constexpr auto declared_then_prioritized = graph(with_priority(reads_declared<"a">(x), 1), reads<"b">(x));
static_assert(accepted<decltype(declared_then_prioritized)>);

TEST(RaceCorpus, Declarations) {
  const graph_spec read_spec = to_spec(declared_read);
  expect_accepted(read_spec);
  const auto& declared = std::get<cudag::kernel_node>(read_spec.nodes[0].params).accesses;
  ASSERT_EQ(declared.size(), 1u);
  EXPECT_EQ(declared[0], (cudag::access_declaration{0, access_mode::read, to_the_end}));
  expect_race(without_declarations(read_spec, "a"), "a", "b", "x");
  expect_accepted(to_spec(concurrent_pair));
  expect_accepted(to_spec(concurrent_then_read));
  expect_race(without_edge(to_spec(concurrent_then_read), "count", "report"), "count", "report", "x");
  expect_accepted(to_spec(declared_then_prioritized));
}

// ============================================================== rebinds --
// A pointer parameter rebound to the address another one holds: where the
// two names then race, the rebind is refused with check()'s message and
// changes nothing; where they do not, it goes through.
constexpr auto aliasable = graph(writes<"scale">(x), reads<"peek">(y), reads<"look">(param<"z", float*>));

TEST(RaceRebind, APointerReboundOntoAnotherIsRefusedOnlyWhereTheyRace) {
  cudag::native::recorder rec;
  float* const a = reinterpret_cast<float*>(0x10000);
  float* const b = reinterpret_cast<float*>(0x20000);
  auto e = instantiate(aliasable, x = a, y = b, param<"z", float*> = b, n = 4);
  const std::size_t calls_before = rec.calls().size();
  try {
    (void)e.rebind(y = a);
    ADD_FAILURE() << "the rebind was accepted";
  } catch (const cudag::check_error& refusal) {
    const std::string message = refusal.what();
    EXPECT_EQ(message.rfind("race: 'scale' writes 'x' and 'y' (bound to the same address, 0x10000)",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("while 'peek' reads it"), std::string::npos) << message;
  }
  EXPECT_EQ(rec.calls().size(), calls_before);  // nothing reached CUDA
  // y still holds b: binding it again changes nothing.
  EXPECT_EQ(e.rebind(y = b), cudag::rebind_path::none);
  // Two readers on one address do not race: z joins y.
  EXPECT_NE(e.rebind(param<"z", float*> = a, y = a, x = b), cudag::rebind_path::none);
  // And x onto them again is refused, naming the first reader.
  EXPECT_THROW((void)e.rebind(x = a), cudag::check_error);
  EXPECT_EQ(e.rebind(x = b), cudag::rebind_path::none);
}

TEST(RaceRebind, PointersBoundToOneAddressAtInstantiationAreRefusedWhereTheyRace) {
  cudag::native::recorder rec;
  float* const a = reinterpret_cast<float*>(0x10000);
  float* const b = reinterpret_cast<float*>(0x20000);
  try {
    (void)instantiate(aliasable, x = a, y = a, param<"z", float*> = b, n = 4);
    ADD_FAILURE() << "the aliased bindings were accepted";
  } catch (const cudag::check_error& refusal) {
    EXPECT_EQ(std::string(refusal.what()).rfind("race: 'scale' writes 'x' and 'y' (bound to the same address, 0x10000)", 0),
              0u)
        << refusal.what();
  }
  EXPECT_TRUE(rec.calls().empty());  // refused before the graph was made
  // Two readers bound to one address do not race.
  EXPECT_NO_THROW((void)instantiate(aliasable, x = b, y = a, param<"z", float*> = a, n = 4));
}

}  // namespace
