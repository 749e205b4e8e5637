// The exec cache without a GPU, against the recorder's device memory model:
// the caps hold over random acquires (at every instantiation too), least
// recently used goes first, eviction destroys then trims and the memory
// comes back, a hit instantiates nothing, a refused update instantiates
// afresh in place (or throws, naming the graph), and the topology key.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec_cache.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_recorder.hpp"
#include "engine/recorder_support.hpp"

namespace {

using engine_test::dev_x;
using engine_test::dev_y;
using engine_test::lines;

void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }

constexpr std::size_t fixed = 10000;
constexpr std::size_t per_node = 500;
constexpr std::size_t total = std::size_t{1} << 30;

/// k0 -> k1 -> ... -> k{n-1}, each scale(x, a, n); with `alloc_bytes`, a
/// buffer allocated first and freed last.
cudag::graph_spec chain(const std::string& name, int n, float a = 1.0f, std::size_t alloc_bytes = 0) {
  cudag::builder b(name);
  auto x = b.param<float*>("x");
  cudag::node_ref last = b.kernel("k0", &scale, cudag::launch_config{}, x, a, 1);
  std::optional<cudag::allocation_ref<char>> buffer;
  if (alloc_bytes) {
    buffer = b.alloc<char>("scratch", alloc_bytes);
    b.edge(buffer->node, last);
  }
  for (int i = 1; i < n; ++i) {
    auto k = b.kernel("k" + std::to_string(i), &scale, cudag::launch_config{}, x, a, 1);
    b.edge(last, k);
    last = k;
  }
  if (buffer) b.edge(last, b.free("free_scratch", buffer->buffer));
  return b.build();
}

/// Nodes of chain(_, n, _, alloc_bytes).
std::size_t nodes_of(int n, std::size_t alloc_bytes) { return n + (alloc_bytes ? 2 : 0); }

cudag::footprint_model recorder_model() {
  cudag::footprint_model m;
  m.fixed_bytes = fixed;
  m.bytes_per_node.fill(per_node);
  return m;
}

struct fixture {
  cudag::native::recorder rec;
  cudag::unique_stream stream;
  fixture() {
    rec.set_device_memory(total);
    rec.set_exec_memory(fixed, per_node);
    rec.name_kernel(&scale, "scale");
    rec.name_pointer(dev_x, "x");
    rec.name_pointer(dev_y, "y");
    stream = cudag::make_stream();
  }
  cudag::exec_cache_options options(std::size_t memory_cap, std::size_t count_cap) {
    cudag::exec_cache_options o;
    o.memory_cap = memory_cap;
    o.count_cap = count_cap;
    o.stream = stream.get();
    o.model = recorder_model();
    return o;
  }
  [[nodiscard]] std::size_t used() const { return total - rec.device_memory_free(); }
};

const cudag::binding bind_x[] = {cudag::bind("x", dev_x)};
const cudag::binding bind_y[] = {cudag::bind("x", dev_y)};

// ------------------------------------------------------------------- key --
TEST(TopologyKey, IgnoresValuesNamesOfTheGraphAndDeclarationOrder) {
  const std::uint64_t k = cudag::topology_key(chain("a", 5, 1.0f));
  EXPECT_EQ(cudag::topology_key(chain("b", 5, 2.0f)), k);  // another literal, another name
  // The same nodes, edges and declarations, declared in reverse.
  cudag::graph_spec reversed = chain("a", 5, 1.0f);
  std::reverse(reversed.nodes.begin(), reversed.nodes.end());
  EXPECT_EQ(cudag::topology_key(reversed), k);
}

TEST(TopologyKey, ChangesWithNodesEdgesKindsNestingAndDeclarations) {
  const cudag::graph_spec base = chain("a", 3);
  const std::uint64_t k = cudag::topology_key(base);
  EXPECT_NE(cudag::topology_key(chain("a", 4)), k);  // one more node
  {
    cudag::graph_spec s = base;  // an edge fewer
    s.nodes[2].deps.clear();
    EXPECT_NE(cudag::topology_key(s), k);
  }
  {
    cudag::graph_spec s = base;  // a node renamed
    s.nodes[0].name = "first";
    s.nodes[1].deps = {"first"};
    EXPECT_NE(cudag::topology_key(s), k);
  }
  {
    cudag::graph_spec s = base;  // another parameter declared
    s.params.push_back({"y", cudag::type_of<int>()});
    EXPECT_NE(cudag::topology_key(s), k);
  }
  {
    cudag::graph_spec s = base;  // the parameter's type changes
    s.params[0].type = cudag::type_of<double*>();
    EXPECT_NE(cudag::topology_key(s), k);
  }
  {
    cudag::graph_spec s = base;  // a kernel reads one value fewer
    std::get<cudag::kernel_node>(s.nodes[1].params).args.pop_back();
    EXPECT_NE(cudag::topology_key(s), k);
  }
  {
    cudag::graph_spec s = base;  // a node of another kind under the same name
    s.nodes[1].params = cudag::empty_node{};
    EXPECT_NE(cudag::topology_key(s), k);
  }
  // An allocation's size is topology: CUDA cannot update it.
  EXPECT_NE(cudag::topology_key(chain("a", 3, 1.0f, 64)), cudag::topology_key(chain("a", 3, 1.0f, 128)));
  // Nesting: the same child under another structure.
  cudag::builder outer1("o");
  outer1.child("c", chain("inner", 2));
  cudag::builder outer2("o");
  outer2.child("c", chain("inner", 3));
  cudag::builder outer3("o");
  outer3.child("c", chain("inner", 2));
  EXPECT_NE(cudag::topology_key(outer1.build()), cudag::topology_key(outer2.build()));
  EXPECT_EQ(cudag::topology_key(outer1.build()), cudag::topology_key(outer3.build()));
}

// ----------------------------------------------------------------- hits --
TEST(ExecCache, AHitUpdatesAndInstantiatesNothing) {
  fixture f;
  {
    cudag::exec_cache cache(f.options(1 << 20, 8));
    cudag::exec& first = cache.acquire(chain("c", 10, 1.0f), bind_x);
    f.rec.clear();
    cudag::exec& again = cache.acquire(chain("c", 10, 3.0f), bind_y);
    EXPECT_EQ(&first, &again);
    const std::string calls = lines(f.rec.calls());
    EXPECT_TRUE(f.rec.calls_starting("instantiate").empty()) << calls;
    EXPECT_TRUE(f.rec.calls_starting("exec_destroy").empty()) << calls;
    EXPECT_TRUE(f.rec.calls_starting("device_graph_mem_trim").empty()) << calls;
    // Moved to the new spec: the new values reached the exec.
    EXPECT_NE(calls.find("scale grid=(1,1,1) block=(1,1,1) shared=0 args=[y, 0x40400000, 0x1]"),
              std::string::npos)
        << calls;
    EXPECT_EQ(cache.stats().hits, 1u);
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().entries, 1u);
    EXPECT_EQ(f.rec.live_execs(), 1u);
  }
  EXPECT_EQ(f.rec.live_execs(), 0u);
  EXPECT_EQ(f.rec.live_graphs(), 0u);
  EXPECT_TRUE(f.rec.misuse().empty()) << f.rec.misuse().front();
}

TEST(ExecCache, AKeyComputedOnceServesTheSameTopology) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 8));
  const cudag::graph_spec spec = chain("c", 6, 1.0f);
  const std::uint64_t key = cudag::topology_key(spec);
  cudag::exec& first = cache.acquire(key, spec, bind_x);
  cudag::exec& again = cache.acquire(chain("c", 6, 5.0f), bind_y);  // the key computed inside
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(&cache.acquire(key, spec, bind_x), &first);
  EXPECT_EQ(cache.stats().hits, 2u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

// ------------------------------------------------------------------ LRU --
TEST(ExecCache, EvictsTheLeastRecentlyAcquiredFirst) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 3));
  (void)cache.acquire(chain("a", 1), bind_x);
  (void)cache.acquire(chain("b", 2), bind_x);
  (void)cache.acquire(chain("c", 3), bind_x);
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"c", "b", "a"}));
  (void)cache.acquire(chain("a", 1), bind_y);  // an exact hit: a is the most recent now
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"a", "c", "b"}));
  (void)cache.acquire(chain("d", 4), bind_x);  // b goes
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"d", "a", "c"}));
  EXPECT_FALSE(cache.contains(chain("b", 2)));
  EXPECT_TRUE(cache.contains(chain("a", 1)));
  (void)cache.acquire(chain("e", 5), bind_x);  // then c
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"e", "d", "a"}));
  EXPECT_EQ(cache.stats().evictions, 2u);
  EXPECT_EQ(cache.stats().exact_hits, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().misses, 5u);
  EXPECT_EQ(f.rec.live_execs(), 3u);
}

// --------------------------------------------------------------- shapes --
/// A family: k0 -> ... -> k{n-1}, each scale(x, 1, n) on a grid of
/// ceil(batch / 32) blocks.
cudag::graph_spec family(int n) {
  cudag::builder b("family");
  auto x = b.param<float*>("x");
  auto batch = b.param<int>("batch");
  const auto shape = cudag::launch(dim3(1), dim3(32)).follow(cudag::launch_dim::grid_x, batch, 1, 32);
  cudag::node_ref last = b.kernel("k0", &scale, shape, x, 1.0f, batch);
  for (int i = 1; i < n; ++i) {
    auto k = b.kernel("k" + std::to_string(i), &scale, shape, x, 1.0f, batch);
    b.edge(last, k);
    last = k;
  }
  return b.build();
}

std::vector<cudag::binding> at_batch(int batch, float* x = dev_x) {
  return {cudag::bind("x", x), cudag::bind("batch", batch)};
}

TEST(ShapeKey, FollowsLaunchParametersAndValuesButNotOtherBindings) {
  const cudag::graph_spec spec = family(3);
  const std::uint64_t k = cudag::shape_key(spec, at_batch(64));
  EXPECT_EQ(cudag::shape_key(spec, at_batch(64, dev_y)), k);  // another buffer: not a shape
  const std::vector<cudag::binding> reversed{cudag::bind("batch", 64), cudag::bind("x", dev_x)};
  EXPECT_EQ(cudag::shape_key(spec, reversed), k);            // bindings in any order
  EXPECT_NE(cudag::shape_key(spec, at_batch(96)), k);        // a launch follows batch
  EXPECT_NE(cudag::shape_key(chain("c", 3, 1.0f), bind_x),   // a literal is part of it
            cudag::shape_key(chain("c", 3, 2.0f), bind_x));
  cudag::graph_spec wider = spec;
  std::get<cudag::kernel_node>(wider.nodes[1].params).block = dim3(64);
  EXPECT_NE(cudag::shape_key(wider, at_batch(64)), k);       // so are launch dimensions
  EXPECT_EQ(cudag::topology_key(wider), cudag::topology_key(spec));
}

TEST(ExecCache, AnExactHitSendsOnlyTheBindingsThatChanged) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 8));
  cudag::exec& first = cache.acquire(family(4), at_batch(64));
  f.rec.clear();
  EXPECT_EQ(&cache.acquire(family(4), at_batch(64)), &first);
  EXPECT_TRUE(f.rec.calls().empty()) << lines(f.rec.calls());  // nothing at all
  // Another buffer: one exec setter a node reading it, no update, no instantiation.
  EXPECT_EQ(&cache.acquire(family(4), at_batch(64, dev_y)), &first);
  const std::string calls = lines(f.rec.calls());
  EXPECT_EQ(f.rec.calls_starting("exec_kernel_node_set_params").size(), 4u) << calls;
  EXPECT_TRUE(f.rec.calls_starting("exec_update").empty()) << calls;
  EXPECT_TRUE(f.rec.calls_starting("instantiate").empty()) << calls;
  EXPECT_EQ(cache.stats().exact_hits, 2u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(ExecCache, HotShapesKeepAnExecEachAndTheRestShareByUpdate) {
  fixture f;
  cudag::exec_cache_options o = f.options(1 << 20, 8);
  o.execs_per_topology = 3;
  cudag::exec_cache cache(o);
  cudag::exec& e64 = cache.acquire(family(5), at_batch(64));
  cudag::exec& e128 = cache.acquire(family(5), at_batch(128));
  cudag::exec& e256 = cache.acquire(family(5), at_batch(256));
  EXPECT_NE(&e64, &e128);
  EXPECT_NE(&e128, &e256);
  EXPECT_EQ(cache.stats().misses, 3u);
  EXPECT_EQ(cache.count(family(5)), 3u);
  EXPECT_TRUE(cache.contains(family(5), at_batch(128)));
  EXPECT_FALSE(cache.contains(family(5), at_batch(512)));
  // A shape held: its own exec, untouched.
  f.rec.clear();
  EXPECT_EQ(&cache.acquire(family(5), at_batch(64)), &e64);
  EXPECT_TRUE(f.rec.calls().empty()) << lines(f.rec.calls());
  // A fourth shape: the least recently acquired of the three (128's) is updated to it.
  cudag::exec& e512 = cache.acquire(family(5), at_batch(512));
  EXPECT_EQ(&e512, &e128);
  std::string calls = lines(f.rec.calls());
  EXPECT_EQ(f.rec.calls_starting("exec_update").size(), 1u) << calls;
  EXPECT_NE(calls.find("scale grid=(16,1,1)"), std::string::npos) << calls;
  EXPECT_TRUE(f.rec.calls_starting("instantiate").empty()) << calls;
  EXPECT_FALSE(cache.contains(family(5), at_batch(128)));
  EXPECT_TRUE(cache.contains(family(5), at_batch(512)));
  // Now 512 is held by that exec; 256 by its own.
  f.rec.clear();
  EXPECT_EQ(&cache.acquire(family(5), at_batch(256)), &e256);
  EXPECT_EQ(&cache.acquire(family(5), at_batch(512)), &e128);
  EXPECT_TRUE(f.rec.calls().empty()) << lines(f.rec.calls());
  EXPECT_EQ(cache.stats().exact_hits, 3u);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 3u);
  EXPECT_EQ(f.rec.live_execs(), 3u);
}

TEST(ExecCache, ShapesOfOneTopologyObeyTheCaps) {
  fixture f;
  cudag::exec_cache_options o = f.options(1 << 20, 4);
  o.execs_per_topology = 3;
  cudag::exec_cache cache(o);
  std::mt19937 random(7);
  std::size_t acquires = 0;
  for (int step = 0; step < 300; ++step) {
    const int batch = 32 * (1 + static_cast<int>(random() % 6));
    const int length = 2 + static_cast<int>(random() % 2);  // two topologies
    cudag::exec& e = cache.acquire(family(length), at_batch(batch, step % 2 ? dev_x : dev_y));
    ++acquires;
    ASSERT_EQ(e.spec().nodes.size(), static_cast<std::size_t>(length));
    ASSERT_TRUE(cache.contains(family(length), at_batch(batch))) << "step " << step;
    ASSERT_LE(cache.count(family(length)), 3u) << "step " << step;
    ASSERT_LE(cache.stats().entries, 4u) << "step " << step;
    ASSERT_EQ(f.rec.live_execs(), cache.stats().entries) << "step " << step;
  }
  EXPECT_EQ(cache.stats().exact_hits + cache.stats().hits + cache.stats().misses, acquires);
  EXPECT_GT(cache.stats().exact_hits, 0u);
  EXPECT_GT(cache.stats().hits, 0u);
  EXPECT_GT(cache.stats().evictions, 0u);
  EXPECT_TRUE(f.rec.misuse().empty()) << f.rec.misuse().front();
}

// ------------------------------------------------------------- eviction --
TEST(ExecCache, EvictionDestroysTheExecThenTrimsAndTheMemoryComesBack) {
  fixture f;
  // a and b each: fixed + 12 nodes + a 64 KiB buffer; the cap holds one.
  const std::size_t each = fixed + 12 * per_node + 65536;
  cudag::exec_cache cache(f.options(each + each / 2, 8));
  cudag::exec& a = cache.acquire(chain("a", 10, 1.0f, 65536), bind_x);
  a.launch(f.stream.get());  // maps its graph memory (the upload did already)
  EXPECT_EQ(cache.bytes_of(chain("a", 10, 1.0f, 65536)), each);
  EXPECT_EQ(f.used(), each);
  EXPECT_EQ(f.rec.graph_memory_reserved(), 65536u);
  const std::string a_label = "x1";  // the first exec made under this recorder
  f.rec.clear();
  cudag::exec& b = cache.acquire(chain("b", 10, 1.0f, 32768 * 2 + 1), bind_x);
  const std::vector<std::string>& calls = f.rec.calls();
  const auto at = [&](const std::string& start) {
    return std::find_if(calls.begin(), calls.end(),
                        [&](const std::string& c) { return c.rfind(start, 0) == 0; }) -
           calls.begin();
  };
  const auto sync = at("stream_synchronize");
  const auto destroy = at("exec_destroy");
  const auto trim = at("device_graph_mem_trim");
  const auto make = at("instantiate");
  ASSERT_LT(make, static_cast<long>(calls.size())) << lines(calls);
  EXPECT_LT(sync, destroy) << lines(calls);
  EXPECT_LT(destroy, trim) << lines(calls);
  EXPECT_LT(trim, make) << lines(calls);  // room made before the new one is instantiated
  EXPECT_EQ(calls[static_cast<std::size_t>(destroy)], "exec_destroy " + a_label) << lines(calls);
  EXPECT_EQ(calls[static_cast<std::size_t>(trim)], "device_graph_mem_trim device=0 -> released=65536")
      << lines(calls);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.stats().trims, 1u);
  // Only b's memory is in use: a's exec and graph memory came back.
  EXPECT_EQ(f.used(), fixed + 12 * per_node + 65537);
  EXPECT_EQ(f.rec.graph_memory_reserved(), 65537u);
  EXPECT_EQ(f.rec.live_execs(), 1u);
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"b"}));
  (void)b;
  cache.clear();
  EXPECT_EQ(f.used(), 0u);
  EXPECT_EQ(f.rec.live_execs(), 0u);
  EXPECT_EQ(cache.stats().bytes_in_use, 0u);
  EXPECT_EQ(cache.stats().evictions, 2u);
}

TEST(ExecCache, WithoutTrimTheGraphMemoryStaysReserved) {
  fixture f;
  const std::size_t each = fixed + 12 * per_node + 65536;
  cudag::exec_cache_options o = f.options(each + each / 2, 8);
  o.trim_on_evict = false;
  cudag::exec_cache cache(o);
  (void)cache.acquire(chain("a", 10, 1.0f, 65536), bind_x);
  (void)cache.acquire(chain("b", 10, 1.0f, 65537), bind_x);
  EXPECT_TRUE(f.rec.calls_starting("device_graph_mem_trim").empty());
  EXPECT_EQ(f.rec.graph_memory_reserved(), 65537u);  // a's 65536 reused, not given back
  EXPECT_EQ(f.rec.graph_memory_used(), 65537u);
}

// ----------------------------------------------------------------- caps --
TEST(ExecCache, TheCapsHoldOverARandomSequenceOfAcquires) {
  fixture f;
  constexpr std::size_t cap = 120000;
  constexpr std::size_t count_cap = 5;
  cudag::exec_cache cache(f.options(cap, count_cap));
  std::mt19937 random(2026);
  struct shape {
    int n;
    std::size_t alloc;
  };
  std::vector<shape> shapes;
  for (int i = 0; i < 14; ++i)
    shapes.push_back({1 + static_cast<int>(random() % 40), (random() % 3 == 0) ? 1024 * (1 + random() % 32) : 0});
  std::size_t acquires = 0;
  for (int step = 0; step < 200; ++step) {
    const std::size_t pick = random() % shapes.size();
    const shape& s = shapes[pick];
    cudag::exec& e =
        cache.acquire(chain("s" + std::to_string(pick), s.n, float(step), s.alloc), step % 2 ? bind_x : bind_y);
    ++acquires;
    if (step % 3 == 0) e.launch(f.stream.get());
    const std::size_t expected = fixed + per_node * nodes_of(s.n, s.alloc) + s.alloc;
    ASSERT_EQ(cache.bytes_of(chain("x", s.n, 0.0f, s.alloc)), expected) << "step " << step;
    ASSERT_LE(f.used(), cap) << "step " << step;
    // Never over the cap, not even while an exec was being made.
    ASSERT_GE(f.rec.device_memory_lowest_free(), total - cap) << "step " << step;
    ASSERT_LE(cache.stats().bytes_in_use, cap) << "step " << step;
    ASSERT_GE(cache.stats().bytes_in_use, f.used()) << "step " << step;
    ASSERT_LE(cache.stats().entries, count_cap);
    ASSERT_EQ(f.rec.live_execs(), cache.stats().entries);
    ASSERT_EQ(cache.recency().front(), "s" + std::to_string(pick));
  }
  EXPECT_EQ(cache.stats().exact_hits + cache.stats().hits + cache.stats().misses, acquires);
  EXPECT_GT(cache.stats().hits, 0u);
  EXPECT_GT(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.stats().over_cap, 0u);
  EXPECT_TRUE(f.rec.misuse().empty()) << f.rec.misuse().front();
}

TEST(ExecCache, OneExecAloneOverTheCapIsKeptAloneUntilTheNextMiss) {
  fixture f;
  constexpr std::size_t cap = 30000;
  cudag::exec_cache cache(f.options(cap, 8));
  (void)cache.acquire(chain("small1", 4), bind_x);  // 12000
  (void)cache.acquire(chain("small2", 5), bind_x);  // 12500 (another topology)
  cudag::exec& big = cache.acquire(chain("big", 60), bind_x);  // 40000: over alone
  EXPECT_EQ(big.spec().name, "big");
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"big"}));
  EXPECT_EQ(cache.stats().over_cap, 1u);
  EXPECT_EQ(cache.stats().evictions, 2u);
  EXPECT_EQ(f.used(), fixed + 60 * per_node);
  // A hit keeps it; the next miss evicts it before instantiating.
  (void)cache.acquire(chain("big", 60, 2.0f), bind_y);
  EXPECT_EQ(cache.stats().hits, 1u);
  (void)cache.acquire(chain("small3", 3), bind_x);
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"small3"}));
  EXPECT_EQ(f.used(), fixed + 3 * per_node);
  EXPECT_EQ(f.rec.device_memory_lowest_free(), total - (fixed + 60 * per_node));
}

TEST(ExecCache, TheCountCapHolds) {
  fixture f;
  cudag::exec_cache cache(f.options(std::size_t{1} << 30, 2));
  for (int i = 1; i <= 6; ++i) (void)cache.acquire(chain("c" + std::to_string(i), i), bind_x);
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(f.rec.live_execs(), 2u);
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"c6", "c5"}));
  EXPECT_EQ(cache.stats().evictions, 4u);
}

// ------------------------------------------------------------- refusals --
/// Frees an external buffer: CUDA cannot move a free node to another address.
cudag::graph_spec release() {
  cudag::builder b("release");
  auto allocation = b.external_buffer<unsigned char>("allocation");
  b.free("free_allocation", allocation);
  return b.build();
}

TEST(ExecCache, ARefusedUpdateInstantiatesAfreshInPlaceAndCountsIt) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 4));
  auto* p1 = reinterpret_cast<unsigned char*>(0x9000000);
  auto* p2 = reinterpret_cast<unsigned char*>(0x9100000);
  const cudag::binding first[] = {cudag::bind("allocation", p1)};
  const cudag::binding second[] = {cudag::bind("allocation", p2)};
  cudag::exec& e1 = cache.acquire(release(), first);
  // Refused whichever way the update goes (by the recorder's update too).
  f.rec.refuse_next_update(e1.node_handle("free_allocation"), cudaGraphExecUpdateErrorParametersChanged);
  f.rec.clear();
  cudag::exec& e2 = cache.acquire(release(), second);
  EXPECT_EQ(&e1, &e2);  // the same exec object, instantiated again
  EXPECT_EQ(cache.stats().refused_updates, 1u);
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(f.rec.calls_starting("instantiate").size(), 1u) << lines(f.rec.calls());
  EXPECT_EQ(f.rec.calls_starting("exec_destroy").size(), 1u) << lines(f.rec.calls());
  EXPECT_NE(cache.last_refusal().find("graph 'release'"), std::string::npos) << cache.last_refusal();
  EXPECT_EQ(f.rec.live_execs(), 1u);
  EXPECT_EQ(f.used(), fixed + per_node);
  EXPECT_EQ(cache.stats().bytes_in_use, fixed + per_node);
}

TEST(ExecCache, ARefusedUpdateCanBeThrownNamingTheGraph) {
  fixture f;
  cudag::exec_cache_options o = f.options(1 << 20, 4);
  o.reinstantiate_on_refusal = false;
  cudag::exec_cache cache(o);
  auto* p1 = reinterpret_cast<unsigned char*>(0x9000000);
  auto* p2 = reinterpret_cast<unsigned char*>(0x9100000);
  const cudag::binding first[] = {cudag::bind("allocation", p1)};
  const cudag::binding second[] = {cudag::bind("allocation", p2)};
  cudag::exec& e1 = cache.acquire(release(), first);
  f.rec.refuse_next_update(e1.node_handle("free_allocation"), cudaGraphExecUpdateErrorParametersChanged);
  try {
    (void)cache.acquire(release(), second);
    ADD_FAILURE() << "no throw";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("exec cache: graph 'release'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cache.stats().refused_updates, 1u);
  EXPECT_EQ(cache.stats().entries, 1u);  // the cached exec is still there, as it was
  EXPECT_EQ(f.rec.live_execs(), 1u);
}

TEST(ExecCache, AFailedInstantiationLeavesNothingBehind) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 4));
  (void)cache.acquire(chain("a", 3), bind_x);
  f.rec.fail_next("instantiate", cudaErrorMemoryAllocation);
  EXPECT_THROW((void)cache.acquire(chain("b", 4), bind_x), cudag::error);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.recency(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(cache.stats().bytes_in_use, fixed + 3 * per_node);
  EXPECT_FALSE(cache.contains(chain("b", 4)));
  (void)cache.acquire(chain("b", 4), bind_x);
  EXPECT_EQ(cache.stats().entries, 2u);
}

TEST(ExecCache, SeamLinesOfAMissAreRecorded) {
  fixture f;
  cudag::exec_cache cache(f.options(1 << 20, 4));
  f.rec.clear();
  (void)cache.acquire(chain("a", 2), bind_x);
  const std::string calls = lines(f.rec.calls());
  EXPECT_EQ(f.rec.calls_starting("mem_get_info -> free=").size(), 2u) << calls;
  EXPECT_NE(calls.find("mem_get_info -> free=" + std::to_string(total) + " total=" + std::to_string(total)),
            std::string::npos)
      << calls;
  EXPECT_NE(calls.find("mem_get_info -> free=" + std::to_string(total - fixed - 2 * per_node)),
            std::string::npos)
      << calls;
  EXPECT_EQ(f.rec.calls_starting("device_get_graph_mem_attribute device=0 reserved_current").size(), 2u)
      << calls;
  EXPECT_EQ(f.rec.calls_starting("upload").size(), 1u) << calls;
  const cudag::measured_footprint* m = cache.measured(chain("a", 2));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->device_bytes, fixed + 2 * per_node);
}

}  // namespace
