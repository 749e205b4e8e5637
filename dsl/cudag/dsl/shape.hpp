#pragma once
// The graph algorithms, run by the compiler over plain constexpr arrays: name
// lookup (64-bit hash, sort, binary search), edges resolved to indices,
// Kahn's topological sort, a cycle search that prints the path, buffer
// lifetimes, and the tables of parameters, buffers and conditions. The
// result is one constexpr value per graph; its first problem, if any, is
// turned into a compile error by graph.hpp.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl {

enum class shape_problem {
  none,
  duplicate_node,
  unknown_node_in_edge,
  parameter_type_conflict,
  cycle,
  buffer_allocated_twice,
  buffer_outside_lifetime,
  condition_tested_twice,
  empty_node_name,
  buffer_freed_twice,
};

struct shape_sizes {
  std::size_t nodes = 0, edges = 0, refs = 0, params = 0, buffers = 0, conditions = 0;
  std::size_t condition_tests = 0;
};

struct hashed_index {
  std::uint64_t hash = 0;
  std::uint32_t index = 0;
  friend constexpr bool operator<(const hashed_index& a, const hashed_index& b) noexcept {
    return a.hash < b.hash || (a.hash == b.hash && a.index < b.index);
  }
};

inline constexpr std::uint32_t no_index = 0xffffffffu;

/// Index of `hash` in a sorted lookup array whose entries' names are `names`
/// (compared too, so that a collision never joins two names).
template <class Lookup, class Name>
[[nodiscard]] constexpr std::uint32_t find_sorted(const Lookup& lookup, std::uint64_t hash,
                                                  std::string_view name, Name&& name_of) noexcept {
  auto it = std::lower_bound(lookup.begin(), lookup.end(), hashed_index{hash, 0});
  for (; it != lookup.end() && it->hash == hash; ++it)
    if (name_of(it->index) == name) return it->index;
  return no_index;
}

/// Counts of nodes, edges and references (first pass: sizes the arrays of
/// the second, which counts distinct names).
template <std::size_t A>
[[nodiscard]] consteval shape_sizes measure_items(const std::array<item_info, A>& items) {
  shape_sizes s;
  for (const item_info& it : items) {
    s.nodes += it.is_node;
    s.edges += it.edges.size();
    s.refs += it.refs.size();
    s.condition_tests += it.condition_tests.size();
  }
  return s;
}

template <std::size_t R, std::size_t A>
[[nodiscard]] consteval std::size_t count_distinct(const std::array<item_info, A>& items,
                                                   ref_kind kind) {
  std::array<hashed_index, R> sorted{};
  std::array<std::string_view, R> names{};
  std::size_t total = 0;
  for (const item_info& it : items)
    for (const ref_info& r : it.refs)
      if (r.kind == kind) {
        sorted[total] = {r.hash, std::uint32_t(total)};
        names[total++] = r.name;
      }
  std::sort(sorted.begin(), sorted.begin() + total);
  // Within a run of equal hashes, compare only with the run's distinct names
  // (almost always one): linear, however often a name is used.
  std::size_t distinct = 0;
  std::array<std::string_view, 8> run{};
  std::size_t run_size = 0;
  for (std::size_t i = 0; i < total; ++i) {
    if (i == 0 || sorted[i].hash != sorted[i - 1].hash) run_size = 0;
    const std::string_view name = names[sorted[i].index];
    bool fresh = true;
    for (std::size_t j = 0; j < run_size; ++j) fresh = fresh && run[j] != name;
    if (!fresh) continue;
    if (run_size < run.size()) run[run_size++] = name;
    ++distinct;
  }
  return distinct;
}

template <shape_sizes S, std::size_t A>
[[nodiscard]] consteval shape_sizes measure_shape(const std::array<item_info, A>& items) {
  shape_sizes s = S;
  s.params = count_distinct<S.refs>(items, ref_kind::param);
  s.buffers = count_distinct<S.refs>(items, ref_kind::buffer);
  s.conditions = count_distinct<S.refs>(items, ref_kind::condition);
  return s;
}

template <std::size_t N, std::size_t E, std::size_t R, std::size_t P, std::size_t B, std::size_t C,
          std::size_t T>
struct graph_shape {
  // nodes
  std::array<std::string_view, N> names{};
  std::array<std::uint32_t, N> position{};  ///< index among the declaration's items
  std::array<node_kind, N> kinds{};
  std::array<std::uint64_t, N> owned_condition{};  ///< hash, 0 when none
  std::array<hashed_index, N> node_lookup{};
  // dependencies (deduplicated, in edge declaration order) and order
  std::array<std::uint32_t, N + 1> dep_begin{};
  std::array<std::uint32_t, E> deps{};
  std::size_t max_deps = 0;
  std::array<std::uint32_t, N> order{};  ///< topological, ties in declaration order
  // named values
  std::array<ref_info, R> all_refs{};
  std::array<ref_info, P> params{};  ///< first use order
  std::array<std::size_t, P> param_offsets{};
  std::size_t param_bytes = 0;
  std::array<hashed_index, P> param_lookup{};
  std::array<ref_info, B> buffers{};
  std::array<hashed_index, B> buffer_lookup{};
  std::array<ref_info, C> conditions{};
  std::array<hashed_index, C> condition_lookup{};
  std::array<condition_test, T> condition_tests{};  ///< conditional nodes, bodies included
  // conditional bodies
  message_buffer forbidden_path;  ///< first node CUDA forbids in a body, by path
  node_kind forbidden_kind = node_kind::empty;
  // diagnosis
  shape_problem problem = shape_problem::none;
  message_buffer message;
  // Problems only a top-level graph can judge (a nested graph's enclosing
  // graph may allocate the buffer or test the condition): checked by
  // lower()/instantiate()/to_spec(), see graph.hpp.
  std::string_view orphan_free_buffer;  ///< first buffer freed here but allocated in no node here
  message_buffer orphan_free;           ///< "node free_tmp frees buffer tmp"
  message_buffer untested_condition;    ///< "more (read by node step)"

  [[nodiscard]] constexpr std::uint32_t node_index(std::string_view name) const noexcept {
    return find_sorted(node_lookup, name_hash(name), name,
                       [this](std::uint32_t i) { return names[i]; });
  }
  [[nodiscard]] constexpr std::uint32_t param_slot(std::uint64_t hash) const noexcept {
    auto it = std::lower_bound(param_lookup.begin(), param_lookup.end(), hashed_index{hash, 0});
    return it != param_lookup.end() && it->hash == hash ? it->index : no_index;
  }
  [[nodiscard]] constexpr std::size_t param_offset(std::uint64_t hash) const noexcept {
    return param_offsets[param_slot(hash)];
  }
  [[nodiscard]] constexpr std::uint32_t buffer_slot(std::uint64_t hash) const noexcept {
    auto it = std::lower_bound(buffer_lookup.begin(), buffer_lookup.end(), hashed_index{hash, 0});
    return it != buffer_lookup.end() && it->hash == hash ? it->index : no_index;
  }
  [[nodiscard]] constexpr std::uint32_t condition_slot(std::uint64_t hash) const noexcept {
    auto it = std::lower_bound(condition_lookup.begin(), condition_lookup.end(),
                               hashed_index{hash, 0});
    return it != condition_lookup.end() && it->hash == hash ? it->index : no_index;
  }
};

/// Unique references of one kind, in first-use order, and their sorted lookup.
template <std::size_t R, std::size_t U>
consteval void unique_refs(const std::array<ref_info, R>& all, ref_kind kind,
                           std::array<ref_info, U>& out, std::array<hashed_index, U>& lookup) {
  std::size_t count = 0;
  for (const ref_info& r : all) {
    if (r.kind != kind) continue;
    bool seen = false;
    auto it = std::lower_bound(lookup.begin(), lookup.begin() + count, hashed_index{r.hash, 0});
    for (; it != lookup.begin() + count && it->hash == r.hash; ++it)
      if (out[it->index].name == r.name) seen = true;
    if (seen) continue;
    out[count] = r;
    // Insert keeping lookup[0, count] sorted (insertion sort: few names).
    std::size_t j = count;
    const hashed_index entry{r.hash, std::uint32_t(count)};
    while (j > 0 && entry < lookup[j - 1]) {
      lookup[j] = lookup[j - 1];
      --j;
    }
    lookup[j] = entry;
    ++count;
  }
}

template <shape_sizes S, std::size_t A>
[[nodiscard]] consteval auto analyze_shape(const std::array<item_info, A>& items) {
  constexpr std::size_t N = S.nodes, E = S.edges;
  graph_shape<N, E, S.refs, S.params, S.buffers, S.conditions, S.condition_tests> g{};

  // ------------------------------------------------ nodes and named values --
  std::size_t n = 0, r = 0, t = 0;
  for (std::size_t i = 0; i < A; ++i) {
    const item_info& it = items[i];
    for (const ref_info& ref : it.refs) g.all_refs[r++] = ref;
    for (const condition_test& test : it.condition_tests) g.condition_tests[t++] = test;
    if (!it.is_node) continue;
    g.names[n] = it.name;
    g.position[n] = std::uint32_t(i);
    g.kinds[n] = it.kind;
    g.owned_condition[n] = it.owns_condition.empty() ? 0 : name_hash(it.owns_condition);
    g.node_lookup[n] = {name_hash(it.name), std::uint32_t(n)};
    if (it.name.empty() && g.problem == shape_problem::none) {
      g.problem = shape_problem::empty_node_name;
      g.message << "#" << std::size_t(n) << " (" << kind_name(it.kind) << " node)";
    }
    if (!it.conditional_safe && g.forbidden_path.size == 0) {
      g.forbidden_path << it.name;
      if (!it.forbidden_in_body.empty()) g.forbidden_path << "/" << it.forbidden_in_body;
      g.forbidden_kind = it.forbidden_kind;
    }
    ++n;
  }
  if (g.problem != shape_problem::none) return g;
  unique_refs(g.all_refs, ref_kind::param, g.params, g.param_lookup);
  unique_refs(g.all_refs, ref_kind::buffer, g.buffers, g.buffer_lookup);
  unique_refs(g.all_refs, ref_kind::condition, g.conditions, g.condition_lookup);
  for (std::size_t p = 0; p < S.params; ++p) {
    const std::size_t align = g.params[p].align;
    g.param_bytes = (g.param_bytes + align - 1) / align * align;
    g.param_offsets[p] = g.param_bytes;
    g.param_bytes += g.params[p].size;
  }

  // ------------------------------------------------------- duplicate names --
  std::sort(g.node_lookup.begin(), g.node_lookup.end());
  for (std::size_t i = 1; i < N; ++i) {
    const hashed_index& a = g.node_lookup[i - 1];
    const hashed_index& b = g.node_lookup[i];
    if (a.hash == b.hash && g.names[a.index] == g.names[b.index]) {
      g.problem = shape_problem::duplicate_node;
      g.message << g.names[b.index];
      return g;
    }
  }

  // ------------------------------------- one conditional node per condition --
  if constexpr (S.condition_tests > 1) {
    std::array<hashed_index, S.condition_tests> by_condition{};
    for (std::size_t k = 0; k < S.condition_tests; ++k)
      by_condition[k] = {g.condition_tests[k].hash, std::uint32_t(k)};
    std::sort(by_condition.begin(), by_condition.end());
    for (std::size_t k = 1; k < S.condition_tests; ++k) {
      const condition_test& first = g.condition_tests[by_condition[k - 1].index];
      const condition_test& second = g.condition_tests[by_condition[k].index];
      if (first.hash == second.hash && first.condition == second.condition) {
        g.problem = shape_problem::condition_tested_twice;
        g.message << first.condition << " (nodes " << first.node_path.view() << " and "
                  << second.node_path.view() << ")";
        return g;
      }
    }
  }

  // ---------------------------------------------------------------- edges --
  std::array<std::uint32_t, E> from{}, to{};
  std::size_t e = 0;
  for (const item_info& it : items)
    for (const name_pair& p : it.edges) {
      from[e] = g.node_index(p.from);
      to[e] = g.node_index(p.to);
      if (from[e] == no_index || to[e] == no_index) {
        g.problem = shape_problem::unknown_node_in_edge;
        g.message << p.from << " -> " << p.to;
        return g;
      }
      ++e;
    }

  // ----------------------------------------- parameters of one type only --
  for (const ref_info& ref : g.all_refs) {
    if (ref.kind != ref_kind::param) continue;
    const ref_info& declared = g.params[g.param_slot(ref.hash)];
    if (declared.type != ref.type) {
      g.problem = shape_problem::parameter_type_conflict;
      g.message << ref.name;
      return g;
    }
  }

  // ------------------------- dependency lists (CSR, by target, deduplicated) --
  std::array<std::uint32_t, N + 1> count{};
  for (std::size_t k = 0; k < E; ++k) ++count[to[k] + 1];
  for (std::size_t k = 0; k < N; ++k) count[k + 1] += count[k];
  std::array<std::uint32_t, E> grouped{};
  std::array<std::uint32_t, N + 1> fill = count;
  for (std::size_t k = 0; k < E; ++k) grouped[fill[to[k]]++] = from[k];
  std::uint32_t written = 0;
  for (std::size_t v = 0; v < N; ++v) {
    g.dep_begin[v] = written;
    for (std::uint32_t k = count[v]; k < count[v + 1]; ++k) {
      bool repeated = false;
      for (std::uint32_t j = g.dep_begin[v]; j < written; ++j) repeated |= g.deps[j] == grouped[k];
      if (!repeated) g.deps[written++] = grouped[k];
    }
    g.max_deps = std::max<std::size_t>(g.max_deps, written - g.dep_begin[v]);
  }
  g.dep_begin[N] = written;

  // ------------------------------------------------- Kahn's topological sort --
  std::array<std::uint32_t, N + 1> succ_begin{};
  for (std::uint32_t k = 0; k < written; ++k) ++succ_begin[g.deps[k] + 1];
  for (std::size_t k = 0; k < N; ++k) succ_begin[k + 1] += succ_begin[k];
  std::array<std::uint32_t, E> succ{};
  std::array<std::uint32_t, N + 1> succ_fill = succ_begin;
  std::array<std::uint32_t, N> indegree{};
  for (std::uint32_t v = 0; v < N; ++v)
    for (std::uint32_t k = g.dep_begin[v]; k < g.dep_begin[v + 1]; ++k) {
      succ[succ_fill[g.deps[k]]++] = v;
      ++indegree[v];
    }
  // Among ready nodes the one declared first (a min-heap): the order the
  // run-time engine's Kahn walk takes, so that both front ends create nodes
  // in one order and cudaGraphExecUpdate pairs their graphs.
  std::array<std::uint32_t, N> ready{};
  std::size_t ready_count = 0, tail = 0;
  constexpr auto later = [](std::uint32_t a, std::uint32_t b) { return a > b; };
  for (std::uint32_t v = 0; v < N; ++v)
    if (indegree[v] == 0) ready[ready_count++] = v;  // ascending: already a min-heap
  while (ready_count > 0) {
    std::pop_heap(ready.begin(), ready.begin() + ready_count, later);
    const std::uint32_t v = ready[--ready_count];
    g.order[tail++] = v;
    for (std::uint32_t k = succ_begin[v]; k < succ_begin[v + 1]; ++k)
      if (--indegree[succ[k]] == 0) {
        ready[ready_count++] = succ[k];
        std::push_heap(ready.begin(), ready.begin() + ready_count, later);
      }
  }

  // ------------------------------------------------------------ cycle path --
  if (tail < N) {
    std::uint32_t start = 0;
    while (indegree[start] == 0) ++start;
    std::array<std::uint32_t, N + 1> walk{};
    std::array<std::uint32_t, N> step_of{};
    for (auto& s : step_of) s = no_index;
    std::uint32_t v = start, steps = 0;
    while (step_of[v] == no_index) {
      step_of[v] = steps;
      walk[steps++] = v;
      for (std::uint32_t k = g.dep_begin[v]; k < g.dep_begin[v + 1]; ++k)
        if (indegree[g.deps[k]] != 0) {  // a predecessor still on a cycle
          v = g.deps[k];
          break;
        }
    }
    // walk[step_of[v]] .. walk[steps-1] goes against the edges: print backwards.
    g.problem = shape_problem::cycle;
    g.message << g.names[v];
    for (std::uint32_t s = steps; s-- > step_of[v];) g.message << " -> " << g.names[walk[s]];
    return g;
  }

  // --------------------------------------------- frees: once, of an alloc --
  for (std::uint32_t f = 0; f < N; ++f) {
    const item_info& freer = items[g.position[f]];
    if (freer.frees.empty()) continue;
    bool allocated_here = false;
    for (std::uint32_t b = 0; b < N; ++b) {
      const item_info& other = items[g.position[b]];
      allocated_here = allocated_here || other.allocates == freer.frees;
      if (b > f && other.frees == freer.frees) {
        g.problem = shape_problem::buffer_freed_twice;
        g.message << freer.frees << " (nodes " << freer.name << " and " << other.name << ")";
        return g;
      }
    }
    if (!allocated_here && g.orphan_free.size == 0) {
      g.orphan_free_buffer = freer.frees;
      g.orphan_free << "node " << freer.name << " frees buffer " << freer.frees;
    }
  }

  // --------------------------- every condition tested by a conditional node --
  for (const ref_info& c : g.conditions) {
    bool tested = false;
    for (const condition_test& t : g.condition_tests)
      tested = tested || (t.hash == c.hash && t.condition == c.name);
    if (tested) continue;
    g.untested_condition << c.name;
    for (std::uint32_t v = 0; v < N; ++v)
      for (const ref_info& r : items[g.position[v]].refs)
        if (r.kind == ref_kind::condition && r.hash == c.hash && r.name == c.name &&
            g.untested_condition.size == c.name.size()) {
          g.untested_condition << " (read by node " << g.names[v] << ")";
        }
    break;
  }

  // ------------------------------------------------------- buffer lifetimes --
  for (std::uint32_t a = 0; a < N; ++a) {
    const item_info& alloc = items[g.position[a]];
    if (alloc.allocates.empty()) continue;
    std::uint32_t free_node = no_index;
    for (std::uint32_t b = 0; b < N; ++b) {
      const item_info& other = items[g.position[b]];
      if (b != a && other.allocates == alloc.allocates) {
        g.problem = shape_problem::buffer_allocated_twice;
        g.message << alloc.allocates << " (nodes " << alloc.name << " and " << other.name << ")";
        return g;
      }
      if (other.frees == alloc.allocates) free_node = b;
    }
    // Forward reach from the alloc, backward reach from the free.
    std::array<bool, N> after_alloc{}, before_free{};
    for (std::size_t k = 0; k < N; ++k) {
      const std::uint32_t v = g.order[k];
      if (v == a) after_alloc[v] = true;
      for (std::uint32_t d = g.dep_begin[v]; d < g.dep_begin[v + 1]; ++d)
        after_alloc[v] = after_alloc[v] || after_alloc[g.deps[d]];
    }
    for (std::size_t k = N; k-- > 0;) {
      const std::uint32_t v = g.order[k];
      if (v == free_node) before_free[v] = true;
      if (before_free[v])
        for (std::uint32_t d = g.dep_begin[v]; d < g.dep_begin[v + 1]; ++d)
          before_free[g.deps[d]] = true;
    }
    const std::uint64_t buffer_hash = name_hash(alloc.allocates);
    for (std::uint32_t u = 0; u < N; ++u) {
      if (u == a) continue;
      const item_info& user = items[g.position[u]];
      bool uses = false;
      for (const ref_info& ref : user.refs)
        uses |= ref.kind == ref_kind::buffer && ref.hash == buffer_hash && ref.name == alloc.allocates;
      if (!uses) continue;
      const bool ordered_after = after_alloc[u];
      const bool ordered_before = free_node == no_index || u == free_node || before_free[u];
      if (!ordered_after || !ordered_before) {
        g.problem = shape_problem::buffer_outside_lifetime;
        g.message << "node " << user.name << " uses buffer " << alloc.allocates << " but is not ordered "
                  << (ordered_after ? "before its free node " : "after its alloc node ")
                  << (ordered_after ? g.names[free_node] : alloc.name);
        return g;
      }
    }
  }
  return g;
}

}  // namespace cudag::dsl
