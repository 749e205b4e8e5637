// One engine, one set of rules: random graph shapes, each judged twice.
//  - by the DSL's shape rules: the constexpr functions of shape.hpp that
//    compute G::shape at compile time, run here over vectors through
//    check_shape() (shape_rules.hpp), which answers with the compile error a
//    DSL declaration of the graph would give;
//  - by check(), on the same graph written as a cudag::graph_spec.
// Both must agree on whether the graph is valid; when both refuse it with
// the only fault of its kind, they must name the same nodes (the mapping is
// in naming_mismatch below); with several faults, each must refuse for one
// of them. For valid graphs, the DSL's node order must be
// topological_order()'s. Two more tests hold check_shape() to the compile
// errors of tests/compile_fail and the run-time rules to G::shape itself.
//
// Each case is made from its own seed (mixed from the base seed and the
// case number), so that a failure names one case to rerun. Environment:
//   CUDAG_RULES_SEED   base seed (default 20261124; "random": from the clock)
//   CUDAG_RULES_CASES  number of cases (default 30000)
//   CUDAG_RULES_CASE   run only this case number
//
// Generated: top-level nodes of several kinds (kernels and host nodes
// reading parameters, buffers and conditions, some pointers declared only
// read; memsets writing a buffer;
// empty nodes; mem alloc and free nodes; if/if-else/while/switch nodes whose
// bodies hold kernels, memsets, empty nodes and nested conditionals; child
// graphs reading the graph's buffers, holding buffers of their own or
// freeing one of the graph's), declared in an order unrelated to their
// topological order (edges run both ways through the declaration), edges
// declared in random order, some twice. Then up to three faults from
// `fault`, at random places (duplicate and empty names, unknown edge
// sources, cycles and self edges, parameters of two types, buffers used
// before their alloc or after their free, freed before allocated, allocated
// or freed twice, freed but never allocated, conditions tested by no or by
// two conditional nodes, nested ones included).
//
// Deliberately not generated (scope differences, not disagreements):
//  - what the DSL enforces by type or in its node factories, where check()
//    looks at values: literal sizes, argument types of kernels, null
//    functions, memset element sizes and widths, the number of conditional
//    bodies, node kinds CUDA forbids in conditional bodies;
//  - declarations the DSL cannot write: a parameter or condition declared
//    twice in one graph, a condition declared but read by no node, a
//    reference to an undeclared parameter or condition (DSL names declare
//    themselves by use);
//  - a dependency listed twice: the DSL merges repeated edges (the spec it
//    writes lists each once), while a spec's dependency list is refused with
//    a repeat;
//  - an edge to an unknown node: a spec lists dependencies on the
//    dependent, so only an unknown dependency (edge source) can be written;
//  - a parameter read as T* and as const T*: two types to the DSL, one
//    declaration that binds both to check(); the types used here never bind
//    to one another;
//  - a buffer read by a node when no node allocates it: see
//    generate_unallocated_use below.
// The spec declares every condition at the top level (CUDA lets a handle
// belong to the graph of its conditional node or any graph enclosing it):
// the DSL's own to_spec() declares a condition in the graph of the node
// testing it, so that check() refuses a DSL graph whose top level sets a
// condition tested inside a child graph, a graph both rule sets accept.
#include "cudag/dsl/shape_rules.hpp"  // first: the header compiles alone

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cudag/check.hpp"
#include "cudag/dsl.hpp"
#include "cudag/spec.hpp"

namespace {

namespace dsl = cudag::dsl::detail;  // the shape rules are the DSL's internals
using cudag::conditional_kind;
using cudag::node_kind;
using dsl::ref_kind;

// A buffer read by a node while no node of the graph allocates it: check()
// refuses it ("uses buffer 'b', which no mem_alloc node ... produces").
// Top-level reads are refused by both sides (buffer_never_allocated and its
// run-time twin); a read inside a child graph is a known gap of the DSL (a
// child's item does not list what its graph allocates): not generated until
// child items carry that.
constexpr bool generate_unallocated_use = false;
static_assert(dsl::reports_unallocated_use);

// Shapes the DSL cannot judge yet, because a child node's item does not say
// what its graph allocates and says only the first buffer it frees (see
// item_info; child_body in graph_nodes.hpp): check() refuses them, the DSL
// compiles them. Off: on, the test shows each (CUDAG_RULES_SEED to rerun).
//  - a buffer allocated by a node and again inside a child graph;
//  - a node reading a buffer allocated inside a child graph (out of reach);
//  - a child graph freeing two buffers of its enclosing graph, with a node
//    reading the second after the child (the DSL sees only the first free).
constexpr bool generate_known_dsl_gaps = false;

void kernel_stub(float*) {}

// ----------------------------------------------------------------- types --
// Parameter types, none of which binds to another (binds_to).
struct param_type {
  const char* name;
  dsl::type_id dsl;
  cudag::type_tag (*tag)() noexcept;
};
const param_type param_types[] = {
    {"float*", dsl::type_id_of<float*>, &cudag::type_of<float*>},
    {"int*", dsl::type_id_of<int*>, &cudag::type_of<int*>},
    {"int", dsl::type_id_of<int>, &cudag::type_of<int>},
    {"float", dsl::type_id_of<float>, &cudag::type_of<float>},
};
constexpr int type_count = 4;

// ----------------------------------------------------------------- model --
struct read {
  ref_kind kind = ref_kind::param;
  std::string name;
  int type = 0;  ///< parameters: index into param_types
  /// A pointer a kernel or host node declares it only reads (with_access;
  /// the spec node's accesses): no race with other readers.
  bool declared_read = false;
};

struct model_node {
  std::string name;
  node_kind kind = node_kind::kernel;
  std::vector<read> reads;  ///< kernel, host: arguments; memset: its buffer
  std::string buffer;       ///< mem_alloc, mem_free
  conditional_kind cond_kind = conditional_kind::if_then;
  std::string condition;                        ///< conditional
  std::vector<std::vector<model_node>> bodies;  ///< conditional: nodes, run in a chain
};

/// from runs before to; from < 0: the unknown node `ghost`.
struct model_edge {
  int from = 0;
  int to = 0;
  std::string ghost;
};

enum class fault {
  duplicate_name,
  empty_name,
  unknown_edge,
  cycle,
  parameter_two_types,
  buffer_before_alloc,
  buffer_after_free,
  free_before_alloc,
  buffer_allocated_twice,
  buffer_freed_twice,
  free_never_allocated,
  use_never_allocated,
  condition_untested,
  condition_tested_twice,
  condition_tested_twice_nested,
  // generate_known_dsl_gaps only:
  gap_alloc_in_child,
  gap_use_of_child_buffer,
  gap_child_frees_two,
};
constexpr int fault_count = 18;
bool known_gap(fault f) { return f >= fault::gap_alloc_in_child; }

const char* fault_name(fault f) {
  static const char* names[] = {"duplicate_name",
                                "empty_name",
                                "unknown_edge",
                                "cycle",
                                "parameter_two_types",
                                "buffer_before_alloc",
                                "buffer_after_free",
                                "free_before_alloc",
                                "buffer_allocated_twice",
                                "buffer_freed_twice",
                                "free_never_allocated",
                                "use_never_allocated",
                                "condition_untested",
                                "condition_tested_twice",
                                "condition_tested_twice_nested",
                                "gap_alloc_in_child",
                                "gap_use_of_child_buffer",
                                "gap_child_frees_two"};
  return names[int(f)];
}

/// What a refusal is about, whichever side refuses.
enum class category {
  none,
  empty_name,
  duplicate_name,
  unknown_node,
  cycle,
  parameter_types,
  allocated_twice,
  freed_twice,
  outside_lifetime,
  freed_never_allocated,
  used_never_allocated,
  untested_condition,
  tested_twice,
  race,
  other,
};
const char* category_name(category c) {
  static const char* names[] = {"none",
                                "empty_name",
                                "duplicate_name",
                                "unknown_node",
                                "cycle",
                                "parameter_types",
                                "allocated_twice",
                                "freed_twice",
                                "outside_lifetime",
                                "freed_never_allocated",
                                "used_never_allocated",
                                "untested_condition",
                                "tested_twice",
                                "race",
                                "other"};
  return names[int(c)];
}

category category_of(fault f) {
  switch (f) {
    case fault::duplicate_name:
      return category::duplicate_name;
    case fault::empty_name:
      return category::empty_name;
    case fault::unknown_edge:
      return category::unknown_node;
    case fault::cycle:
      return category::cycle;
    case fault::parameter_two_types:
      return category::parameter_types;
    case fault::buffer_before_alloc:
    case fault::buffer_after_free:
    case fault::free_before_alloc:
      return category::outside_lifetime;
    case fault::buffer_allocated_twice:
      return category::allocated_twice;
    case fault::buffer_freed_twice:
      return category::freed_twice;
    case fault::free_never_allocated:
      return category::freed_never_allocated;
    case fault::use_never_allocated:
      return category::used_never_allocated;
    case fault::condition_untested:
      return category::untested_condition;
    case fault::condition_tested_twice:
    case fault::condition_tested_twice_nested:
      return category::tested_twice;
    case fault::gap_alloc_in_child:
      return category::allocated_twice;
    case fault::gap_use_of_child_buffer:
      return category::used_never_allocated;
    case fault::gap_child_frees_two:
      return category::outside_lifetime;
  }
  return category::other;
}

struct model_case {
  std::vector<model_node> nodes;  ///< top level, declaration order
  std::vector<model_edge> edges;  ///< declaration order
  std::vector<int> param_type;    ///< parameter p<i>: its type
  std::vector<fault> faults;
};

/// "k3" (written so, GCC 12 warns falsely about "k" + std::to_string(3)).
std::string numbered(const char* prefix, std::size_t number) {
  std::string out = prefix;
  out += std::to_string(number);
  return out;
}

bool indexed_bodies(conditional_kind k) {
  return k == conditional_kind::if_else || k == conditional_kind::switch_case;
}
std::string body_prefix(const model_node& n, const std::string& path, std::size_t body) {
  const bool indexed = n.kind == node_kind::conditional && indexed_bodies(n.cond_kind);
  return path + (indexed ? numbered("[", body) + "]" : "") + "/";
}

/// The buffers a graph's nodes free that none of its nodes allocates, in
/// declaration order (a child node frees them as its enclosing graph sees
/// it).
std::vector<std::string> outer_frees(const std::vector<model_node>& graph) {
  std::vector<std::string> out;
  for (const model_node& m : graph) {
    if (m.kind != node_kind::mem_free) continue;
    bool allocated = false;
    for (const model_node& a : graph)
      allocated = allocated || (a.kind == node_kind::mem_alloc && a.buffer == m.buffer);
    if (!allocated) out.push_back(m.buffer);
  }
  return out;
}

// ------------------------------------------------------------- generator --
class case_maker {
 public:
  explicit case_maker(std::uint64_t seed) : rng_(seed) {}

  model_case make() {
    base_graph();
    const int roll = uniform(0, 99);
    const int faults = roll < 28 ? 0 : roll < 78 ? 1 : roll < 93 ? 2 : 3;
    std::vector<fault> all;
    for (int f = 0; f < fault_count; ++f)
      if ((generate_unallocated_use || fault(f) != fault::use_never_allocated) &&
          (generate_known_dsl_gaps || !known_gap(fault(f))))
        all.push_back(fault(f));
    std::shuffle(all.begin(), all.end(), rng_);
    for (int k = 0; k < faults; ++k) inject(all[std::size_t(k)]);
    return std::move(c_);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T>
  T& pick(std::vector<T>& v) {
    return v[std::size_t(uniform(0, int(v.size()) - 1))];
  }
  std::string fresh(const char* prefix) { return numbered(prefix, fresh_++); }

  read param_read(bool wrong_type = false) {
    const int p = uniform(0, int(c_.param_type.size()) - 1);
    int type = c_.param_type[std::size_t(p)];
    if (wrong_type) type = (type + uniform(1, type_count - 1)) % type_count;
    return {ref_kind::param, numbered("p", p), type,
            param_types[type].tag().is_pointer && chance(0.75)};
  }

  conditional_kind random_conditional() {
    static constexpr conditional_kind kinds[] = {
        conditional_kind::if_then, conditional_kind::if_else, conditional_kind::while_loop,
        conditional_kind::switch_case};
    return kinds[uniform(0, 3)];
  }

  /// A conditional node testing a new condition; bodies of kernels, memsets,
  /// empty nodes and (at depth 0) nested conditionals.
  model_node conditional(std::string name, int depth) {
    model_node n;
    n.name = std::move(name);
    n.kind = node_kind::conditional;
    n.cond_kind = random_conditional();
    n.condition = fresh("c");
    conditions_.push_back(n.condition);
    const int bodies = n.cond_kind == conditional_kind::if_else       ? 2
                       : n.cond_kind == conditional_kind::switch_case ? uniform(1, 3)
                                                                      : 1;
    for (int b = 0; b < bodies; ++b) {
      std::vector<model_node> body;
      const int size = uniform(1, 2);
      for (int k = 0; k < size; ++k) {
        const int roll = uniform(0, 9);
        if (roll == 9 && depth == 0) {
          body.push_back(conditional(numbered("inner", k), depth + 1));
          continue;
        }
        model_node m;
        m.name = numbered("k", k);
        m.kind = roll < 7 ? node_kind::kernel : roll == 7 ? node_kind::memset : node_kind::empty;
        if (m.kind == node_kind::kernel && chance(0.5)) m.reads.push_back(param_read());
        body.push_back(std::move(m));
      }
      n.bodies.push_back(std::move(body));
    }
    return n;
  }

  /// A child graph: kernels, host and empty nodes, a nested conditional,
  /// sometimes a buffer of its own (alloc, a kernel using it, free).
  model_node child(std::string name) {
    model_node n;
    n.name = std::move(name);
    n.kind = node_kind::child;
    std::vector<model_node> body;
    const int size = uniform(1, 3);
    for (int k = 0; k < size; ++k) {
      const int roll = k == 0 ? 0 : uniform(0, 9);  // the first: a kernel
      if (roll == 9) {
        body.push_back(conditional(numbered("inner", k), 1));
        continue;
      }
      model_node m;
      m.name = numbered("k", k);
      m.kind = roll < 6 ? node_kind::kernel : roll < 8 ? node_kind::host : node_kind::empty;
      if (m.kind != node_kind::empty && chance(0.5)) m.reads.push_back(param_read());
      body.push_back(std::move(m));
    }
    if (chance(0.3)) {  // its own buffer, in a chain: alloc first, free last
      const std::string b = fresh("bc");
      model_node alloc, use, free;
      alloc.name = "a";
      alloc.kind = node_kind::mem_alloc;
      alloc.buffer = b;
      use.name = "u";
      use.reads.push_back({ref_kind::buffer, b, 0});
      free.name = "f";
      free.kind = node_kind::mem_free;
      free.buffer = b;
      body.insert(body.begin(), alloc);
      body.insert(body.begin() + uniform(1, int(body.size())), use);
      body.push_back(free);
    }
    n.bodies.push_back(std::move(body));
    return n;
  }

  /// The first kernel of a node's bodies or child graph (one is made when
  /// none).
  model_node& body_kernel(model_node& n) {
    for (auto& body : n.bodies)
      for (auto& m : body)
        if (m.kind == node_kind::kernel) return m;
    for (auto& body : n.bodies)
      for (auto& m : body)
        if (m.kind == node_kind::empty || m.kind == node_kind::memset) {
          m.kind = node_kind::kernel;
          return m;
        }
    for (auto& body : n.bodies)
      for (auto& m : body)
        if (m.kind == node_kind::conditional) return body_kernel(m);
    model_node k;
    k.name = "kb";
    n.bodies.front().push_back(k);
    return n.bodies.front().back();
  }

  /// Makes a child graph free `buffer` last.
  static void free_in(model_node& holder, const std::string& buffer) {
    model_node free;
    free.name = "f_" + buffer;
    free.kind = node_kind::mem_free;
    free.buffer = buffer;
    holder.bodies.front().push_back(free);
  }
  /// The buffers of the enclosing graph a child graph frees.
  static std::vector<std::string> frees_in(const model_node& n) {
    return n.kind == node_kind::child ? outer_frees(n.bodies.front()) : std::vector<std::string>{};
  }

  model_node worker(std::string name) {
    const int roll = uniform(0, 99);
    if (roll < 20) return conditional(std::move(name), 0);
    if (roll < 30) return child(std::move(name));
    model_node n;
    n.name = std::move(name);
    n.kind = roll < 64   ? node_kind::kernel
             : roll < 76 ? node_kind::memset
             : roll < 88 ? node_kind::host
                         : node_kind::empty;
    if (n.kind == node_kind::kernel || n.kind == node_kind::host)
      for (int k = uniform(0, 2); k > 0; --k) n.reads.push_back(param_read());
    return n;
  }

  /// Adds `read` to a node the way its kind reads: an argument, a memset's
  /// buffer, or a kernel in a conditional's body.
  void add_read(model_node& n, read r) {
    if (n.kind == node_kind::conditional || n.kind == node_kind::child)
      return add_read(body_kernel(n), std::move(r));
    if (n.kind == node_kind::memset) {
      for (const read& existing : n.reads)
        if (existing.kind == ref_kind::buffer) return;  // one destination
    }
    n.reads.insert(n.reads.begin() + uniform(0, int(n.reads.size())), std::move(r));
  }

  void for_each_kernel(std::vector<model_node>& nodes, const auto& f) {
    for (model_node& n : nodes) {
      if (n.kind == node_kind::kernel) f(n);
      for (auto& body : n.bodies) for_each_kernel(body, f);
    }
  }

  void base_graph() {
    c_ = {};
    rank_.clear();
    conditions_.clear();
    fresh_ = 0;
    for (int p = uniform(1, 3); p > 0; --p) c_.param_type.push_back(uniform(0, type_count - 1));

    // Nodes in a topological order (their rank); names come later.
    std::vector<model_node> ranked;
    for (int w = uniform(1, 8); w > 0; --w) ranked.push_back(worker(""));
    const int buffers = uniform(0, 2);
    for (int b = 0; b < buffers; ++b) {
      model_node alloc;
      alloc.kind = node_kind::mem_alloc;
      alloc.buffer = numbered("b", b);
      ranked.push_back(alloc);
      if (chance(0.8)) {
        model_node free = alloc;
        free.kind = node_kind::mem_free;
        ranked.push_back(free);
      }
    }
    std::shuffle(ranked.begin(), ranked.end(), rng_);
    const int count = int(ranked.size());
    std::vector<std::pair<int, int>> edges;  // by rank
    for (int b = 0; b < buffers; ++b) {
      const std::string name = numbered("b", b);
      int alloc = -1, free = -1;
      for (int i = 0; i < count; ++i) {
        if (ranked[std::size_t(i)].buffer != name) continue;
        (ranked[std::size_t(i)].kind == node_kind::mem_alloc ? alloc : free) = i;
      }
      if (free >= 0 && free < alloc) {
        std::swap(ranked[std::size_t(alloc)], ranked[std::size_t(free)]);
        std::swap(alloc, free);
      }
      // Or a child graph ranked after the alloc frees it, as its last user.
      if (free < 0 && chance(0.6)) {
        std::vector<int> children;
        for (int i = alloc + 1; i < count; ++i)
          if (ranked[std::size_t(i)].kind == node_kind::child &&
              (generate_known_dsl_gaps || frees_in(ranked[std::size_t(i)]).empty()))
            children.push_back(i);
        if (!children.empty()) {
          free = pick(children);
          free_in(ranked[std::size_t(free)], name);
        }
      }
      // Users: nodes ranked inside the window, ordered by edges.
      bool used = false;
      for (int u = alloc + 1; u < (free >= 0 ? free : count); ++u) {
        model_node& n = ranked[std::size_t(u)];
        if (n.kind == node_kind::empty || n.kind == node_kind::mem_alloc ||
            n.kind == node_kind::mem_free || !chance(0.5))
          continue;
        add_read(n, {ref_kind::buffer, name, 0});
        edges.emplace_back(alloc, u);
        if (free >= 0) edges.emplace_back(u, free);
        used = true;
      }
      if (free >= 0 && (!used || chance(0.3))) edges.emplace_back(alloc, free);
    }
    // Kernels set conditions (any conditional's).
    if (!conditions_.empty())
      for_each_kernel(ranked, [&](model_node& k) {
        if (chance(0.25)) add_read(k, {ref_kind::condition, pick(conditions_), 0});
      });
    // More edges, always from a lower rank to a higher one.
    const double q = std::min(0.5, 2.0 / count);
    for (int i = 0; i < count; ++i)
      for (int j = i + 1; j < count; ++j)
        if (chance(q)) edges.emplace_back(i, j);
    if (!edges.empty())
      for (int k = uniform(0, 2); k > 0; --k) edges.push_back(pick(edges));  // declared twice

    // Declaration order: unrelated to the rank.
    std::vector<int> declared(static_cast<std::size_t>(count));  // declared[rank] = index
    for (int i = 0; i < count; ++i) declared[std::size_t(i)] = i;
    std::shuffle(declared.begin(), declared.end(), rng_);
    c_.nodes.resize(std::size_t(count));
    rank_.assign(std::size_t(count), -1);
    for (int r = 0; r < count; ++r) {
      const std::size_t d = std::size_t(declared[std::size_t(r)]);
      c_.nodes[d] = std::move(ranked[std::size_t(r)]);
      c_.nodes[d].name = numbered("n", d);
      rank_[d] = r;
    }
    for (const auto& [from, to] : edges)
      c_.edges.push_back({declared[std::size_t(from)], declared[std::size_t(to)], {}});
    std::shuffle(c_.edges.begin(), c_.edges.end(), rng_);
  }

  // ------------------------------------------------------------ faults --
  /// Inserts a node at a random declaration position; returns its index.
  int add_node(model_node n) {
    const int at = uniform(0, int(c_.nodes.size()));
    c_.nodes.insert(c_.nodes.begin() + at, std::move(n));
    rank_.insert(rank_.begin() + at, -1);
    for (model_edge& e : c_.edges) {
      if (e.from >= at) ++e.from;
      if (e.to >= at) ++e.to;
    }
    return at;
  }
  void add_edge(int from, int to) {
    const int at = uniform(0, int(c_.edges.size()));
    c_.edges.insert(c_.edges.begin() + at, model_edge{from, to, {}});
  }
  /// A node other than `node` (the graph has at least two when asked).
  int other_node(int node) {
    const int k = uniform(0, int(c_.nodes.size()) - 2);
    return k >= node ? k + 1 : k;
  }
  int find_node(node_kind kind, const std::string& buffer) const {
    for (std::size_t i = 0; i < c_.nodes.size(); ++i)
      if (c_.nodes[i].kind == kind && c_.nodes[i].buffer == buffer) return int(i);
    return -1;
  }
  model_node memory_node(node_kind kind, const std::string& buffer) {
    model_node n;
    n.name = fresh("x");
    n.kind = kind;
    n.buffer = buffer;
    return n;
  }
  /// A buffer some node allocates (and, when asked, frees); made when none.
  /// The top-level node that frees `buffer`: a mem_free node or a child
  /// node whose graph frees it; -1 when none.
  int find_free(const std::string& buffer) const {
    for (std::size_t i = 0; i < c_.nodes.size(); ++i) {
      const model_node& n = c_.nodes[i];
      const std::vector<std::string> frees = frees_in(n);
      if ((n.kind == node_kind::mem_free && n.buffer == buffer) ||
          std::find(frees.begin(), frees.end(), buffer) != frees.end())
        return int(i);
    }
    return -1;
  }
  std::string allocated_buffer(bool freed) {
    std::vector<std::string> found;
    for (const model_node& n : c_.nodes)
      if (n.kind == node_kind::mem_alloc && (!freed || find_free(n.buffer) >= 0))
        found.push_back(n.buffer);
    if (!found.empty()) return pick(found);
    const std::string name = fresh("bn");
    const int alloc = add_node(memory_node(node_kind::mem_alloc, name));
    if (freed) {
      const int free = add_node(memory_node(node_kind::mem_free, name));
      add_edge(alloc < free ? alloc : alloc + 1, free);
    }
    return name;
  }
  /// A new node reading `r`: a kernel, host, memset or a conditional node
  /// whose body reads it.
  model_node reader(const read& r) {
    model_node n;
    const int roll = uniform(0, 4);
    if (roll == 3) {
      n = conditional(fresh("x"), 0);
    } else if (roll == 4) {
      n = child(fresh("x"));
    } else {
      n.name = fresh("x");
      n.kind = roll == 0 ? node_kind::kernel : roll == 1 ? node_kind::host : node_kind::memset;
      if (n.kind == node_kind::memset && r.kind != ref_kind::buffer) n.kind = node_kind::kernel;
    }
    add_read(n, r);
    return n;
  }
  std::string tested_condition() {
    if (conditions_.empty()) add_node(conditional(fresh("x"), 0));
    return pick(conditions_);
  }
  /// Makes a new conditional node test `c` instead of its own condition.
  void retest(model_node& n, const std::string& c) {
    conditions_.erase(std::find(conditions_.begin(), conditions_.end(), n.condition));
    n.condition = c;
  }
  std::vector<int> base_nodes() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < c_.nodes.size(); ++i)
      if (rank_[i] >= 0) out.push_back(int(i));
    return out;
  }

  void inject(fault f) {
    c_.faults.push_back(f);
    const int count = int(c_.nodes.size());
    switch (f) {
      case fault::duplicate_name: {
        if (count < 2) add_node(worker(fresh("x")));
        const int i = uniform(0, int(c_.nodes.size()) - 1);
        int j = uniform(0, int(c_.nodes.size()) - 2);
        if (j >= i) ++j;
        c_.nodes[std::size_t(j)].name = c_.nodes[std::size_t(i)].name;
        break;
      }
      case fault::empty_name:
        c_.nodes[std::size_t(uniform(0, count - 1))].name.clear();
        break;
      case fault::unknown_edge: {
        const int at = uniform(0, int(c_.edges.size()));
        c_.edges.insert(c_.edges.begin() + at, model_edge{-1, uniform(0, count - 1), "ghost"});
        break;
      }
      case fault::cycle: {
        std::vector<int> base = base_nodes();
        std::shuffle(base.begin(), base.end(), rng_);
        base.resize(std::size_t(uniform(1, std::min(4, int(base.size())))));
        std::sort(base.begin(), base.end(),
                  [&](int a, int b) { return rank_[std::size_t(a)] < rank_[std::size_t(b)]; });
        for (std::size_t k = 1; k < base.size(); ++k) add_edge(base[k - 1], base[k]);
        add_edge(base.back(), base.front());  // one node: a self edge
        break;
      }
      case fault::parameter_two_types: {
        // A read with the parameter's type somewhere, one with another type.
        const read right = param_read();
        read wrong = right;
        wrong.type = (right.type + uniform(1, type_count - 1)) % type_count;
        wrong.declared_read = wrong.declared_read && param_types[wrong.type].tag().is_pointer;
        for (const read& r : std::vector<read>{right, wrong}) {
          std::vector<model_node*> readers;  // anew: add_node moves the nodes
          for (model_node& n : c_.nodes)
            if (n.kind == node_kind::host) readers.push_back(&n);
          for_each_kernel(c_.nodes, [&](model_node& k) { readers.push_back(&k); });
          if (chance(0.7) && !readers.empty())
            add_read(*pick(readers), r);
          else
            add_node(reader(r));
        }
        break;
      }
      case fault::buffer_before_alloc: {
        const std::string b = allocated_buffer(false);
        const int user = add_node(reader({ref_kind::buffer, b, 0}));
        // No edge into the user: nothing orders it after the alloc.
        if (chance(0.5)) add_edge(user, find_node(node_kind::mem_alloc, b));
        for (int k = uniform(0, 2); k > 0; --k) add_edge(user, other_node(user));
        break;
      }
      case fault::buffer_after_free: {
        const std::string b = allocated_buffer(true);
        const int user = add_node(reader({ref_kind::buffer, b, 0}));
        add_edge(find_free(b), user);
        // No edge out of the user: nothing orders it before the free.
        for (int k = uniform(0, 2); k > 0; --k) add_edge(other_node(user), user);
        break;
      }
      case fault::free_before_alloc: {
        const std::string b = fresh("bq");
        const int alloc = add_node(memory_node(node_kind::mem_alloc, b));
        const int free = add_node(memory_node(node_kind::mem_free, b));
        if (chance(0.5)) add_edge(free, alloc < free ? alloc : alloc + 1);
        break;
      }
      case fault::buffer_allocated_twice: {
        const std::string b = allocated_buffer(false);
        const int second = add_node(memory_node(node_kind::mem_alloc, b));
        if (chance(0.5)) add_edge(other_node(second), second);
        break;
      }
      case fault::buffer_freed_twice: {
        const std::string b = allocated_buffer(true);
        model_node free = memory_node(node_kind::mem_free, b);
        if (chance(0.3)) {  // a child graph frees it
          free = child(fresh("x"));
          free_in(free, b);
        }
        const int second = add_node(std::move(free));
        if (chance(0.5)) add_edge(find_node(node_kind::mem_alloc, b), second);
        break;
      }
      case fault::free_never_allocated: {
        const int free = add_node(memory_node(node_kind::mem_free, fresh("bz")));
        if (chance(0.5)) add_edge(other_node(free), free);
        break;
      }
      case fault::use_never_allocated:
        add_node(reader({ref_kind::buffer, fresh("bz"), 0}));
        break;
      case fault::condition_untested: {
        const read r{ref_kind::condition, fresh("cz"), 0};
        std::vector<model_node*> kernels;
        for_each_kernel(c_.nodes, [&](model_node& k) { kernels.push_back(&k); });
        if (!kernels.empty() && chance(0.6))
          add_read(*pick(kernels), r);
        else
          add_node(reader(r));
        break;
      }
      case fault::condition_tested_twice: {
        const std::string c = tested_condition();
        model_node again = conditional(fresh("x"), 0);
        retest(again, c);
        add_node(std::move(again));
        break;
      }
      case fault::condition_tested_twice_nested: {
        const std::string c = tested_condition();
        std::vector<model_node*> holders;
        for (model_node& n : c_.nodes)
          if (n.kind == node_kind::conditional || n.kind == node_kind::child) holders.push_back(&n);
        model_node* holder = nullptr;
        if (holders.empty() || chance(0.3)) {
          holder = &c_.nodes[std::size_t(add_node(conditional(fresh("x"), 0)))];
        } else {
          holder = pick(holders);
        }
        model_node inner = conditional(fresh("again"), 1);
        retest(inner, c);
        auto& body = pick(holder->bodies);
        body.insert(body.begin() + uniform(0, int(body.size())), std::move(inner));
        break;
      }
      case fault::gap_alloc_in_child: {
        // Inside the window of a buffer the graph allocates, a child graph
        // allocates (and frees) it again.
        const std::string b = allocated_buffer(false);
        model_node twin = child(fresh("x"));
        twin.bodies.front().insert(twin.bodies.front().begin(),
                                   memory_node(node_kind::mem_alloc, b));
        twin.bodies.front().push_back(memory_node(node_kind::mem_free, b));
        const int at = add_node(std::move(twin));
        add_edge(find_node(node_kind::mem_alloc, b), at);
        if (find_free(b) >= 0 && find_free(b) != at) add_edge(at, find_free(b));
        break;
      }
      case fault::gap_use_of_child_buffer: {
        // A node ordered after a child graph reads a buffer the child
        // graph allocates.
        model_node owner = child(fresh("x"));
        const std::string b = fresh("bo");
        owner.bodies.front().insert(owner.bodies.front().begin(),
                                    memory_node(node_kind::mem_alloc, b));
        const int at = add_node(std::move(owner));
        const int user = add_node(reader({ref_kind::buffer, b, 0}));
        add_edge(user <= at ? at + 1 : at, user);
        break;
      }
      case fault::gap_child_frees_two: {
        // A child graph frees two buffers of the graph; a node reads the
        // second after it.
        const std::string b1 = fresh("bt"), b2 = fresh("bt");
        model_node freer = child(fresh("x"));
        free_in(freer, b1);
        free_in(freer, b2);
        add_node(memory_node(node_kind::mem_alloc, b1));
        add_node(memory_node(node_kind::mem_alloc, b2));
        const int at = add_node(std::move(freer));
        const int user = add_node(reader({ref_kind::buffer, b2, 0}));
        const int child_at = user <= at ? at + 1 : at;
        add_edge(find_node(node_kind::mem_alloc, b1), child_at);
        add_edge(find_node(node_kind::mem_alloc, b2), child_at);
        add_edge(child_at, user);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  model_case c_;
  std::vector<int> rank_;  ///< per declared node: its rank in the base graph; -1: added by a fault
  std::vector<std::string> conditions_;  ///< conditions some conditional node tests
  int fresh_ = 0;
};

// ------------------------------------------------------------- the DSL --
void flatten_refs(const model_node& n, std::vector<dsl::shape_reference>& out) {
  // As the DSL's nodes list them: an alloc or free its buffer; a conditional
  // its condition, then its bodies' references; a kernel its arguments.
  // Memory (cudag/memory_access.hpp): a kernel's or host node's pointer
  // parameters (none points to const here) and buffers are read and
  // written, a memset's buffer written.
  if (n.kind == node_kind::mem_alloc || n.kind == node_kind::mem_free)
    out.push_back({ref_kind::buffer, n.buffer, nullptr});
  if (n.kind == node_kind::conditional) out.push_back({ref_kind::condition, n.condition, nullptr});
  for (const read& r : n.reads) {
    dsl::shape_reference ref{r.kind, r.name,
                             r.kind == ref_kind::param ? param_types[r.type].dsl : nullptr};
    ref.touches_memory = r.kind == ref_kind::buffer ||
                         (r.kind == ref_kind::param && param_types[r.type].tag().is_pointer);
    if (r.declared_read) ref.access = cudag::access_mode::read;
    out.push_back(std::move(ref));
  }
  for (const auto& body : n.bodies)
    for (const model_node& m : body) flatten_refs(m, out);
}

void nested_tests(const model_node& n, const std::string& path,
                  std::vector<dsl::shape_nested_test>& out) {
  for (std::size_t b = 0; b < n.bodies.size(); ++b)
    for (const model_node& m : n.bodies[b]) {
      if (m.kind != node_kind::conditional) continue;
      const std::string inner = body_prefix(n, path, b) + m.name;
      out.push_back({m.condition, inner});
      nested_tests(m, inner, out);
    }
}

dsl::shape_node describe(const model_node& n) {
  dsl::shape_node d;
  d.name = n.name;
  d.kind = n.kind;
  flatten_refs(n, d.refs);
  if (n.kind == node_kind::mem_alloc) d.allocates = n.buffer;
  if (n.kind == node_kind::mem_free) d.frees = n.buffer;
  if (n.kind == node_kind::conditional) d.tests = n.condition;
  if (n.kind == node_kind::child && !outer_frees(n.bodies.front()).empty())
    d.frees = outer_frees(n.bodies.front()).front();  // child_body::frees: the first only
  nested_tests(n, n.name, d.nested_tests);
  return d;
}

dsl::shape_description describe(const model_case& c) {
  dsl::shape_description d;
  for (const model_node& n : c.nodes) d.nodes.push_back(describe(n));
  for (const model_edge& e : c.edges)
    d.edges.push_back({e.from < 0 ? e.ghost : c.nodes[std::size_t(e.from)].name,
                       c.nodes[std::size_t(e.to)].name});
  return d;
}

/// A conditional body as a DSL graph of its own: its nodes in a chain.
dsl::shape_description describe_body(const std::vector<model_node>& body) {
  dsl::shape_description d;
  for (std::size_t k = 0; k < body.size(); ++k) {
    d.nodes.push_back(describe(body[k]));
    if (k > 0) d.edges.push_back({body[k - 1].name, body[k].name});
  }
  return d;
}

/// The DSL's verdict: body graphs are declared (and checked) before the
/// graph that holds them; only the top level judges orphan frees and
/// untested conditions.
dsl::shape_verdict dsl_verdict(const model_case& c) {
  const auto bodies_of = [](const model_node& n,
                            const auto& self) -> std::optional<dsl::shape_verdict> {
    for (const auto& body : n.bodies) {
      for (const model_node& m : body)
        if (auto inner = self(m, self)) return inner;
      dsl::shape_verdict v = dsl::check_shape(describe_body(body), false);
      if (!v.ok()) return v;
    }
    return std::nullopt;
  };
  for (const model_node& n : c.nodes)
    if (auto v = bodies_of(n, bodies_of)) return *v;
  return dsl::check_shape(describe(c));
}

// ------------------------------------------------------------------ spec --
cudag::value value_of(const read& r) {
  switch (r.kind) {
    case ref_kind::param:
      return cudag::value{param_types[r.type].tag(), cudag::param_ref{r.name}};
    case ref_kind::buffer:
      return cudag::value{cudag::type_of<float*>(), cudag::buffer_ref{r.name, 0}};
    case ref_kind::condition:
      return cudag::value{cudag::type_of<cudaGraphConditionalHandle>(),
                          cudag::condition_ref{r.name}};
  }
  return {};
}

cudag::graph_spec body_spec(const std::vector<model_node>& body);

cudag::node spec_node(const model_node& n) {
  cudag::node out;
  out.name = n.name;
  std::vector<cudag::value> args;
  cudag::access_declarations accesses;
  for (const read& r : n.reads) {
    if (r.declared_read)
      accesses.push_back({std::uint32_t(args.size()), cudag::access_mode::read, cudag::to_the_end});
    args.push_back(value_of(r));
  }
  switch (n.kind) {
    case node_kind::kernel: {
      cudag::kernel_node k;
      k.function = reinterpret_cast<const void*>(&kernel_stub);
      k.function_name = "kernel_stub";
      k.args = std::move(args);
      k.accesses = std::move(accesses);
      out.params = std::move(k);
      break;
    }
    case node_kind::host: {
      cudag::host_node h;
      h.function =
          std::make_shared<const cudag::host_function>([](std::span<const void* const>) {});
      h.args = std::move(args);
      h.accesses = std::move(accesses);
      out.params = std::move(h);
      break;
    }
    case node_kind::memset: {
      cudag::memset_node m;
      m.dst = cudag::make_literal<void*>(nullptr);
      for (cudag::value& v : args) {
        v.type = cudag::type_of<void*>();
        m.dst = v;
      }
      m.fill = cudag::make_literal(0u);
      m.width = 16;
      out.params = std::move(m);
      break;
    }
    case node_kind::mem_alloc:
      out.params = cudag::mem_alloc_node{n.buffer, 256, -1};
      break;
    case node_kind::mem_free:
      out.params = cudag::mem_free_node{n.buffer};
      break;
    case node_kind::child:
      out.params =
          cudag::child_node{std::make_shared<const cudag::graph_spec>(body_spec(n.bodies.front()))};
      break;
    case node_kind::conditional: {
      cudag::conditional_node c;
      c.kind = n.cond_kind;
      c.condition = n.condition;
      for (const auto& body : n.bodies) c.bodies.push_back(body_spec(body));
      out.params = std::move(c);
      break;
    }
    default:
      out.params = cudag::empty_node{};
      break;
  }
  return out;
}

cudag::graph_spec body_spec(const std::vector<model_node>& body) {
  cudag::graph_spec g;
  for (std::size_t k = 0; k < body.size(); ++k) {
    g.nodes.push_back(spec_node(body[k]));
    if (k > 0) g.nodes.back().deps.push_back(body[k - 1].name);
  }
  return g;
}

/// The graph as a spec, as the DSL would write it: dependencies on the
/// dependent in edge declaration order, each once; parameters declared with
/// the type of their first use (declaration order, bodies included).
/// Conditions are declared at the top level, where every conditional node
/// of the graph sees them.
cudag::graph_spec spec_of(const model_case& c) {
  cudag::graph_spec g;
  for (const model_node& n : c.nodes) g.nodes.push_back(spec_node(n));
  for (const model_edge& e : c.edges) {
    auto& deps = g.nodes[std::size_t(e.to)].deps;
    const std::string from = e.from < 0 ? e.ghost : c.nodes[std::size_t(e.from)].name;
    if (std::find(deps.begin(), deps.end(), from) == deps.end()) deps.push_back(from);
  }
  std::vector<dsl::shape_reference> refs;
  for (const model_node& n : c.nodes) flatten_refs(n, refs);
  std::set<std::string> seen;
  for (const dsl::shape_reference& r : refs) {
    if (r.kind == ref_kind::buffer || !seen.insert(std::to_string(int(r.kind)) + r.name).second)
      continue;
    if (r.kind == ref_kind::param) {
      for (const param_type& t : param_types)
        if (t.dsl == r.type) g.params.push_back({r.name, t.tag()});
    } else {
      g.conditions.push_back({r.name, 0, true});
    }
  }
  return g;
}

// -------------------------------------------------------------- verdicts --
struct finding {
  category what = category::none;
  std::set<std::string> nodes;  ///< named nodes
  std::string subject;          ///< the parameter, buffer or condition, where named
  std::string text;
};

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t next; (next = text.find(separator, at)) != std::string::npos;
       at = next + separator.size())
    out.push_back(text.substr(at, next - at));
  out.push_back(text.substr(at));
  return out;
}

/// "subject (nodes a and b)"
void subject_and_pair(const std::string& m, finding& f) {
  const std::size_t open = m.find(" (nodes ");
  f.subject = m.substr(0, open);
  for (const std::string& n : split(m.substr(open + 8, m.size() - open - 9), " and "))
    f.nodes.insert(n);
}

finding from_dsl(const dsl::shape_verdict& v) {
  finding f;
  if (v.ok()) return f;
  f.text = std::string(v.error) + "<\"" + v.message + "\">";
  const std::string& m = v.message;
  using P = dsl::shape_problem;
  if (v.problem == P::empty_node_name) {
    f.what = category::empty_name;
    f.nodes.insert(m.substr(0, m.find(' ')));
  } else if (v.problem == P::duplicate_node) {
    f.what = category::duplicate_name;
    f.nodes.insert(m);
  } else if (v.problem == P::unknown_node_in_edge) {
    f.what = category::unknown_node;
    for (const std::string& n : split(m, " -> ")) f.nodes.insert(n);
  } else if (v.problem == P::cycle) {
    f.what = category::cycle;
    for (const std::string& n : split(m, " -> ")) f.nodes.insert(n);
  } else if (v.problem == P::parameter_type_conflict) {
    f.what = category::parameter_types;
    f.subject = m;
  } else if (v.problem == P::buffer_allocated_twice || v.problem == P::buffer_freed_twice ||
             v.problem == P::condition_tested_twice) {
    f.what = v.problem == P::buffer_allocated_twice ? category::allocated_twice
             : v.problem == P::buffer_freed_twice   ? category::freed_twice
                                                    : category::tested_twice;
    subject_and_pair(m, f);
  } else if (v.problem == P::buffer_outside_lifetime) {
    // "node U uses buffer B but is not ordered after its alloc node A"
    f.what = category::outside_lifetime;
    const std::vector<std::string> w = split(m, " ");
    f.nodes = {w[1], w.back()};
    f.subject = w[4];
  } else if (v.error == "buffer_freed_but_never_allocated") {
    // "node F frees buffer B"
    f.what = category::freed_never_allocated;
    const std::vector<std::string> w = split(m, " ");
    f.nodes = {w[1]};
    f.subject = w[4];
  } else if (v.error == "buffer_used_but_never_allocated") {
    // "node U uses buffer B"
    f.what = category::used_never_allocated;
    const std::vector<std::string> w = split(m, " ");
    f.nodes = {w[1]};
    f.subject = w[4];
  } else if (v.problem == P::race) {
    // "'A' writes 'x' while 'B' reads it, ..." (or "buffer 'x'", "bytes [0, n) of 'x'")
    f.what = category::race;
    const std::vector<std::string> quoted = split(m, "'");
    f.nodes = {quoted[1], quoted[5]};
    f.subject = quoted[3];
  } else if (v.error == "condition_tested_by_no_conditional_node") {
    // "C (read by node K)"
    f.what = category::untested_condition;
    f.subject = m.substr(0, m.find(' '));
    f.nodes.insert(m.substr(m.rfind(' ') + 1, m.size() - m.rfind(' ') - 2));
  } else {
    f.what = category::other;
  }
  return f;
}

category category_of_check(const std::string& m) {
  const auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
  if (has("has an empty name")) return category::empty_name;
  if (has("is used twice in")) return category::duplicate_name;
  if (has("has a cycle")) return category::cycle;
  if (has("' depends on '")) return category::unknown_node;
  if (has("passes parameter") || has("is declared as")) return category::parameter_types;
  if (has("is allocated twice")) return category::allocated_twice;
  if (has("is freed twice")) return category::freed_twice;
  if (has("frees buffer") && has("which no mem_alloc node")) return category::freed_never_allocated;
  if (has("uses buffer") && has("which no mem_alloc node")) return category::used_never_allocated;
  if (has("but is not ordered")) return category::outside_lifetime;
  if (has("no conditional node uses it")) return category::untested_condition;
  if (has("is tested by two conditional nodes")) return category::tested_twice;
  if (m.starts_with("race: ")) return category::race;
  return category::other;
}

/// The top-level node a path names: "loop" for "loop/step" and "pick[1]/k0".
std::string top_component(const std::string& path) {
  return path.substr(0, path.find_first_of("/["));
}

finding from_check(const cudag::graph_spec& spec) {
  finding f;
  try {
    cudag::check(spec);
  } catch (const cudag::check_error& e) {
    f.text = e.what();
    f.what = category_of_check(f.text);
    for (const std::string& n : e.nodes()) f.nodes.insert(n);
  } catch (const std::exception& e) {
    f.text = std::string("not a check_error: ") + e.what();
    f.what = category::other;
  }
  return f;
}

std::string join(const std::set<std::string>& names) {
  std::string out = "{";
  for (const std::string& n : names) out += (out.size() > 1 ? ", " : "") + ("'" + n + "'");
  return out + "}";
}

/// Why the two findings disagree on naming ("" when they agree), for a
/// fault of a kind the case holds once. The mapping between the sides:
///  - cycles: the same set of nodes (each side prints the path from its own
///    start; both walk the same way, so it is the same cycle);
///  - a buffer used or freed inside a conditional body or child graph: the
///    DSL names the top-level node holding the user or free (its references
///    and frees include its graphs'), check() the nested node by path
///    ("loop/k0", "through its enclosing node 'loop'"): compared by the
///    path's top-level node;
///  - a parameter read with two types: the DSL names the parameter, check()
///    the node reading it with the other type (its message names the
///    parameter): compared by the parameter;
///  - a fault inside a conditional body: the DSL names the nodes by path
///    from the body (the graph whose declaration fails), check() from the
///    top level ("x0[1]/inner0"): compared by the end of the path;
///  - a condition no conditional node tests: the DSL names it and its first
///    reader, check() only the condition (a declaration no node uses; its
///    nodes() is empty): compared by the condition.
std::string naming_mismatch(const finding& d, const finding& c) {
  const auto mentions = [&c](const std::string& what, const std::string& name) {
    return c.text.find(what + " '" + name + "'") != std::string::npos;
  };
  switch (d.what) {
    case category::parameter_types:
      return mentions("parameter", d.subject) ? "" : "check() does not name parameter " + d.subject;
    case category::untested_condition:
      return mentions("condition", d.subject) ? "" : "check() does not name condition " + d.subject;
    case category::allocated_twice:
    case category::freed_twice:
    case category::outside_lifetime:
    case category::freed_never_allocated:
      if (!mentions("buffer", d.subject)) return "check() does not name buffer " + d.subject;
      break;
    case category::tested_twice:
      if (!mentions("condition", d.subject)) return "check() does not name condition " + d.subject;
      break;
    case category::race:
      if (c.text.find("'" + d.subject + "'") == std::string::npos)
        return "check() does not name memory " + d.subject;
      break;
    default:
      break;
  }
  bool same = d.nodes.size() == c.nodes.size();
  for (const std::string& n : d.nodes) {
    bool found = false;
    for (const std::string& path : c.nodes)
      found = found || path == n || (d.what != category::cycle && top_component(path) == n) ||
              (path.size() > n.size() && path.ends_with("/" + n));
    same = same && found;
  }
  return same ? "" : "the DSL names " + join(d.nodes) + ", check() " + join(c.nodes);
}

// ---------------------------------------------------------------- report --
void print_refs(std::ostream& os, const model_node& n) {
  bool first = true;
  for (const read& r : n.reads) {
    os << (first ? "" : ", ");
    first = false;
    if (r.kind == ref_kind::param)
      os << "param<\"" << r.name << "\", " << param_types[r.type].name << ">"
         << (r.declared_read ? " (declared read)" : "");
    if (r.kind == ref_kind::buffer) os << "buffer<\"" << r.name << "\">";
    if (r.kind == ref_kind::condition) os << "condition<\"" << r.name << "\">";
  }
}

void print_node(std::ostream& os, const model_node& n, const std::string& indent) {
  os << indent;
  switch (n.kind) {
    case node_kind::mem_alloc:
      os << "mem_alloc<\"" << n.name << "\">(" << n.buffer << ")";
      return;
    case node_kind::mem_free:
      os << "mem_free<\"" << n.name << "\">(" << n.buffer << ")";
      return;
    case node_kind::child:
    case node_kind::conditional:
      if (n.kind == node_kind::child)
        os << "child<\"" << n.name << "\">(";
      else
        os << cudag::kind_name(n.cond_kind) << "<\"" << n.name << "\">(condition<\"" << n.condition
           << "\">,";
      for (std::size_t b = 0; b < n.bodies.size(); ++b) {
        const auto& body = n.bodies[b];
        os << (b > 0 ? "," : "") << "\n" << indent << "    graph(\n";
        for (std::size_t k = 0; k < body.size(); ++k) {
          print_node(os, body[k], indent + "      ");
          os << (k + 1 < body.size() ? ",\n" : "");
        }
        if (body.size() > 1) os << ",\n" << indent << "      chain<...in order...>";
        os << ")";
      }
      os << ")";
      return;
    default:
      os << cudag::kind_name(n.kind) << "<\"" << n.name << "\">(";
      print_refs(os, n);
      os << ")";
  }
}

std::string print_case(const model_case& c) {
  std::ostringstream os;
  os << "graph(\n";
  for (const model_node& n : c.nodes) {
    print_node(os, n, "  ");
    os << ",\n";
  }
  for (const model_edge& e : c.edges)
    os << "  edge<\"" << (e.from < 0 ? e.ghost : c.nodes[std::size_t(e.from)].name) << "\", \""
       << c.nodes[std::size_t(e.to)].name << "\">,\n";
  os << ")\nparameter types:";
  for (std::size_t p = 0; p < c.param_type.size(); ++p)
    os << " p" << p << ": " << param_types[c.param_type[p]].name;
  os << "\ninjected faults:";
  if (c.faults.empty()) os << " none";
  for (fault f : c.faults) os << " " << fault_name(f);
  return os.str();
}

std::uint64_t base_seed() {
  const char* text = std::getenv("CUDAG_RULES_SEED");
  if (text && std::string(text) == "random")
    return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  return text ? std::strtoull(text, nullptr, 0) : 20261124u;
}

int case_count() {
  const char* text = std::getenv("CUDAG_RULES_CASES");
  return text ? std::atoi(text) : 30000;
}

int only_case() {
  const char* text = std::getenv("CUDAG_RULES_CASE");
  return text ? std::atoi(text) : -1;
}

/// splitmix64: nearby base seeds give unrelated cases.
std::uint64_t case_seed(std::uint64_t base, int index) {
  std::uint64_t z = base + 0x9e3779b97f4a7c15ull * std::uint64_t(index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// ----------------------------------------------------------------- tests --
TEST(RulesDifferential, DslRulesAndCheckAgreeOnRandomShapes) {
  const std::uint64_t seed = base_seed();
  const int cases = case_count(), only = only_case();
  std::cout << "CUDAG_RULES_SEED=" << seed << " CUDAG_RULES_CASES=" << cases << "\n";
  std::map<category, int> refused;  // by the category both sides named
  int run = 0, valid = 0, several = 0, compared_names = 0, failures = 0;
  for (int i = 0; i < cases && failures < 5; ++i) {
    if (only >= 0 && i != only) continue;
    ++run;
    const model_case c = case_maker(case_seed(seed, i)).make();
    const cudag::graph_spec spec = spec_of(c);
    const finding d = from_dsl(dsl_verdict(c));
    const finding k = from_check(spec);

    std::map<category, int> injected;
    for (fault f : c.faults) ++injected[category_of(f)];
    // Races are not injected: a base graph's nodes reading a pointer
    // parameter or buffer, or a memset writing a buffer, may meet without a
    // path. Each is a fault of its own (check()'s list of them, where the
    // shape lets it be computed; else the shape's faults come first).
    std::size_t faults = c.faults.size();
    try {
      cudag::analyze_options all_races;
      all_races.redundant_edges = false;
      const std::size_t races = cudag::analyze(spec, all_races).races.size();
      if (races != 0) injected[category::race] = int(races);
      faults += races;
    } catch (const std::exception&) {
    }
    std::string problem;
    if ((d.what == category::none) != (k.what == category::none)) {
      problem = d.what == category::none ? "the DSL accepts the graph, check() refuses it"
                                         : "check() accepts the graph, the DSL refuses it";
    } else if (d.what == category::none) {
      ++valid;
      if (!c.faults.empty()) problem = "both accept a graph with an injected fault";
      // One creation order for both front ends (docs/engine.md).
      const dsl::shape_description description = describe(c);
      const dsl::described_items items(description);
      const dsl::runtime_shape shape = dsl::analyze_shape_at_run_time(items.items);
      const std::vector<std::size_t> order = cudag::topological_order(spec);
      if (problem.empty() &&
          !std::equal(order.begin(), order.end(), shape.order.begin(), shape.order.end()))
        problem = "the DSL's node order differs from topological_order()";
    } else {
      const bool d_injected = injected.count(d.what) != 0, k_injected = injected.count(k.what) != 0;
      if (d.what == category::other || k.what == category::other || !d_injected || !k_injected) {
        problem = std::string(!d_injected ? "the DSL" : "check()") + " refuses for " +
                  category_name(!d_injected ? d.what : k.what) + ", a fault not injected";
      } else if (faults == 1 || (d.what == k.what && injected[d.what] == 1)) {
        if (d.what != k.what) {
          problem = "they refuse for different reasons";
        } else {
          problem = naming_mismatch(d, k);
          ++compared_names;
        }
      }
      if (faults > 1) ++several;
      if (problem.empty() && d.what == k.what) ++refused[d.what];
    }
    if (problem.empty()) continue;
    ++failures;
    ADD_FAILURE() << problem << "\ncase " << i << ": rerun with CUDAG_RULES_SEED=" << seed
                  << " CUDAG_RULES_CASE=" << i << "\n"
                  << print_case(c) << "\nDSL:     " << category_name(d.what) << ": "
                  << (d.text.empty() ? "(accepted)" : d.text)
                  << "\ncheck(): " << category_name(k.what) << ": "
                  << (k.text.empty() ? "(accepted)" : k.text) << " nodes " << join(k.nodes);
  }
  std::cout << run << " shapes: " << valid << " valid, " << (run - valid) << " refused by both ("
            << several << " with several faults); nodes compared in " << compared_names << ";";
  for (const auto& [what, n] : refused) std::cout << " " << category_name(what) << " " << n;
  std::cout << "\n";
  // Every kind of fault met often enough to mean something (default run).
  if (cases >= 10000 && only < 0 && failures == 0) {
    EXPECT_GT(valid, cases / 5);
    for (int f = 0; f < fault_count; ++f) {
      const category what = category_of(fault(f));
      if (what == category::used_never_allocated && !generate_unallocated_use) continue;
      EXPECT_GT(refused[what], 100) << category_name(what);
    }
  }
}

// The run-time verdict is the compile-time one, word for word: the cases of
// tests/compile_fail, described as data (their expected messages copied).
TEST(RulesDifferential, CheckShapeGivesTheCompileErrors) {
  using dsl::shape_node;
  const auto kernel = [](std::string name, std::vector<dsl::shape_reference> refs = {}) {
    shape_node n;
    n.name = std::move(name);
    n.refs = std::move(refs);
    return n;
  };
  const dsl::shape_reference x{ref_kind::param, "x", dsl::type_id_of<float*>};
  const dsl::shape_reference tmp{ref_kind::buffer, "tmp", nullptr};

  dsl::shape_description cycle{{kernel("n1", {x}), kernel("n8", {x}), kernel("n16", {x})},
                               {{"n1", "n8"}, {"n8", "n16"}, {"n16", "n8"}}};
  dsl::shape_verdict v = dsl::check_shape(cycle);
  EXPECT_EQ(v.error, "cycle_through");
  EXPECT_TRUE(v.message == "n16 -> n8 -> n16" || v.message == "n8 -> n16 -> n8") << v.message;

  dsl::shape_description self{{kernel("loop_back")}, {{"loop_back", "loop_back"}}};
  EXPECT_EQ(dsl::check_shape(self).message, "loop_back -> loop_back");

  dsl::shape_description unknown{{kernel("n10"), kernel("n11")}, {{"n10", "n_typo"}}};
  v = dsl::check_shape(unknown);
  EXPECT_EQ(v.error, "unknown_node_in_edge");
  EXPECT_EQ(v.message, "n10 -> n_typo");

  // Typed edges (tests/compile_fail/typed_edge_*, edge_of_two_kinds).
  shape_node combine = kernel("combine", {x});
  shape_node marked = combine;
  marked.synchronizes_grid_dependencies = true;
  const cudag::edge_kind programmatic = cudag::edge_kind::programmatic;
  dsl::shape_description unsynchronized{{kernel("warm", {x}), combine},
                                        {{"warm", "combine", programmatic}}};
  v = dsl::check_shape(unsynchronized);
  EXPECT_EQ(v.error, "kernel_does_not_synchronize_grid_dependencies");
  EXPECT_EQ(v.message, "combine (programmatic edge warm -> combine)");
  shape_node clear{"clear_y", node_kind::memset, {x}, "", "", "", {}};
  dsl::shape_description from_memset{{clear, marked},
                                     {{"clear_y", "combine", cudag::edge_kind::launch_completion}}};
  v = dsl::check_shape(from_memset);
  EXPECT_EQ(v.error, "edge_kind_needs_kernel_nodes");
  EXPECT_EQ(v.message, "launch_completion edge clear_y -> combine (clear_y is a memset node)");
  shape_node join{"join", node_kind::empty, {}, "", "", "", {}};
  dsl::shape_description into_empty{{kernel("warm", {x}), join}, {{"warm", "join", programmatic}}};
  v = dsl::check_shape(into_empty);
  EXPECT_EQ(v.error, "edge_kind_needs_kernel_nodes");
  EXPECT_EQ(v.message, "programmatic edge warm -> join (join is an empty node)");
  dsl::shape_description two_kinds{
      {kernel("warm", {x}), marked, kernel("finish", {x})},
      {{"warm", "combine", programmatic}, {"warm", "combine"}, {"combine", "finish"}}};
  v = dsl::check_shape(two_kinds);
  EXPECT_EQ(v.error, "edge_declared_with_two_kinds");
  EXPECT_EQ(v.message, "warm -> combine (programmatic and full)");
  // Corrected: the same kind twice, a full edge from the memset.
  dsl::shape_description fitting{{kernel("warm", {x}), marked, clear},
                                 {{"warm", "combine", programmatic},
                                  {"clear_y", "combine"},
                                  {"warm", "combine", programmatic}}};
  EXPECT_TRUE(dsl::check_shape(fitting).ok()) << dsl::check_shape(fitting).message;

  // race_missing_edge: x written by two kernels the fan-out leaves
  // unordered; race_concurrent_beside_read: a concurrent update (inside a
  // child graph) beside a reader.
  dsl::shape_reference written = x;
  written.touches_memory = true;
  dsl::shape_description racy{{kernel("load", {written}), kernel("scale", {written}),
                               kernel("shift", {written})},
                              {{"load", "scale"}, {"load", "shift"}}};
  v = dsl::check_shape(racy);
  EXPECT_EQ(v.error, "race");
  EXPECT_EQ(v.message, "'scale' writes 'x' while 'shift' writes it, and no path orders them");
  dsl::shape_reference counted{ref_kind::param, "y", dsl::type_id_of<float*>, true,
                               cudag::access_mode::concurrent};
  dsl::shape_reference read_y{ref_kind::param, "y", dsl::type_id_of<float*>, true,
                              cudag::access_mode::read};
  shape_node tally{"tally", node_kind::child, {counted}, "", "", "", {}};
  v = dsl::check_shape(dsl::shape_description{{tally, kernel("report", {read_y})}, {}});
  EXPECT_EQ(v.error, "race");
  EXPECT_EQ(v.message,
            "'tally' updates concurrently 'y' while 'report' reads it, and no path orders them");

  dsl::shape_description empty_name{{kernel("start"), kernel("")}, {}};
  v = dsl::check_shape(empty_name);
  EXPECT_EQ(v.error, "node_with_empty_name");
  EXPECT_EQ(v.message, "#1 (kernel node)");

  shape_node alloc{"alloc_tmp", node_kind::mem_alloc, {}, "tmp", "", "", {}};
  shape_node free{"free_tmp", node_kind::mem_free, {}, "", "tmp", "", {}};
  dsl::shape_description before{{alloc, kernel("use_tmp", {tmp}), free},
                                {{"alloc_tmp", "free_tmp"}}};
  v = dsl::check_shape(before);
  EXPECT_EQ(v.error, "buffer_used_outside_its_lifetime");
  EXPECT_EQ(v.message,
            "node use_tmp uses buffer tmp but is not ordered after its alloc node alloc_tmp");

  dsl::shape_description after{
      {alloc, kernel("use_tmp", {tmp}), free, kernel("late", {tmp})},
      {{"alloc_tmp", "use_tmp"}, {"use_tmp", "free_tmp"}, {"free_tmp", "late"}}};
  EXPECT_EQ(dsl::check_shape(after).message,
            "node late uses buffer tmp but is not ordered before its free node free_tmp");

  shape_node free_b = free;
  free_b.name = "free_b";
  free.name = "free_a";
  dsl::shape_description twice{{alloc, kernel("use", {tmp}), free, free_b},
                               {{"alloc_tmp", "use"}, {"use", "free_a"}, {"use", "free_b"}}};
  v = dsl::check_shape(twice);
  EXPECT_EQ(v.error, "buffer_freed_twice");
  EXPECT_EQ(v.message, "tmp (nodes free_a and free_b)");

  shape_node release{"release", node_kind::mem_free, {}, "", "tmp", "", {}};
  dsl::shape_description orphan{{kernel("use", {x}), release}, {{"use", "release"}}};
  v = dsl::check_shape(orphan);
  EXPECT_EQ(v.error, "buffer_freed_but_never_allocated");
  EXPECT_EQ(v.message, "node release frees buffer tmp");
  EXPECT_TRUE(dsl::check_shape(orphan, false).ok());  // a nested graph: its parent may allocate

  const dsl::shape_reference more{ref_kind::condition, "more", nullptr};
  dsl::shape_description untested{{kernel("decide", {more})}, {}};
  v = dsl::check_shape(untested);
  EXPECT_EQ(v.error, "condition_tested_by_no_conditional_node");
  EXPECT_EQ(v.message, "more (read by node decide)");

  shape_node loop{"loop", node_kind::conditional, {x}, "", "", "more", {}};
  shape_node inner{"inner", node_kind::child, {more, x}, "", "", "", {{"more", "inner/again"}}};
  dsl::shape_description nested{{loop, inner}, {{"loop", "inner"}}};
  v = dsl::check_shape(nested);
  EXPECT_EQ(v.error, "condition_tested_by_two_conditional_nodes");
  EXPECT_TRUE(v.message == "more (nodes loop and inner/again)" ||
              v.message == "more (nodes inner/again and loop)")
      << v.message;

  const dsl::shape_reference data_f{ref_kind::param, "data", dsl::type_id_of<float*>};
  const dsl::shape_reference data_i{ref_kind::param, "data", dsl::type_id_of<int*>};
  dsl::shape_description two_types{{kernel("clear_f", {data_f}), kernel("stage", {data_i})}, {}};
  v = dsl::check_shape(two_types);
  EXPECT_EQ(v.error, "parameter_declared_with_two_types");
  EXPECT_EQ(v.message, "data");

  dsl::shape_description duplicate{{kernel("scale_twice"), kernel("scale_twice")}, {}};
  v = dsl::check_shape(duplicate);
  EXPECT_EQ(v.error, "duplicate_node_name");
  EXPECT_EQ(v.message, "scale_twice");

  dsl::shape_description fine{{alloc, kernel("use_tmp", {tmp, x}), free},
                              {{"alloc_tmp", "use_tmp"}, {"use_tmp", "free_a"}}};
  EXPECT_TRUE(dsl::check_shape(fine).ok()) << dsl::check_shape(fine).message;
}

// ------------------------------------------- one code, two evaluations --
// Real DSL declarations: G::shape, computed by the compiler, against the
// same rules run at run time over G's items. graph_t<...> (not graph(),
// which would stop the build) so that refused shapes can be looked at too.
inline void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
inline void set_flag(cudaGraphConditionalHandle h) { (void)h; }

template <class... Items>
using shape_of = cudag::dsl::graph_t<std::remove_cvref_t<Items>...>;

template <class A, class B>
bool same_range(const A& a, const B& b) {
  // Empty ranges apart: std::equal would memcmp an empty array's null data.
  return a.size() == b.size() && (a.size() == 0 || std::equal(a.begin(), a.end(), b.begin()));
}
template <class A, class B>
bool same_refs(const A& a, const B& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const dsl::ref_info& x, const dsl::ref_info& y) {
                      return x.name == y.name && x.type == y.type && x.hash == y.hash;
                    });
}

template <class G>
void expect_same_shape(const char* what) {
  SCOPED_TRACE(what);
  constexpr const auto& s = G::shape;
  const dsl::runtime_shape r = dsl::analyze_shape_at_run_time(G::items_info);
  EXPECT_EQ(r.problem, s.problem);
  EXPECT_EQ(r.message.view(), s.message.view());
  EXPECT_EQ(r.orphan_free.view(), s.orphan_free.view());
  EXPECT_EQ(r.orphan_free_buffer, s.orphan_free_buffer);
  EXPECT_EQ(r.untested_condition.view(), s.untested_condition.view());
  EXPECT_EQ(r.unallocated_use.view(), s.unallocated_use.view());
  EXPECT_EQ(r.race_first, s.race_first);
  EXPECT_EQ(r.race_second, s.race_second);
  EXPECT_EQ(r.race_memory, s.race_memory);
  EXPECT_EQ(r.forbidden_path.view(), s.forbidden_path.view());
  EXPECT_TRUE(same_range(r.names, s.names));
  EXPECT_TRUE(same_range(r.position, s.position));
  EXPECT_TRUE(same_range(r.kinds, s.kinds));
  EXPECT_TRUE(same_range(r.owned_condition, s.owned_condition));
  EXPECT_TRUE(same_range(r.dep_begin, s.dep_begin));
  EXPECT_TRUE(same_range(r.deps, s.deps));
  EXPECT_TRUE(same_range(r.dep_kinds, s.dep_kinds));
  EXPECT_TRUE(same_range(r.order, s.order));
  EXPECT_EQ(r.max_deps, s.max_deps);
  EXPECT_TRUE(same_refs(r.all_refs, s.all_refs));
  EXPECT_TRUE(same_refs(r.params, s.params));
  EXPECT_TRUE(same_range(r.param_offsets, s.param_offsets));
  EXPECT_EQ(r.param_bytes, s.param_bytes);
  EXPECT_TRUE(same_refs(r.buffers, s.buffers));
  EXPECT_TRUE(same_refs(r.conditions, s.conditions));
  ASSERT_EQ(r.node_lookup.size(), s.node_lookup.size());
  for (std::size_t k = 0; k < s.node_lookup.size(); ++k)
    EXPECT_TRUE(r.node_lookup[k].hash == s.node_lookup[k].hash &&
                r.node_lookup[k].index == s.node_lookup[k].index);
}

TEST(RulesDifferential, RunTimeRulesComputeTheCompilersShape) {
  using namespace cudag::dsl;
  constexpr auto x = param<"x", float*>;
  constexpr auto n = param<"n", int>;
  constexpr auto y = param<"y", float*>;
  constexpr auto tmp = buffer<"tmp", float>;
  constexpr auto more = condition<"more", 1>;
  constexpr auto body = graph(kernel<"step", scale>(1, 32, x, 2.0f, n),
                              kernel<"again", set_flag>(1, 1, more), edge<"step", "again">);
  constexpr auto releases = graph(mem_free<"release">(tmp));  // frees its parent's buffer

  // Valid: nodes declared against their order, an edge declared twice, a
  // buffer freed inside a child graph, a loop whose body sets its condition.
  using valid = shape_of<decltype(kernel<"late", scale>(1, 32, x, 1.0f, n)),
                         decltype(mem_alloc<"alloc_tmp">(tmp, 256)),
                         decltype(while_loop<"loop">(more, body)),
                         decltype(kernel<"use_tmp", scale>(1, 32, tmp, 2.0f, n)),
                         decltype(child<"drop">(releases)), decltype(edge<"alloc_tmp", "use_tmp">),
                         decltype(chain<"use_tmp", "drop", "loop", "late">),
                         decltype(edge<"alloc_tmp", "use_tmp">)>;
  static_assert(valid::shape.problem == dsl::shape_problem::none);
  static_assert(valid::shape.orphan_free.size == 0 && valid::shape.untested_condition.size == 0);
  expect_same_shape<valid>("valid");

  using cycle = shape_of<decltype(kernel<"n1", scale>(1, 32, x, 2.0f, n)),
                         decltype(kernel<"n8", scale>(1, 32, x, 2.0f, n)),
                         decltype(kernel<"n16", scale>(1, 32, x, 2.0f, n)),
                         decltype(chain<"n1", "n8", "n16">), decltype(edge<"n16", "n8">)>;
  static_assert(cycle::shape.problem == dsl::shape_problem::cycle);
  expect_same_shape<cycle>("cycle");

  using late_use = shape_of<decltype(mem_alloc<"alloc_tmp">(tmp, 256)),
                            decltype(kernel<"use_tmp", scale>(1, 32, tmp, 2.0f, n)),
                            decltype(mem_free<"free_tmp">(tmp)),
                            decltype(kernel<"late", scale>(1, 32, tmp, 1.0f, n)),
                            decltype(chain<"alloc_tmp", "use_tmp", "free_tmp", "late">)>;
  static_assert(late_use::shape.problem == dsl::shape_problem::buffer_outside_lifetime);
  expect_same_shape<late_use>("buffer used after its free");

  using freed_twice =
      shape_of<decltype(mem_alloc<"alloc_tmp">(tmp, 256)), decltype(mem_free<"free_a">(tmp)),
               decltype(child<"free_b">(releases)), decltype(edge<"alloc_tmp", "free_a">)>;
  static_assert(freed_twice::shape.problem == dsl::shape_problem::buffer_freed_twice);
  expect_same_shape<freed_twice>("freed twice, once inside a child");

  constexpr auto nested = graph(while_loop<"again">(more, body));
  using tested_twice = shape_of<decltype(while_loop<"loop">(more, body)),
                                decltype(child<"inner">(nested)), decltype(edge<"loop", "inner">)>;
  static_assert(tested_twice::shape.problem == dsl::shape_problem::condition_tested_twice);
  expect_same_shape<tested_twice>("condition tested twice");

  // Judged at the top level only: a free of a buffer no node allocates, a
  // condition no conditional node tests, a buffer no node allocates.
  using top_level =
      shape_of<decltype(kernel<"decide", set_flag>(1, 1, more)),
               decltype(kernel<"read", scale>(1, 32, buffer<"nowhere", float>, 1.0f, n)),
               decltype(mem_free<"release">(tmp)), decltype(edge<"decide", "release">)>;
  static_assert(top_level::shape.problem == dsl::shape_problem::none);
  static_assert(top_level::shape.orphan_free.size != 0 &&
                top_level::shape.untested_condition.size != 0 &&
                top_level::shape.unallocated_use.size != 0);
  expect_same_shape<top_level>("top-level problems");

#ifndef CUDAG_TEST_UNDEFINED_SANITIZER  // see tests/dsl/meson.build
  using two_types = shape_of<decltype(memset<"clear_f">(param<"data", float*>, 0, 16)),
                             decltype(memset<"clear_i">(param<"data", int*>, 0, 16))>;
  static_assert(two_types::shape.problem == dsl::shape_problem::parameter_type_conflict);
  expect_same_shape<two_types>("parameter of two types");
#endif

  using unknown =
      shape_of<decltype(kernel<"n10", scale>(1, 32, x, 2.0f, n)), decltype(edge<"n10", "n_typo">)>;
  static_assert(unknown::shape.problem == dsl::shape_problem::unknown_node_in_edge);
  expect_same_shape<unknown>("unknown node in an edge");

  using twice = shape_of<decltype(kernel<"same", scale>(1, 32, x, 2.0f, n)),
                         decltype(kernel<"same", scale>(1, 32, x, 3.0f, n))>;
  static_assert(twice::shape.problem == dsl::shape_problem::duplicate_node);
  expect_same_shape<twice>("duplicate name");

  // Typed edges: kinds kept beside the dependencies only where one is typed.
  using consume = decltype(synchronizes_grid_dependencies(kernel<"consume", scale>(1, 32, x, 2.0f, n)));
  using typed = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)), consume,
                         decltype(memset<"clear">(y, 0, 32)),
                         decltype(edge<"produce", "consume", edge_kind::launch_completion>),
                         decltype(edge<"clear", "consume">),
                         decltype(edge<"produce", "consume", edge_kind::launch_completion>)>;
  static_assert(typed::shape.problem == dsl::shape_problem::none);
  static_assert(typed::shape.dep_kinds.size() == 3 && valid::shape.dep_kinds.size() == 0);
  expect_same_shape<typed>("typed edges");
  using two_kinds = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)), consume,
                             decltype(edge<"produce", "consume", edge_kind::programmatic>),
                             decltype(edge<"produce", "consume">)>;
  static_assert(two_kinds::shape.problem == dsl::shape_problem::edge_of_two_kinds);
  expect_same_shape<two_kinds>("an edge of two kinds");
  using unsynchronized = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)),
                                  decltype(kernel<"consume", scale>(1, 32, x, 2.0f, n)),
                                  decltype(edge<"produce", "consume", edge_kind::programmatic>)>;
  static_assert(unsynchronized::shape.problem ==
                dsl::shape_problem::typed_edge_into_unsynchronized_kernel);
  expect_same_shape<unsynchronized>("a typed edge into a kernel that does not synchronize");
  using from_memset = shape_of<decltype(memset<"clear">(x, 0, 32)), consume,
                               decltype(edge<"clear", "consume", edge_kind::programmatic>)>;
  static_assert(from_memset::shape.problem == dsl::shape_problem::typed_edge_not_between_kernels);
  expect_same_shape<from_memset>("a typed edge from a memset node");

  // Races: a memset and a kernel writing x, unordered; a reader declared so
  // beside a writer, then ordered after it.
  using racy = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)),
                        decltype(memset<"clear">(x, 0, 32))>;
  static_assert(racy::shape.problem == dsl::shape_problem::race);
  expect_same_shape<racy>("a race");
  using reader = decltype(with_access<0, access_mode::read>(kernel<"peek", scale>(1, 32, x, 2.0f, n)));
  using read_beside_write = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)), reader>;
  static_assert(read_beside_write::shape.problem == dsl::shape_problem::race);
  expect_same_shape<read_beside_write>("a read beside a write");
  using read_after_write = shape_of<decltype(kernel<"produce", scale>(1, 32, x, 2.0f, n)), reader,
                                    decltype(edge<"produce", "peek">)>;
  static_assert(read_after_write::shape.problem == dsl::shape_problem::none);
  expect_same_shape<read_after_write>("a read after a write");
}

}  // namespace
