// Graph diff on large random specs: a spec against itself with every level's
// nodes, dependencies and declarations reordered gives an empty diff; with k
// random mutations, exactly those k changes; 10^5 changes in linear time.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cudag/diff.hpp"
#include "diff/diff_helpers.hpp"

namespace cudag {
namespace {
using namespace diff_test;

// "n" + std::to_string(i) without g++ 12's false -Wrestrict warning.
std::string numbered(std::string_view prefix, std::size_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

class generator {
 public:
  explicit generator(std::uint64_t seed) : rng_(seed) {}

  std::size_t below(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  graph_spec make(std::size_t count, std::size_t depth) {
    graph_spec g;
    g.name = numbered("g", below(1000));
    for (std::size_t i = 0; i < count; ++i) {
      node n;
      n.name = numbered("n", i);
      n.params = make_params(depth);
      const std::size_t deps = i == 0 ? 0 : below(4);
      for (std::size_t d = 0; d < deps; ++d) {
        std::string dep = numbered("n", below(i));
        if (std::find(n.deps.begin(), n.deps.end(), dep) == n.deps.end()) n.deps.push_back(dep);
      }
      g.nodes.push_back(std::move(n));
    }
    if (depth == 0) {
      g.params = {declare<float*>("x"), declare<float*>("y"), declare<int>("n"),
                  declare<cudaEvent_t>("ev"), declare<float*>("ext", true)};
      g.conditions = {declare_condition("c0"), declare_condition("c1", 1, false)};
    } else if (below(3) == 0) {
      g.params = {declare<int>(numbered("inner", depth))};
    }
    return g;
  }

  // Every level's nodes, dependencies, parameters and conditions shuffled;
  // child graphs copied (new objects, so that diff() compares them).
  graph_spec shuffled(const graph_spec& g) {
    graph_spec out = g;
    std::shuffle(out.nodes.begin(), out.nodes.end(), rng_);
    std::shuffle(out.params.begin(), out.params.end(), rng_);
    std::shuffle(out.conditions.begin(), out.conditions.end(), rng_);
    for (node& n : out.nodes) {
      std::shuffle(n.deps.begin(), n.deps.end(), rng_);
      if (auto* c = std::get_if<child_node>(&n.params))
        c->graph = std::make_shared<graph_spec>(shuffled(*c->graph));
      if (auto* c = std::get_if<conditional_node>(&n.params))
        for (graph_spec& body : c->bodies) body = shuffled(body);
    }
    return out;
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  value pointer_arg() {
    switch (below(3)) {
      case 0: return param<float*>("x");
      case 1: return param<float*>("y");
      default: return buffer<float*>("ext", 4 * below(8));
    }
  }

  node_params make_params(std::size_t depth) {
    const std::size_t roll = below(100);
    if (depth < 2 && roll < 2) return child_of(make(5 + below(20), depth + 1));
    if (depth < 2 && roll < 4) {
      const auto kind = static_cast<conditional_kind>(below(4));
      const std::size_t bodies = kind == conditional_kind::if_else ? 2
                                 : kind == conditional_kind::switch_case ? 1 + below(3)
                                                                         : 1;
      std::vector<graph_spec> b;
      for (std::size_t i = 0; i < bodies; ++i) b.push_back(make(3 + below(10), depth + 1));
      return conditional(kind, numbered("c", below(2)), std::move(b));
    }
    if (roll < 60) {
      kernel_node k = kernel({pointer_arg(), make_literal(static_cast<float>(below(10))), param<int>("n")});
      k.grid = dim3(static_cast<unsigned>(1 + below(64)), 1, 1);
      return k;
    }
    if (roll < 70) return memset_of(pointer_arg(), 16 * (1 + below(64)));
    if (roll < 78) return memcpy_of(pointer_arg(), pointer_arg(), 64 * (1 + below(64)));
    if (roll < 86) return empty_node{};
    if (roll < 90 && depth == 0) return host_node{some_host_function(), {param<int>("n")}};
    if (roll < 94 && depth == 0) return event_record_node{param<cudaEvent_t>("ev")};
    if (roll < 97 && depth == 0) return mem_alloc_node{numbered("buf", below(1000)), 256, -1};
    return empty_node{};
  }

  std::mt19937_64 rng_;
};

// Every node of a spec, with its graph (writable: the test made every child
// graph as a graph_spec) and path.
struct site {
  graph_spec* graph;
  std::size_t index;
  std::string prefix;
};

void collect(graph_spec& g, const std::string& prefix, std::vector<site>& out) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    out.push_back(site{&g, i, prefix});
    node& n = g.nodes[i];
    if (auto* c = std::get_if<child_node>(&n.params))
      collect(const_cast<graph_spec&>(*c->graph), nested_prefix(prefix + n.name, n), out);
    if (auto* c = std::get_if<conditional_node>(&n.params))
      for (std::size_t b = 0; b < c->bodies.size(); ++b)
        collect(c->bodies[b], nested_prefix(prefix + n.name, n, b), out);
  }
}

bool is_container(const node& n) {
  return n.kind() == node_kind::child || n.kind() == node_kind::conditional;
}

using expected_change = std::pair<change_kind, std::string>;

// Applies one mutation to each of k distinct nodes (or to their graph: a node
// or declaration added); returns the change each must give.
std::vector<expected_change> mutate(graph_spec& spec, std::size_t k, generator& gen) {
  std::vector<site> sites;
  collect(spec, "", sites);
  std::vector<std::size_t> order(sites.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), gen.rng());
  order.resize(std::min(k, order.size()));

  // Nodes no other node of their graph depends on, before any mutation.
  std::map<const graph_spec*, std::vector<bool>> has_dependent;
  for (const site& s : sites) {
    auto& flags = has_dependent[s.graph];
    if (flags.empty()) {
      flags.assign(s.graph->nodes.size(), false);
      std::map<std::string, std::size_t> at;
      for (std::size_t i = 0; i < s.graph->nodes.size(); ++i) at[s.graph->nodes[i].name] = i;
      for (const node& n : s.graph->nodes)
        for (const std::string& dep : n.deps) flags[at.at(dep)] = true;
    }
  }
  std::map<const graph_spec*, std::vector<bool>> removed;
  std::vector<std::pair<const site*, int>> plan;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const site& s = sites[order[i]];
    const node& n = s.graph->nodes[s.index];
    int type = static_cast<int>(gen.below(7));
    if (type == 3 && (has_dependent[s.graph][s.index] || is_container(n))) type = 0;
    if (type == 5 && n.deps.empty()) type = 0;
    if (type == 0 && n.kind() == node_kind::empty) type = 1;
    if (type == 1 && is_container(n)) type = 0;
    if (type == 3) {
      auto& flags = removed[s.graph];
      flags.resize(s.graph->nodes.size(), false);
      flags[s.index] = true;
    }
    plan.emplace_back(&s, type);
  }

  std::vector<expected_change> expected;
  std::vector<std::pair<graph_spec*, std::size_t>> removals;
  std::vector<std::pair<graph_spec*, std::string>> additions;
  std::size_t serial = 0;
  for (const auto& [s, type] : plan) {
    node& n = s->graph->nodes[s->index];
    const std::string path = s->prefix + n.name;
    ++serial;
    switch (type) {
      case 0: {  // one parameter
        std::visit(
            [&](auto& p) {
              using P = std::remove_cvref_t<decltype(p)>;
              if constexpr (std::is_same_v<P, kernel_node>) p.grid.x += 1;
              else if constexpr (std::is_same_v<P, memset_node>) p.width += 16;
              else if constexpr (std::is_same_v<P, memcpy_node>) p.bytes += 64;
              else if constexpr (std::is_same_v<P, host_node>) p.function = some_host_function();
              else if constexpr (std::is_same_v<P, event_record_node>) p.event = param<cudaEvent_t>("ev2");
              else if constexpr (std::is_same_v<P, mem_alloc_node>) p.bytes += 256;
              else if constexpr (std::is_same_v<P, conditional_node>) p.condition += "_renamed";
              else if constexpr (std::is_same_v<P, child_node>)
                const_cast<graph_spec&>(*p.graph).name += "_renamed";
              else FAIL() << "no parameter mutation for " << kind_name(n.kind());
            },
            n.params);
        expected.emplace_back(change_kind::params_changed, path);
        break;
      }
      case 1:  // kind
        if (n.kind() == node_kind::empty) n.params = kernel();
        else n.params = empty_node{};
        expected.emplace_back(change_kind::kind_changed, path);
        break;
      case 2:  // a node added to its graph (done last, as removals)
        additions.emplace_back(s->graph, numbered("added_", serial));
        expected.emplace_back(change_kind::node_added, s->prefix + numbered("added_", serial));
        break;
      case 3:  // removed (done last: indexes stay valid)
        removals.emplace_back(s->graph, s->index);
        expected.emplace_back(change_kind::node_removed, path);
        break;
      case 4: {  // a dependency added, on a node that stays
        const auto& gone = removed[s->graph];
        std::vector<std::string> candidates;
        for (std::size_t j = 0; j < s->graph->nodes.size(); ++j) {
          const std::string& name = s->graph->nodes[j].name;
          if (j == s->index || (j < gone.size() && gone[j]) || name.rfind("added_", 0) == 0) continue;
          if (std::find(n.deps.begin(), n.deps.end(), name) != n.deps.end()) continue;
          candidates.push_back(name);
        }
        if (candidates.empty()) {  // a graph of one node: declare instead
          s->graph->params.push_back(declare<int>(numbered("declared_", serial)));
          expected.emplace_back(change_kind::declaration_changed,
                                s->prefix + numbered("declared_", serial));
          break;
        }
        n.deps.push_back(candidates[gen.below(candidates.size())]);
        expected.emplace_back(change_kind::edge_added, path);
        break;
      }
      case 5:  // a dependency removed
        n.deps.erase(n.deps.begin() + static_cast<std::ptrdiff_t>(gen.below(n.deps.size())));
        expected.emplace_back(change_kind::edge_removed, path);
        break;
      default:  // a declaration added to its graph
        s->graph->conditions.push_back(declare_condition(numbered("declared_", serial)));
        expected.emplace_back(change_kind::declaration_changed,
                              s->prefix + numbered("declared_", serial));
        break;
    }
  }
  // Sites point into nested graphs: node vectors move their elements (and so
  // the nested graphs' storage stays where it is) only if a node moves
  // without throwing.
  static_assert(std::is_nothrow_move_constructible_v<node>);
  for (const auto& [g, name] : additions) g->nodes.push_back(empty(name));
  std::sort(removals.begin(), removals.end(),
            [](const auto& a, const auto& b) { return std::tie(a.first, a.second) > std::tie(b.first, b.second); });
  for (const auto& [g, index] : removals) g->nodes.erase(g->nodes.begin() + static_cast<std::ptrdiff_t>(index));
  return expected;
}

std::vector<expected_change> reported(const spec_diff& d) {
  std::vector<expected_change> out;
  for (const spec_change& c : d.changes) {
    EXPECT_FALSE(c.detail.empty()) << c.node;
    out.emplace_back(c.kind, c.node);
  }
  std::sort(out.begin(), out.end());
  return out;
}

change_kind reversed(change_kind kind) {
  switch (kind) {
    case change_kind::node_added: return change_kind::node_removed;
    case change_kind::node_removed: return change_kind::node_added;
    case change_kind::edge_added: return change_kind::edge_removed;
    case change_kind::edge_removed: return change_kind::edge_added;
    default: return kind;
  }
}

std::string listed(const std::vector<expected_change>& changes) {
  std::string out;
  for (const auto& [kind, node] : changes) out += std::string(change_kind_name(kind)) + " " + node + "\n";
  return out;
}

TEST(DiffRandom, ReorderedSpecHasNoChanges) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    generator gen(seed);
    const graph_spec spec = gen.make(3000, 0);
    ASSERT_GT(spec.total_nodes(), 3100u) << "nested graphs generated";
    const graph_spec reordered = gen.shuffled(spec);
    ASSERT_NE(spec.nodes[0].name, reordered.nodes[0].name);
    const spec_diff d = diff(spec, reordered);
    EXPECT_TRUE(d.empty()) << "seed " << seed << ":\n" << d.text(20);
    EXPECT_TRUE(diff(reordered, spec).empty());
  }
}

TEST(DiffRandom, ExactlyTheMutationsAreReported) {
  std::uint64_t seed = 100;
  for (std::size_t k : {1u, 2u, 7u, 50u, 400u}) {
    for (int round = 0; round < 3; ++round, ++seed) {
      generator gen(seed);
      const graph_spec before = gen.make(2000, 0);
      graph_spec after = gen.shuffled(before);  // a deep copy, reordered
      std::vector<expected_change> expected = mutate(after, k, gen);
      after = gen.shuffled(after);
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(expected.size(), k);

      const spec_diff d = diff(before, after);
      EXPECT_EQ(d.changes.size(), k) << "seed " << seed;
      EXPECT_EQ(listed(reported(d)), listed(expected)) << "seed " << seed;

      // Backwards: the same changes, additions and removals swapped.
      std::vector<expected_change> backwards;
      for (const auto& [kind, node] : expected) backwards.emplace_back(reversed(kind), node);
      std::sort(backwards.begin(), backwards.end());
      EXPECT_EQ(listed(reported(diff(after, before))), listed(backwards)) << "seed " << seed;

      // Deterministic: the same order every time.
      EXPECT_EQ(diff(before, after).text(), d.text());
      bool topology = true;
      for (const auto& [kind, node] : expected)
        topology = topology && (kind == change_kind::params_changed ||
                                kind == change_kind::declaration_changed);
      EXPECT_EQ(d.same_topology(), topology);
    }
  }
}

std::size_t count_of(const std::string& text, std::string_view part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DiffRandom, PictureOfRandomMutations) {
  for (std::uint64_t seed = 500; seed < 503; ++seed) {
    generator gen(seed);
    const graph_spec before = gen.make(120, 0);
    graph_spec after = gen.shuffled(before);
    const std::vector<expected_change> expected = mutate(after, 25, gen);
    after = gen.shuffled(after);
    const spec_diff d = diff(before, after);
    ASSERT_EQ(d.changes.size(), 25u);
    const std::string dot = to_dot(d, before, after);
    // One coloured node per added, removed and changed node (mutations add
    // and remove plain nodes only).
    std::size_t added = 0, removed = 0;
    std::set<std::string> changed;
    for (const auto& [kind, node] : expected) {
      added += kind == change_kind::node_added;
      removed += kind == change_kind::node_removed;
      if (kind == change_kind::params_changed || kind == change_kind::kind_changed) changed.insert(node);
    }
    EXPECT_EQ(count_of(dot, "\\n(added)\""), added) << "seed " << seed;
    EXPECT_EQ(count_of(dot, "\\n(removed)\""), removed);
    EXPECT_EQ(count_of(dot, "fillcolor=\"#ffe0b2\""), changed.size());
    std::size_t edges_added = 0, edges_removed = 0;
    for (const auto& [kind, node] : expected) {
      edges_added += kind == change_kind::edge_added;
      edges_removed += kind == change_kind::edge_removed;
    }
    // Edges into the added nodes (none: they have no dependencies) and the
    // removed ones (sinks, with their dependencies) are coloured too.
    std::size_t removed_node_edges = 0;
    for (const auto& [kind, path] : expected)
      if (kind == change_kind::node_removed) {
        std::vector<site> sites;
        collect(const_cast<graph_spec&>(before), "", sites);
        for (const site& s : sites)
          if (s.prefix + s.graph->nodes[s.index].name == path)
            removed_node_edges += s.graph->nodes[s.index].deps.size();
      }
    EXPECT_EQ(count_of(dot, "[color=\"#2e7d32\", penwidth=2"), edges_added);
    EXPECT_EQ(count_of(dot, "[color=\"#c62828\", style=dashed, penwidth=2"),
              edges_removed + removed_node_edges);

    if (std::system("command -v dot >/dev/null 2>&1") != 0) continue;
    const auto dir = std::filesystem::temp_directory_path() /
                     numbered("cudag_diff_random_", static_cast<std::size_t>(::getpid()));
    std::filesystem::create_directories(dir);
    {
      std::ofstream out(dir / "diff.dot", std::ios::binary);
      out << dot;
    }
    const std::string command = "dot -Tsvg '" + (dir / "diff.dot").string() + "' -o '" +
                                (dir / "diff.svg").string() + "' 2> '" + (dir / "err").string() + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
    EXPECT_EQ(read_file(dir / "err"), "") << "Graphviz complained, seed " << seed;
    EXPECT_NE(read_file(dir / "diff.svg").find("<svg"), std::string::npos);
    std::filesystem::remove_all(dir);
  }
}

// 10^5 changes: linear work takes a fraction of a second; pairing by a
// search per node (quadratic) would take minutes.
TEST(DiffRandom, HundredThousandChangesInLinearTime) {
  constexpr std::size_t count = 50000;
  graph_spec before, after;
  const auto chain_deps = [](std::size_t i) {
    return i > 0 ? std::vector<std::string>{numbered("n", i - 1)} : std::vector<std::string>{};
  };
  for (std::size_t i = 0; i < count; ++i) {
    kernel_node k = kernel({param<float*>("x")});
    before.nodes.push_back(make_node(numbered("n", i), k, chain_deps(i)));
    k.grid.x = 8;
    const std::size_t j = count - 1 - i;
    after.nodes.push_back(make_node(numbered("n", j), k, chain_deps(j)));
  }
  // after: the same chain declared backwards, every grid changed, and
  // 50,000 more nodes that before lacks.
  for (std::size_t i = 0; i < count; ++i) after.nodes.push_back(empty(numbered("extra", i)));
  const auto start = std::chrono::steady_clock::now();
  const spec_diff d = diff(before, after);
  const std::string text = d.text();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(d.changes.size(), 2 * count);
  EXPECT_TRUE(d.same_topology() == false);
  EXPECT_LT(seconds, 5.0) << "10^5 changes in " << seconds << " s";
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 2 * count);
}

}  // namespace
}  // namespace cudag
