// Randomized checking: seeded random valid specs (every node kind, child
// graphs and conditional bodies, parameters, conditions, buffer lifetimes,
// names with NUL and non-ASCII bytes, declarations in shuffled order) must be
// accepted; each is then mutated once (a dangling dependency, a duplicate
// name, a swapped node kind, a self-edge, a cycle, a free before its alloc,
// an unknown parameter or condition, a race, ...) and check() must refuse it with a
// cudag::error naming a node, the mutated one where the mutation has one
// culprit. check() must never crash or hang: a watchdog aborts, printing the
// seed, when one case runs for more than 10 seconds. to_dot() must draw every
// spec, valid or not.
//
// CUDAG_CHECK_RANDOM_SEED (default 20261123) and CUDAG_CHECK_RANDOM_CASES
// (default 10000) override the first seed and the number of cases; case k
// uses seed + k, and a failure prints the line that reruns it alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cudag/dot.hpp"
#include "spec_helpers.hpp"

namespace cudag {
namespace {
using namespace check_test;

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

// A graph of the spec being generated, with what mutations need to find.
struct graph_site {
  graph_spec* spec;
  std::string prefix;  // path prefix of its nodes
  bool in_body;
};

struct buffer_site {
  graph_spec* spec;
  std::string prefix;
  std::string alloc;
  std::string free;
};

class generator {
 public:
  explicit generator(std::uint64_t seed) : random_(seed) {}

  // Into `top` (not returned: the sites below point into it).
  void make(graph_spec& top) {
    top.params = {declare<float*>("x"), declare<int>("n"), declare<cudaEvent_t>("ev")};
    fill(top, "", false, 0);
    for (std::size_t w = 0; w < targets_; ++w)
      top.params.push_back(declare<float*>("w" + std::to_string(w)));
  }

  std::vector<graph_site> graphs;
  std::vector<buffer_site> buffers;
  std::vector<std::shared_ptr<graph_spec>> children;  // every child graph, mutable

  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

 private:
  // A unique name within a graph: random bytes (NUL, '/', non-ASCII, invalid
  // UTF-8 included), then the index, so that names of 1 to ~20 bytes occur.
  std::string name_for(std::size_t index) {
    static const char alphabet[] = {'a', 'b', 'k', '_', '\0', '/', '\xc3', '\xa9', '\xff', ' '};
    std::string name;
    const std::size_t junk = pick(4) == 0 ? pick(14) : 0;
    for (std::size_t i = 0; i < junk; ++i) name += alphabet[pick(sizeof alphabet)];
    return name + "n" + std::to_string(index);
  }

  // Valid specs have no races by construction: kernels read x (through a
  // const float*), memsets and copies write memory of their own (w0, w1,
  // ..., declared at the top), and the users of a buffer write bytes of
  // their own.
  value pointer_operand() { return param<float*>("w" + std::to_string(targets_++)); }

  // Node kinds allowed where we are; `depth` limits nesting.
  node make_node_of_kind(std::size_t kind, const std::string& name, const std::string& prefix,
                         bool in_body, std::size_t depth, graph_spec& owner) {
    switch (kind) {
      case 0: {
        kernel_node k = kernel({param<const float*>("x"), make_literal(2.0f), param<int>("n")});
        if (chance(30)) k.grid_from = grid_rule{"n", 128};
        return make_node(name, std::move(k));
      }
      case 1: return make_node(name, memset_of(pointer_operand(), 1 + pick(512)));
      case 2: return make_node(name, memcpy_node{pointer_operand(), param<float*>("x"), 64,
                                                 cudaMemcpyDeviceToDevice});
      case 3: return make_node(name, empty_node{});
      case 4: {  // child graph
        auto child = std::make_shared<graph_spec>();
        children.push_back(child);
        fill(*child, prefix + name + "/", in_body, depth + 1);
        return make_node(name, child_node{child});
      }
      case 5: {  // conditional
        const std::string condition = "c" + std::to_string(conditions_++);
        owner.conditions.push_back(declare_condition(condition));
        const auto ckind = static_cast<conditional_kind>(pick(4));
        const std::size_t body_count = ckind == conditional_kind::if_else ? 2
                                       : ckind == conditional_kind::switch_case ? 1 + pick(3)
                                                                                : 1;
        std::vector<graph_spec> bodies(body_count);
        node n = make_node(name, conditional(ckind, condition, {}));
        auto& cond = std::get<conditional_node>(n.params);
        cond.bodies = std::move(bodies);
        return n;  // bodies filled by the caller once the node is in place
      }
      case 6: return make_node(name, host());
      default: return make_node(name, event_record_node{param<cudaEvent_t>("ev")});
    }
  }

  void fill(graph_spec& g, const std::string& prefix, bool in_body, std::size_t depth) {
    graphs.push_back({&g, prefix, in_body});
    const std::size_t count = 1 + pick(depth == 0 ? 10 : 5);
    const std::size_t kinds = in_body ? 6 : 8;  // bodies: no host, event (or alloc/free)
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t kind = pick(kinds);
      if ((kind == 4 || kind == 5) && (depth >= 2 || !chance(40))) kind = 0;
      g.nodes.push_back(make_node_of_kind(kind, name_for(i), prefix, in_body, depth, g));
      // Dependencies on earlier nodes: the declaration is a topological order
      // until shuffled below.
      if (i > 0) {
        const std::size_t deps = pick(std::min<std::size_t>(i, 3) + 1);
        for (std::size_t d = 0; d < deps; ++d) {
          const std::string& dep = g.nodes[pick(i)].name;
          auto& list = g.nodes.back().deps;
          if (std::find(list.begin(), list.end(), dep) == list.end()) list.push_back(dep);
        }
      }
    }
    // Conditional bodies, now that the node has its place (its path is known).
    for (node& n : g.nodes) {
      if (auto* c = std::get_if<conditional_node>(&n.params)) {
        for (std::size_t b = 0; b < c->bodies.size(); ++b)
          fill(c->bodies[b], nested_prefix(prefix + n.name, n, b), true, depth + 1);
      }
    }
    if (!in_body && chance(50)) add_buffer(g, prefix);
    if (chance(50)) std::shuffle(g.nodes.begin(), g.nodes.end(), random_);
  }

  // alloc -> users -> free, each user writing 16 bytes of its own (at 16 *
  // its index: disjoint, so that users with no path between them do not race).
  void add_buffer(graph_spec& g, const std::string& prefix) {
    const std::string name = "buf" + std::to_string(buffers_++);
    const std::string alloc_name = "alloc_" + name, free_name = "free_" + name;
    std::vector<std::string> alloc_deps;
    if (!g.nodes.empty() && chance(50)) alloc_deps.push_back(g.nodes[pick(g.nodes.size())].name);
    g.nodes.push_back(make_node(alloc_name, alloc(name), alloc_deps));
    std::vector<std::string> users;
    const std::size_t count = 1 + pick(3);
    for (std::size_t u = 0; u < count; ++u) {
      users.push_back("use" + std::to_string(u) + "_" + name);
      kernel_node k = kernel({buffer<float*>(name, 16 * u)});
      k.accesses = {access_declaration{0, access_mode::read_write, 16}};
      g.nodes.push_back(make_node(users.back(), std::move(k),
                                  {u == 0 || chance(50) ? alloc_name : users[u - 1]}));
    }
    g.nodes.push_back(make_node(free_name, free_of(name), users));
    this->buffers.push_back({&g, prefix, alloc_name, free_name});
  }

  std::mt19937_64 random_;
  std::size_t conditions_ = 0;
  std::size_t buffers_ = 0;
  std::size_t targets_ = 0;  // w0, w1, ...: what memsets and copies write
};

node* find_node(graph_spec& g, const std::string& name) {
  for (node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// One mutation; returns the culprit's path when the mutation has one, ""
// when any node may be named, and sets `must_refuse`.
// `orphans_condition`: the mutation replaced a conditional node, so that its
// condition may be refused as unused (a refusal about a condition, naming no node).
std::string mutate(generator& gen, bool& must_refuse, bool& orphans_condition, std::string& what) {
  must_refuse = true;
  orphans_condition = false;
  graph_site site = gen.graphs[gen.pick(gen.graphs.size())];
  graph_spec& g = *site.spec;
  if (g.nodes.empty()) {
    what = "none (empty graph)";
    must_refuse = false;
    return "";
  }
  const std::size_t i = gen.pick(g.nodes.size());
  node& n = g.nodes[i];
  const std::string path = site.prefix + n.name;
  orphans_condition = std::holds_alternative<conditional_node>(n.params);
  switch (gen.pick(12)) {
    case 0:
      what = "dangling dependency";
      n.deps.push_back("ghost");
      return path;
    case 1: {
      what = "self-edge";
      n.deps.push_back(n.name);
      return path;
    }
    case 2: {
      what = "duplicate dependency";
      if (n.deps.empty()) {
        must_refuse = false;
        return "";
      }
      n.deps.push_back(n.deps[gen.pick(n.deps.size())]);
      return path;
    }
    case 3: {
      what = "duplicate name";
      if (g.nodes.size() < 2) {
        must_refuse = false;
        return "";
      }
      std::size_t j = gen.pick(g.nodes.size() - 1);
      if (j >= i) ++j;
      // The later of the two declarations is the one named.
      const std::size_t later = std::max(i, j), earlier = std::min(i, j);
      g.nodes[later].name = g.nodes[earlier].name;
      return site.prefix + g.nodes[earlier].name;
    }
    case 4: {
      what = "cycle";
      // a node some other node depends on: make it depend on that one
      for (node& dependent : g.nodes) {
        if (contains(dependent.deps, n.name) && !contains(n.deps, dependent.name)) {
          n.deps.push_back(dependent.name);
          return path;  // checked below: the cycle holds both
        }
      }
      must_refuse = false;
      what = "cycle (no dependent: none made)";
      return "";
    }
    case 5: {
      what = "free before its alloc";
      if (gen.buffers.empty()) {
        must_refuse = false;
        return "";
      }
      const buffer_site& b = gen.buffers[gen.pick(gen.buffers.size())];
      node* free_node = find_node(*b.spec, b.free);
      node* alloc_node = find_node(*b.spec, b.alloc);
      if (!free_node || !alloc_node) {  // renamed by nothing here; be safe
        must_refuse = false;
        return "";
      }
      free_node->deps.clear();
      alloc_node->deps = {b.free};
      return "";
    }
    case 6: {
      what = "unknown parameter";
      bool changed = false;
      for_each_value(n, [&](value& v) {
        if (auto* p = std::get_if<param_ref>(&v.source); p && !changed) {
          p->name = "nope";
          changed = true;
        }
      });
      if (!changed) {
        must_refuse = false;
        return "";
      }
      return path;
    }
    case 7: {
      what = "unknown condition";
      auto* c = std::get_if<conditional_node>(&n.params);
      if (!c) {
        must_refuse = false;
        return "";
      }
      c->condition = "nope";
      return path;
    }
    case 8: {
      what = "host node in a body";
      if (!site.in_body) {
        n.params = host();  // outside a body a host node is fine: maybe valid
        must_refuse = false;
        return "";
      }
      n.params = host();
      return path;
    }
    case 9: {
      what = "swapped node kind";
      // alloc <-> free, kernel -> empty, anything -> memset of a buffer no one allocates
      if (auto* a = std::get_if<mem_alloc_node>(&n.params)) {
        n.params = free_of(a->buffer);
      } else if (auto* f = std::get_if<mem_free_node>(&n.params)) {
        n.params = alloc(f->buffer);
      } else if (gen.chance(50)) {
        n.params = memset_of(buffer<float*>("never_allocated"));
        return path;
      } else {
        n.params = empty_node{};
      }
      must_refuse = false;  // may or may not stay valid
      return "";
    }
    case 11: {
      what = "race";
      // x is only read in a valid spec: in the top-level graph, a node
      // writing it beside one reading it, neither ordered against the other
      // (nor against anything else). Every race then involves the writer.
      graph_spec& top = *gen.graphs.front().spec;
      top.nodes.push_back(make_node("race_write", memset_of(param<float*>("x"))));
      top.nodes.push_back(make_node("race_read", kernel({param<const float*>("x")})));
      return "race_write";
    }
    default: {
      what = "empty name";
      const std::string old = n.name;
      n.name.clear();
      return site.prefix + "#" + std::to_string(i);
    }
  }
}

// Aborts the process, printing the case's seed, when a case takes too long.
class watchdog {
 public:
  watchdog() : thread_([this] { watch(); }) {}
  ~watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void start_case(std::uint64_t seed) {
    seed_.store(seed);
    ++cases_;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    std::uint64_t last = ~std::uint64_t{0};
    while (!wake_.wait_for(lock, std::chrono::seconds(10), [&] { return done_; })) {
      if (cases_.load() == last) {
        std::fprintf(stderr, "check_random: case with seed %llu ran for over 10 s; rerun with "
                             "CUDAG_CHECK_RANDOM_SEED=%llu CUDAG_CHECK_RANDOM_CASES=1\n",
                     static_cast<unsigned long long>(seed_.load()),
                     static_cast<unsigned long long>(seed_.load()));
        std::abort();
      }
      last = cases_.load();
    }
  }
  std::atomic<std::uint64_t> seed_{0};
  std::atomic<std::uint64_t> cases_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

TEST(CheckRandom, ValidSpecsPassAndMutantsAreRefusedNamingANode) {
  const std::uint64_t first_seed = env_or("CUDAG_CHECK_RANDOM_SEED", 20261123);
  const std::uint64_t cases = env_or("CUDAG_CHECK_RANDOM_CASES", 10000);
  std::printf("check_random: %llu cases from seed %llu\n", static_cast<unsigned long long>(cases),
              static_cast<unsigned long long>(first_seed));
  watchdog dog;
  std::size_t refused = 0, failures = 0;
  for (std::uint64_t k = 0; k < cases && failures < 10; ++k) {
    const std::uint64_t seed = first_seed + k;
    dog.start_case(seed);
    const std::string rerun = "seed " + std::to_string(seed) +
                              " (rerun: CUDAG_CHECK_RANDOM_SEED=" + std::to_string(seed) +
                              " CUDAG_CHECK_RANDOM_CASES=1)";
    generator gen(seed);
    graph_spec spec;
    gen.make(spec);
    try {
      check(spec);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "a valid spec was refused: " << e.what() << "; " << rerun;
      ++failures;
      continue;
    }
    EXPECT_NO_THROW((void)to_dot(spec)) << rerun;

    bool must_refuse = false, orphans_condition = false;
    std::string what;
    const std::string culprit = mutate(gen, must_refuse, orphans_condition, what);
    bool thrown = false;
    try {
      check(spec);
    } catch (const check_error& e) {
      thrown = true;
      ++refused;
      const bool named = !e.node().empty() && !e.nodes().empty() && e.node() == e.nodes().front();
      // An orphaned condition names the nodes that read it, if any: none of
      // them is the mutated node.
      const bool unused_condition =
          orphans_condition &&
          std::string(e.what()).find("but no conditional node uses it") != std::string::npos;
      if (unused_condition) continue;
      if (!named || (!culprit.empty() && !contains(e.nodes(), culprit))) {
        ADD_FAILURE() << "mutation '" << what << "': refusal names " << testing::PrintToString(e.nodes())
                      << ", expected " << (culprit.empty() ? "some node" : "'" + culprit + "'")
                      << ": " << e.what() << "; " << rerun;
        ++failures;
      }
    } catch (const error& e) {
      thrown = true;
      ++refused;
      if (e.node().empty()) {
        ADD_FAILURE() << "mutation '" << what << "': a cudag::error naming no node: " << e.what()
                      << "; " << rerun;
        ++failures;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation '" << what << "': not a cudag::error: " << e.what() << "; " << rerun;
      ++failures;
    }
    if (must_refuse && !thrown) {
      ADD_FAILURE() << "mutation '" << what << "' was accepted; " << rerun;
      ++failures;
    }
    try {
      (void)to_dot(spec);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "to_dot of a mutant threw: " << e.what() << "; " << rerun;
      ++failures;
    }
    for (auto& child : gen.children) child->nodes.clear();  // no cycles to leak, but be tidy
  }
  std::printf("check_random: %zu mutants refused\n", refused);
  EXPECT_GT(refused, cases / 2);
}

}  // namespace
}  // namespace cudag
