#pragma once
// The graph algorithms: name lookup (64-bit hash, sort, binary search), edges
// resolved to indices, Kahn's topological sort, a cycle search that prints
// the path, buffer lifetimes, races (cudag/memory_access.hpp's rule), and
// the tables of parameters, buffers and conditions.
//
// They are constexpr functions over slices (a pointer and a length, see
// slice below), so that one code runs in two places: the compiler runs it
// over a graph_shape's std::arrays (analyze_shape: one constexpr value per
// graph, whose first problem graph.hpp turns into a compile error), and a
// program runs it over vectors (shape_rules.hpp: check_shape, the DSL's
// verdict on a graph described at run time, which tests hold to check()'s).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"
#include "cudag/dsl/node.hpp"

namespace cudag::dsl::detail {

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
  edge_of_two_kinds,
  typed_edge_not_between_kernels,
  typed_edge_into_unsynchronized_kernel,
  race,
};

struct shape_sizes {
  std::size_t nodes = 0, edges = 0, refs = 0, params = 0, buffers = 0, conditions = 0;
  std::size_t condition_tests = 0;
  /// Edges of a kind other than full: where there are none (nearly every
  /// graph), the shape keeps no kinds at all.
  std::size_t typed_edges = 0;
  /// References that touch memory, where one of them may conflict with
  /// another (writes or updates concurrently): the race rule's scratch. A
  /// graph whose pointers are only read keeps none.
  std::size_t race_refs = 0;
};

struct hashed_index {
  std::uint64_t hash = 0;
  std::uint32_t index = 0;
  friend constexpr bool operator<(const hashed_index& a, const hashed_index& b) noexcept {
    return a.hash < b.hash || (a.hash == b.hash && a.index < b.index);
  }
};

inline constexpr std::uint32_t no_index = 0xffffffffu;

// Sorting and searching without <algorithm>: in C++20 that header (the
// ranges algorithms) costs every translation unit of the DSL about 6 MiB of
// g++ memory and 0.1 s, for the three algorithms used here.

/// The first entry not less than `key` in sorted [first, last).
[[nodiscard]] constexpr const hashed_index* lower_bound_hashed(const hashed_index* first,
                                                               const hashed_index* last,
                                                               const hashed_index& key) noexcept {
  std::size_t count = std::size_t(last - first);
  while (count > 0) {
    const std::size_t step = count / 2;
    if (first[step] < key) {
      first += step + 1;
      count -= step + 1;
    } else {
      count = step;
    }
  }
  return first;
}

/// Sorts [a, a + n) ascending (heap sort: n log n, no recursion; the keys
/// are distinct, so the result is the one std::sort gives).
constexpr void sort_hashed(hashed_index* a, std::size_t n) noexcept {
  const auto sift_down = [a](std::size_t root, std::size_t end) {
    for (std::size_t child = 2 * root + 1; child < end; child = 2 * root + 1) {
      if (child + 1 < end && a[child] < a[child + 1]) ++child;
      if (!(a[root] < a[child])) return;
      const hashed_index t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;) sift_down(i, n);
  for (std::size_t end = n; end > 1; --end) {
    const hashed_index t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift_down(0, end - 1);
  }
}

/// A binary min-heap of node indices in [h, h + n) (std::push_heap's and
/// std::pop_heap's layout with a greater-than comparison): the last element
/// added, moved into place.
constexpr void min_heap_push(std::uint32_t* h, std::size_t n) noexcept {
  std::size_t i = n - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(h[i] < h[parent])) return;
    const std::uint32_t t = h[i];
    h[i] = h[parent];
    h[parent] = t;
    i = parent;
  }
}
/// Moves the least element of the heap [h, h + n) to h[n - 1] and makes
/// [h, h + n - 1) a heap again.
constexpr void min_heap_pop(std::uint32_t* h, std::size_t n) noexcept {
  const std::uint32_t least = h[0];
  h[0] = h[n - 1];
  h[n - 1] = least;
  const std::size_t end = n - 1;
  std::size_t root = 0;
  for (std::size_t child = 1; child < end; child = 2 * root + 1) {
    if (child + 1 < end && h[child + 1] < h[child]) ++child;
    if (!(h[child] < h[root])) return;
    const std::uint32_t t = h[root];
    h[root] = h[child];
    h[child] = t;
    root = child;
  }
}

/// Index of `name` in a sorted lookup array of `size` entries whose names
/// are names[index] (compared too, so that a collision never joins two
/// names).
[[nodiscard]] constexpr std::uint32_t find_sorted(const hashed_index* lookup, std::size_t size,
                                                  const std::string_view* names,
                                                  std::string_view name) noexcept {
  const std::uint64_t hash = name_hash(name);
  const hashed_index* const end = lookup + size;
  for (const hashed_index* it = lower_bound_hashed(lookup, end, hashed_index{hash, 0});
       it != end && it->hash == hash; ++it)
    if (names[it->index] == name) return it->index;
  return no_index;
}

/// Index of the first entry with `hash` in a sorted lookup array (names
/// whose hashes are distinct: the tables of parameters, buffers, conditions).
[[nodiscard]] constexpr std::uint32_t find_hashed(const hashed_index* lookup, std::size_t size,
                                                  std::uint64_t hash) noexcept {
  const hashed_index* const end = lookup + size;
  const hashed_index* const it = lower_bound_hashed(lookup, end, hashed_index{hash, 0});
  return it != end && it->hash == hash ? it->index : no_index;
}

// ---------------------------------------------------------------- slices --
/// What the rules read and write through: a pointer and a length, over a
/// graph_shape's std::arrays at compile time and over vectors at run time
/// (a std::span converts: slice<T>(s.data(), s.size())).
///
/// Not std::span: nvcc's front end (EDG, CUDA 13.0) spends about 50 million
/// instructions per element type on std::span's constrained constructors
/// and the iterator concepts behind them (measured: ten element types cost a
/// 128-node declaration 8% more front-end time); the rules use ten types.
/// A slice's members are plain.
template <class T>
struct slice {
  T* first = nullptr;
  std::size_t count = 0;

  constexpr slice() noexcept = default;
  constexpr slice(T* data, std::size_t size) noexcept : first(data), count(size) {}
  /// A read-only slice of a writable one.
  template <class U>
  constexpr slice(slice<U> other) noexcept : first(other.first), count(other.count) {}

  [[nodiscard]] constexpr T* data() const noexcept { return first; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return count; }
  [[nodiscard]] constexpr T& operator[](std::size_t i) const noexcept { return first[i]; }
  [[nodiscard]] constexpr T* begin() const noexcept { return first; }
  [[nodiscard]] constexpr T* end() const noexcept { return first + count; }
};

/// A whole array or vector as a slice.
template <class Contiguous>
[[nodiscard]] constexpr auto whole(Contiguous& c) noexcept
    -> slice<std::remove_pointer_t<decltype(c.data())>> {
  return {c.data(), c.size()};
}

// ----------------------------------------------------------------- sizes --
/// Counts of nodes, edges, references and condition tests (first pass: sizes
/// the scratch of the second, which counts distinct names).
[[nodiscard]] constexpr shape_sizes count_items(slice<const item_info> items) noexcept {
  const item_info* const item = items.data();
  shape_sizes s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    s.nodes += item[i].is_node;
    s.edges += item[i].edges.size();
    if (item[i].edges_kind != edge_kind::full) s.typed_edges += item[i].edges.size();
    s.refs += item[i].refs.size();
    s.condition_tests += item[i].condition_tests.size();
  }
  std::size_t touching = 0;
  bool conflicting = false;
  for (std::size_t i = 0; i < items.size(); ++i)
    for (const ref_info& r : item[i].refs) {
      touching += r.touches_memory;
      conflicting = conflicting || (r.touches_memory && r.access != access_mode::read);
    }
  s.race_refs = conflicting ? touching : 0;
  return s;
}

/// Distinct names among the references of one kind. `sorted_refs` and
/// `ref_names`: scratch with room for every reference.
[[nodiscard]] constexpr std::size_t count_distinct(slice<const item_info> items, ref_kind kind,
                                                   slice<hashed_index> sorted_refs,
                                                   slice<std::string_view> ref_names) noexcept {
  const item_info* const item = items.data();
  hashed_index* const sorted = sorted_refs.data();
  std::string_view* const names = ref_names.data();
  std::size_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    for (const ref_info& r : item[i].refs)
      if (r.kind == kind) {
        sorted[total] = {r.hash, std::uint32_t(total)};
        names[total++] = r.name;
      }
  sort_hashed(sorted, total);
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

template <std::size_t A>
[[nodiscard]] consteval shape_sizes measure_items(const std::array<item_info, A>& items) {
  return count_items(whole(items));
}

template <std::size_t R, std::size_t A>
[[nodiscard]] consteval std::size_t count_distinct(const std::array<item_info, A>& items,
                                                   ref_kind kind) {
  std::array<hashed_index, R> sorted{};
  std::array<std::string_view, R> names{};
  return count_distinct(whole(items), kind, whole(sorted), whole(names));
}

template <shape_sizes S, std::size_t A>
[[nodiscard]] consteval shape_sizes measure_shape(const std::array<item_info, A>& items) {
  shape_sizes s = S;
  s.params = count_distinct<S.refs>(items, ref_kind::param);
  s.buffers = count_distinct<S.refs>(items, ref_kind::buffer);
  s.conditions = count_distinct<S.refs>(items, ref_kind::condition);
  return s;
}

// ------------------------------------------------------------ the shape --
/// Where the rules write a graph's shape: slices of a graph_shape's arrays
/// (compile time) or over vectors (run time), each as long as shape_sizes
/// says (dep_begin: nodes + 1), and its single values.
struct shape_view {
  // nodes
  slice<std::string_view> names;
  slice<std::uint32_t> position;
  slice<node_kind> kinds;
  slice<std::uint64_t> owned_condition;
  slice<hashed_index> node_lookup;
  // dependencies and order
  slice<std::uint32_t> dep_begin;
  slice<std::uint32_t> deps;
  /// Each dependency's kind, beside deps; empty when every edge is full.
  slice<edge_kind> dep_kinds;
  std::size_t& max_deps;
  slice<std::uint32_t> order;
  // named values
  slice<ref_info> all_refs;
  slice<ref_info> params;
  slice<std::size_t> param_offsets;
  std::size_t& param_bytes;
  slice<hashed_index> param_lookup;
  slice<ref_info> buffers;
  slice<hashed_index> buffer_lookup;
  slice<ref_info> conditions;
  slice<hashed_index> condition_lookup;
  slice<condition_test> condition_tests;
  // conditional bodies
  message_buffer& forbidden_path;
  node_kind& forbidden_kind;
  // diagnosis
  shape_problem& problem;
  message_buffer& message;
  std::string_view& orphan_free_buffer;
  message_buffer& orphan_free;
  message_buffer& untested_condition;
  message_buffer& unallocated_use;
  // the race: two nodes and the memory, in the graph's declaration order
  std::string_view& race_first;
  std::string_view& race_second;
  std::string_view& race_memory;
};

/// The race rule's walk over one memory, in topological order: its last
/// write, and the reads and concurrent updates since (lists through
/// memory_access::next, in order). no_index: none.
struct memory_walk {
  std::uint32_t last_write = no_index;
  std::uint32_t reads_head = no_index, reads_tail = no_index;
  std::uint32_t concurrent_head = no_index, concurrent_tail = no_index;
};
/// One node's access to one memory (several references of the node to it
/// combined): the node, the memory's walk, how and how far.
struct memory_access {
  std::uint32_t node = 0;
  std::uint32_t memory = 0;
  std::uint32_t next = no_index;
  access_mode mode = access_mode::read;
  std::size_t extent = to_the_end;
};

/// Working memory of the rules, zeroed: one entry per edge, per node (+ 1
/// where marked), per condition test.
struct shape_scratch {
  slice<std::uint32_t> from, to, grouped, succ;             // edges
  slice<std::uint32_t> count, fill, succ_begin, succ_fill;  // nodes + 1
  slice<std::uint32_t> walk;                                // nodes + 1
  slice<std::uint32_t> indegree, ready, step_of;            // nodes
  slice<bool> after_alloc, before_free;                     // nodes
  slice<hashed_index> by_condition;                         // condition tests
  slice<edge_kind> kind, grouped_kind;  // edges, where some edge is typed (else empty)
  /// The race rule's: one walk per parameter and buffer, one entry per
  /// reference touching memory (both empty where nothing may conflict).
  slice<memory_walk> memory_walks;
  slice<memory_access> accesses;
};

/// K: the edges when some edge is typed, else 0. M: sizes.race_refs; Q:
/// the parameters and buffers where M is not 0, else 0.
template <std::size_t N, std::size_t E, std::size_t T, std::size_t K, std::size_t M, std::size_t Q>
struct shape_scratch_arrays {
  std::array<std::uint32_t, E> from{}, to{}, grouped{}, succ{};
  std::array<std::uint32_t, N + 1> count{}, fill{}, succ_begin{}, succ_fill{}, walk{};
  std::array<std::uint32_t, N> indegree{}, ready{}, step_of{};
  std::array<bool, N> after_alloc{}, before_free{};
  std::array<hashed_index, T> by_condition{};
  std::array<edge_kind, K> kind{}, grouped_kind{};
  std::array<memory_walk, Q> memory_walks{};
  std::array<memory_access, M> accesses{};

  [[nodiscard]] constexpr shape_scratch spans() noexcept {
    return {whole(from),        whole(to),          whole(grouped),      whole(succ),
            whole(count),       whole(fill),        whole(succ_begin),   whole(succ_fill),
            whole(walk),        whole(indegree),    whole(ready),        whole(step_of),
            whole(after_alloc), whole(before_free), whole(by_condition), whole(kind),
            whole(grouped_kind), whole(memory_walks), whole(accesses)};
  }
};

template <std::size_t N, std::size_t E, std::size_t R, std::size_t P, std::size_t B, std::size_t C,
          std::size_t T, std::size_t K>
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
  std::array<edge_kind, K> dep_kinds{};  ///< beside deps; none when every edge is full (K = 0)
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
  message_buffer unallocated_use;       ///< "node step uses buffer tmp" (no node allocates tmp)
  // A race (problem race): its nodes in declaration order, and the memory.
  std::string_view race_first, race_second, race_memory;

  [[nodiscard]] constexpr std::uint32_t node_index(std::string_view name) const noexcept {
    return find_sorted(node_lookup.data(), N, names.data(), name);
  }
  [[nodiscard]] constexpr std::uint32_t param_slot(std::uint64_t hash) const noexcept {
    return find_hashed(param_lookup.data(), param_lookup.size(), hash);
  }
  [[nodiscard]] constexpr std::size_t param_offset(std::uint64_t hash) const noexcept {
    return param_offsets[param_slot(hash)];
  }
  [[nodiscard]] constexpr std::uint32_t buffer_slot(std::uint64_t hash) const noexcept {
    return find_hashed(buffer_lookup.data(), buffer_lookup.size(), hash);
  }
  [[nodiscard]] constexpr std::uint32_t condition_slot(std::uint64_t hash) const noexcept {
    return find_hashed(condition_lookup.data(), condition_lookup.size(), hash);
  }
};

/// A shape's tables as the rules write them: the compiler's graph_shape
/// (std::arrays) and the run-time shape of shape_rules.hpp (vectors) have
/// the same fields.
template <class Shape>
[[nodiscard]] constexpr shape_view view_of(Shape& s) noexcept {
  return {whole(s.names),
          whole(s.position),
          whole(s.kinds),
          whole(s.owned_condition),
          whole(s.node_lookup),
          whole(s.dep_begin),
          whole(s.deps),
          whole(s.dep_kinds),
          s.max_deps,
          whole(s.order),
          whole(s.all_refs),
          whole(s.params),
          whole(s.param_offsets),
          s.param_bytes,
          whole(s.param_lookup),
          whole(s.buffers),
          whole(s.buffer_lookup),
          whole(s.conditions),
          whole(s.condition_lookup),
          whole(s.condition_tests),
          s.forbidden_path,
          s.forbidden_kind,
          s.problem,
          s.message,
          s.orphan_free_buffer,
          s.orphan_free,
          s.untested_condition,
          s.unallocated_use,
          s.race_first,
          s.race_second,
          s.race_memory};
}

// ------------------------------------------------------------ the rules --
// Each takes the items (declaration order) and the view; those that can find
// a problem record it and return true. shape_rules() runs them in order.
//
// Inside, slices are read through their data() pointers: a constant
// evaluation counts every call, and operator[] is a call where a pointer's
// subscript is not; this keeps the compile-time cost of the rules what it
// was over arrays.

/// Unique references of one kind, in first-use order, and their sorted lookup.
constexpr void unique_refs(slice<const ref_info> all_refs, ref_kind kind, slice<ref_info> out_refs,
                           slice<hashed_index> lookup_refs) noexcept {
  const ref_info* const all = all_refs.data();
  ref_info* const out = out_refs.data();
  hashed_index* const lookup = lookup_refs.data();
  std::size_t count = 0;
  for (std::size_t i = 0; i < all_refs.size(); ++i) {
    const ref_info& r = all[i];
    if (r.kind != kind) continue;
    bool seen = false;
    const hashed_index* it = lower_bound_hashed(lookup, lookup + count, hashed_index{r.hash, 0});
    for (; it != lookup + count && it->hash == r.hash; ++it)
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

/// Nodes, references and condition tests gathered from the items; the first
/// node with an empty name.
constexpr bool index_nodes(slice<const item_info> items, const shape_view& g) noexcept {
  const item_info* const item = items.data();
  ref_info* const all_refs = g.all_refs.data();
  condition_test* const tests = g.condition_tests.data();
  std::size_t n = 0, r = 0, t = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const item_info& it = item[i];
    for (const ref_info& ref : it.refs) all_refs[r++] = ref;
    for (const condition_test& test : it.condition_tests) tests[t++] = test;
    if (!it.is_node) continue;
    g.names.data()[n] = it.name;
    g.position.data()[n] = std::uint32_t(i);
    g.kinds.data()[n] = it.kind;
    g.owned_condition.data()[n] = it.owns_condition.empty() ? 0 : name_hash(it.owns_condition);
    g.node_lookup.data()[n] = {name_hash(it.name), std::uint32_t(n)};
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
  return g.problem != shape_problem::none;
}

/// The tables of parameters (with their byte offsets), buffers and conditions.
constexpr void name_tables(const shape_view& g) noexcept {
  unique_refs(g.all_refs, ref_kind::param, g.params, g.param_lookup);
  unique_refs(g.all_refs, ref_kind::buffer, g.buffers, g.buffer_lookup);
  unique_refs(g.all_refs, ref_kind::condition, g.conditions, g.condition_lookup);
  const ref_info* const params = g.params.data();
  for (std::size_t p = 0; p < g.params.size(); ++p) {
    const std::size_t align = params[p].align;
    g.param_bytes = (g.param_bytes + align - 1) / align * align;
    g.param_offsets.data()[p] = g.param_bytes;
    g.param_bytes += params[p].size;
  }
}

/// Sorts the node lookup; the first name used twice (in hash order).
constexpr bool check_duplicate_names(const shape_view& g) noexcept {
  hashed_index* const lookup = g.node_lookup.data();
  const std::string_view* const names = g.names.data();
  const std::size_t N = g.node_lookup.size();
  sort_hashed(lookup, N);
  for (std::size_t i = 1; i < N; ++i) {
    const hashed_index& a = lookup[i - 1];
    const hashed_index& b = lookup[i];
    if (a.hash == b.hash && names[a.index] == names[b.index]) {
      g.problem = shape_problem::duplicate_node;
      g.message << names[b.index];
      return true;
    }
  }
  return false;
}

/// One conditional node per condition, bodies and child graphs included.
constexpr bool check_condition_tests(const shape_view& g, const shape_scratch& s) noexcept {
  const std::size_t T = g.condition_tests.size();
  if (T < 2) return false;
  const condition_test* const tests = g.condition_tests.data();
  hashed_index* const by_condition = s.by_condition.data();
  for (std::size_t k = 0; k < T; ++k) by_condition[k] = {tests[k].hash, std::uint32_t(k)};
  sort_hashed(by_condition, T);
  for (std::size_t k = 1; k < T; ++k) {
    const condition_test& first = tests[by_condition[k - 1].index];
    const condition_test& second = tests[by_condition[k].index];
    if (first.hash == second.hash && first.condition == second.condition) {
      g.problem = shape_problem::condition_tested_twice;
      g.message << first.condition << " (nodes " << first.node_path.view() << " and "
                << second.node_path.view() << ")";
      return true;
    }
  }
  return false;
}

/// Each edge's ends as node indices (s.from, s.to); the first edge naming an
/// unknown node.
constexpr bool resolve_edges(slice<const item_info> items, const shape_view& g,
                             const shape_scratch& s) noexcept {
  const item_info* const item = items.data();
  const std::string_view* const names = g.names.data();
  const hashed_index* const lookup = g.node_lookup.data();
  const std::size_t N = g.node_lookup.size();
  std::uint32_t* const from = s.from.data();
  std::uint32_t* const to = s.to.data();
  edge_kind* const kind = s.kind.size() != 0 ? s.kind.data() : nullptr;
  std::size_t e = 0;
  for (std::size_t i = 0; i < items.size(); ++i)
    for (const name_pair& p : item[i].edges) {
      if (kind) kind[e] = item[i].edges_kind;
      from[e] = find_sorted(lookup, N, names, p.from);
      to[e] = find_sorted(lookup, N, names, p.to);
      if (from[e] == no_index || to[e] == no_index) {
        g.problem = shape_problem::unknown_node_in_edge;
        g.message << p.from << " -> " << p.to;
        return true;
      }
      ++e;
    }
  return false;
}

/// The first reference to a parameter with another type than its first use.
constexpr bool check_parameter_types(const shape_view& g) noexcept {
  const ref_info* const all_refs = g.all_refs.data();
  const ref_info* const params = g.params.data();
  for (std::size_t k = 0; k < g.all_refs.size(); ++k) {
    const ref_info& ref = all_refs[k];
    if (ref.kind != ref_kind::param) continue;
    const ref_info& declared =
        params[find_hashed(g.param_lookup.data(), g.param_lookup.size(), ref.hash)];
    if (declared.type != ref.type) {
      g.problem = shape_problem::parameter_type_conflict;
      g.message << ref.name;
      return true;
    }
  }
  return false;
}

/// Dependency lists: CSR by target, each in edge declaration order,
/// deduplicated; with typed edges, each dependency's kind (g.dep_kinds), and
/// the first edge declared again with another kind.
constexpr bool group_dependencies(const shape_view& g, const shape_scratch& s) noexcept {
  const std::size_t N = g.names.size(), E = s.from.size();
  const std::uint32_t* const from = s.from.data();
  const std::uint32_t* const to = s.to.data();
  std::uint32_t* const count = s.count.data();
  std::uint32_t* const fill = s.fill.data();
  std::uint32_t* const grouped = s.grouped.data();
  std::uint32_t* const dep_begin = g.dep_begin.data();
  std::uint32_t* const deps = g.deps.data();
  // Kinds only where some edge is typed (the scratch is empty otherwise).
  const edge_kind* const kind = s.kind.size() != 0 ? s.kind.data() : nullptr;
  edge_kind* const grouped_kind = kind ? s.grouped_kind.data() : nullptr;
  edge_kind* const dep_kinds = kind ? g.dep_kinds.data() : nullptr;
  for (std::size_t k = 0; k < E; ++k) ++count[to[k] + 1];
  for (std::size_t k = 0; k < N; ++k) count[k + 1] += count[k];
  for (std::size_t k = 0; k <= N; ++k) fill[k] = count[k];
  for (std::size_t k = 0; k < E; ++k) {
    if (kind) grouped_kind[fill[to[k]]] = kind[k];
    grouped[fill[to[k]]++] = from[k];
  }
  std::uint32_t written = 0;
  for (std::size_t v = 0; v < N; ++v) {
    dep_begin[v] = written;
    for (std::uint32_t k = count[v]; k < count[v + 1]; ++k) {
      std::uint32_t at = written;
      for (std::uint32_t j = dep_begin[v]; j < written; ++j)
        if (deps[j] == grouped[k]) at = j;
      if (at == written) {
        if (kind) dep_kinds[written] = grouped_kind[k];
        deps[written++] = grouped[k];
      } else if (kind && dep_kinds[at] != grouped_kind[k]) {
        g.problem = shape_problem::edge_of_two_kinds;
        g.message << g.names.data()[grouped[k]] << " -> " << g.names.data()[v] << " ("
                  << edge_kind_name(dep_kinds[at]) << " and " << edge_kind_name(grouped_kind[k])
                  << ")";
        return true;
      }
    }
    if (written - dep_begin[v] > g.max_deps) g.max_deps = written - dep_begin[v];
  }
  dep_begin[N] = written;
  return false;
}

/// Kahn's topological sort into g.order. Among ready nodes the one declared
/// first (a min-heap): the order the run-time engine's Kahn walk takes, so
/// that both front ends create nodes in one order and cudaGraphExecUpdate
/// pairs their graphs. Returns how many nodes it ordered; those it could
/// not keep s.indegree != 0.
constexpr std::size_t order_nodes(const shape_view& g, const shape_scratch& s) noexcept {
  const std::size_t N = g.names.size();
  const std::uint32_t* const dep_begin = g.dep_begin.data();
  const std::uint32_t* const deps = g.deps.data();
  std::uint32_t* const order = g.order.data();
  std::uint32_t* const succ_begin = s.succ_begin.data();
  std::uint32_t* const succ_fill = s.succ_fill.data();
  std::uint32_t* const succ = s.succ.data();
  std::uint32_t* const indegree = s.indegree.data();
  std::uint32_t* const ready = s.ready.data();
  const std::uint32_t written = dep_begin[N];
  for (std::uint32_t k = 0; k < written; ++k) ++succ_begin[deps[k] + 1];
  for (std::size_t k = 0; k < N; ++k) succ_begin[k + 1] += succ_begin[k];
  for (std::size_t k = 0; k <= N; ++k) succ_fill[k] = succ_begin[k];
  for (std::uint32_t v = 0; v < N; ++v)
    for (std::uint32_t k = dep_begin[v]; k < dep_begin[v + 1]; ++k) {
      succ[succ_fill[deps[k]]++] = v;
      ++indegree[v];
    }
  std::size_t ready_count = 0, tail = 0;
  for (std::uint32_t v = 0; v < N; ++v)
    if (indegree[v] == 0) ready[ready_count++] = v;  // ascending: already a min-heap
  while (ready_count > 0) {
    min_heap_pop(ready, ready_count);
    const std::uint32_t v = ready[--ready_count];
    order[tail++] = v;
    for (std::uint32_t k = succ_begin[v]; k < succ_begin[v + 1]; ++k)
      if (--indegree[succ[k]] == 0) {
        ready[ready_count++] = succ[k];
        min_heap_push(ready, ready_count);
      }
  }
  return tail;
}

/// After order_nodes() left nodes out: a cycle among them, as a path. From
/// the first node left out, walk to its first dependency still on a cycle
/// until a node repeats.
constexpr void describe_cycle(const shape_view& g, const shape_scratch& s) noexcept {
  const std::size_t N = g.names.size();
  const std::uint32_t* const dep_begin = g.dep_begin.data();
  const std::uint32_t* const deps = g.deps.data();
  const std::string_view* const names = g.names.data();
  const std::uint32_t* const indegree = s.indegree.data();
  std::uint32_t* const walk = s.walk.data();
  std::uint32_t* const step_of = s.step_of.data();
  std::uint32_t start = 0;
  while (indegree[start] == 0) ++start;
  for (std::size_t k = 0; k < N; ++k) step_of[k] = no_index;
  std::uint32_t v = start, steps = 0;
  while (step_of[v] == no_index) {
    step_of[v] = steps;
    walk[steps++] = v;
    for (std::uint32_t k = dep_begin[v]; k < dep_begin[v + 1]; ++k)
      if (indegree[deps[k]] != 0) {  // a predecessor still on a cycle
        v = deps[k];
        break;
      }
  }
  // walk[step_of[v]] .. walk[steps-1] goes against the edges: print backwards.
  g.problem = shape_problem::cycle;
  g.message << names[v];
  for (std::uint32_t k = steps; k-- > step_of[v];) g.message << " -> " << names[walk[k]];
}

/// Typed edges (programmatic, launch-completion): only from a kernel node
/// into a kernel node (CUDA's rule), and only into a kernel that
/// synchronizes its grid dependencies (else it may read what its
/// predecessor writes before it is written); check()'s two rules. Nodes in
/// declaration order, each dependency in order.
constexpr bool check_edge_kinds(slice<const item_info> items, const shape_view& g) noexcept {
  if (g.dep_kinds.size() == 0) return false;
  const std::size_t N = g.names.size();
  const item_info* const item = items.data();
  const std::uint32_t* const dep_begin = g.dep_begin.data();
  const std::uint32_t* const deps = g.deps.data();
  const edge_kind* const dep_kinds = g.dep_kinds.data();
  const node_kind* const kinds = g.kinds.data();
  const std::string_view* const names = g.names.data();
  for (std::uint32_t v = 0; v < N; ++v)
    for (std::uint32_t k = dep_begin[v]; k < dep_begin[v + 1]; ++k) {
      const edge_kind kind = dep_kinds[k];
      if (kind == edge_kind::full) continue;
      const std::uint32_t u = deps[k];
      if (kinds[u] != node_kind::kernel || kinds[v] != node_kind::kernel) {
        const std::uint32_t culprit = kinds[u] != node_kind::kernel ? u : v;
        const std::string_view culprit_kind = kind_name(kinds[culprit]);
        g.problem = shape_problem::typed_edge_not_between_kernels;
        g.message << edge_kind_name(kind) << " edge " << names[u] << " -> " << names[v] << " ("
                  << names[culprit] << (culprit_kind.front() == 'e' ? " is an " : " is a ")
                  << culprit_kind << " node)";
        return true;
      }
      if (!item[g.position.data()[v]].synchronizes_grid_dependencies) {
        g.problem = shape_problem::typed_edge_into_unsynchronized_kernel;
        g.message << names[v] << " (" << edge_kind_name(kind) << " edge " << names[u] << " -> "
                  << names[v] << ")";
        return true;
      }
    }
  return false;
}

/// Frees: once per buffer. The first free of a buffer no node here allocates
/// is recorded for the top level (orphan_free), not refused here.
constexpr bool check_frees(slice<const item_info> items, const shape_view& g) noexcept {
  const std::size_t N = g.names.size();
  const item_info* const item = items.data();
  const std::uint32_t* const position = g.position.data();
  for (std::uint32_t f = 0; f < N; ++f) {
    const item_info& freer = item[position[f]];
    if (freer.frees.empty()) continue;
    bool allocated_here = false;
    for (std::uint32_t b = 0; b < N; ++b) {
      const item_info& other = item[position[b]];
      allocated_here = allocated_here || other.allocates == freer.frees;
      if (b > f && other.frees == freer.frees) {
        g.problem = shape_problem::buffer_freed_twice;
        g.message << freer.frees << " (nodes " << freer.name << " and " << other.name << ")";
        return true;
      }
    }
    if (!allocated_here && g.orphan_free.size == 0) {
      g.orphan_free_buffer = freer.frees;
      g.orphan_free << "node " << freer.name << " frees buffer " << freer.frees;
    }
  }
  return false;
}

/// The first condition (in first-use order) that no conditional node here
/// tests, with its first reader, recorded for the top level.
constexpr void find_untested_condition(slice<const item_info> items, const shape_view& g) noexcept {
  const std::size_t N = g.names.size();
  const item_info* const item = items.data();
  const condition_test* const tests = g.condition_tests.data();
  for (std::size_t k = 0; k < g.conditions.size(); ++k) {
    const ref_info& c = g.conditions.data()[k];
    bool tested = false;
    for (std::size_t t = 0; t < g.condition_tests.size(); ++t)
      tested = tested || (tests[t].hash == c.hash && tests[t].condition == c.name);
    if (tested) continue;
    g.untested_condition << c.name;
    for (std::uint32_t v = 0; v < N; ++v)
      for (const ref_info& r : item[g.position.data()[v]].refs)
        if (r.kind == ref_kind::condition && r.hash == c.hash && r.name == c.name &&
            g.untested_condition.size == c.name.size()) {
          g.untested_condition << " (read by node " << g.names.data()[v] << ")";
        }
    break;
  }
}

/// The first buffer (in first-use order) that nodes here read but no node
/// here allocates, with its first reader other than a free (frees are
/// orphan_free's), recorded for the top level. A buffer a child node reads
/// is left out: its graph may allocate it, which its item does not say.
constexpr void find_unallocated_use(slice<const item_info> items, const shape_view& g) noexcept {
  const std::size_t N = g.names.size();
  const item_info* const item = items.data();
  const std::uint32_t* const position = g.position.data();
  for (std::size_t k = 0; k < g.buffers.size(); ++k) {
    const ref_info& b = g.buffers.data()[k];
    bool allocated = false;
    for (std::uint32_t v = 0; v < N; ++v) {
      const item_info& it = item[position[v]];
      allocated = allocated || it.allocates == b.name;
      if (it.kind == node_kind::child)
        for (const ref_info& r : it.refs)
          allocated = allocated || (r.kind == ref_kind::buffer && r.name == b.name);
    }
    if (allocated) continue;
    for (std::uint32_t v = 0; v < N; ++v) {
      const item_info& user = item[position[v]];
      if (user.frees == b.name) continue;
      for (const ref_info& r : user.refs)
        if (r.kind == ref_kind::buffer && r.hash == b.hash && r.name == b.name &&
            g.unallocated_use.size == 0)
          g.unallocated_use << "node " << user.name << " uses buffer " << b.name;
    }
    if (g.unallocated_use.size != 0) return;
  }
}

/// Per alloc node, in declaration order: no second alloc of its buffer, and
/// every node reading the buffer (its free included) ordered after the alloc
/// and before the free.
constexpr bool check_lifetimes(slice<const item_info> items, const shape_view& g,
                               const shape_scratch& s) noexcept {
  const std::size_t N = g.names.size();
  const item_info* const item = items.data();
  const std::uint32_t* const position = g.position.data();
  const std::uint32_t* const order = g.order.data();
  const std::uint32_t* const dep_begin = g.dep_begin.data();
  const std::uint32_t* const deps = g.deps.data();
  bool* const after_alloc = s.after_alloc.data();
  bool* const before_free = s.before_free.data();
  for (std::uint32_t a = 0; a < N; ++a) {
    const item_info& alloc = item[position[a]];
    if (alloc.allocates.empty()) continue;
    std::uint32_t free_node = no_index;
    for (std::uint32_t b = 0; b < N; ++b) {
      const item_info& other = item[position[b]];
      if (b != a && other.allocates == alloc.allocates) {
        g.problem = shape_problem::buffer_allocated_twice;
        g.message << alloc.allocates << " (nodes " << alloc.name << " and " << other.name << ")";
        return true;
      }
      if (other.frees == alloc.allocates) free_node = b;
    }
    // Forward reach from the alloc, backward reach from the free.
    for (std::size_t k = 0; k < N; ++k) after_alloc[k] = before_free[k] = false;
    for (std::size_t k = 0; k < N; ++k) {
      const std::uint32_t v = order[k];
      if (v == a) after_alloc[v] = true;
      for (std::uint32_t d = dep_begin[v]; d < dep_begin[v + 1]; ++d)
        after_alloc[v] = after_alloc[v] || after_alloc[deps[d]];
    }
    for (std::size_t k = N; k-- > 0;) {
      const std::uint32_t v = order[k];
      if (v == free_node) before_free[v] = true;
      if (before_free[v])
        for (std::uint32_t d = dep_begin[v]; d < dep_begin[v + 1]; ++d) before_free[deps[d]] = true;
    }
    const std::uint64_t buffer_hash = name_hash(alloc.allocates);
    for (std::uint32_t u = 0; u < N; ++u) {
      if (u == a) continue;
      const item_info& user = item[position[u]];
      bool uses = false;
      for (const ref_info& ref : user.refs)
        uses |=
            ref.kind == ref_kind::buffer && ref.hash == buffer_hash && ref.name == alloc.allocates;
      if (!uses) continue;
      const bool ordered_after = after_alloc[u];
      const bool ordered_before = free_node == no_index || u == free_node || before_free[u];
      if (!ordered_after || !ordered_before) {
        g.problem = shape_problem::buffer_outside_lifetime;
        g.message << "node " << user.name << " uses buffer " << alloc.allocates
                  << " but is not ordered "
                  << (ordered_after ? "before its free node " : "after its alloc node ")
                  << (ordered_after ? g.names.data()[free_node] : alloc.name);
        return true;
      }
    }
  }
  return false;
}

/// Whether node `to` follows node `from` (or is it): a backward search from
/// `to` that goes no lower in the order than `from`. `visited` holds stamps
/// (stamp: fresh for this search), `stack` room for every node.
constexpr bool reaches(const shape_view& g, const std::uint32_t* rank, std::uint32_t* visited,
                       std::uint32_t stamp, std::uint32_t* stack, std::uint32_t from,
                       std::uint32_t to) noexcept {
  if (from == to) return true;
  const std::uint32_t* const dep_begin = g.dep_begin.data();
  const std::uint32_t* const deps = g.deps.data();
  std::size_t top = 0;
  stack[top++] = to;
  visited[to] = stamp;
  while (top > 0) {
    const std::uint32_t v = stack[--top];
    for (std::uint32_t k = dep_begin[v]; k < dep_begin[v + 1]; ++k) {
      const std::uint32_t u = deps[k];
      if (u == from) return true;
      if (visited[u] == stamp || rank[u] < rank[from]) continue;
      visited[u] = stamp;
      stack[top++] = u;
    }
  }
  return false;
}

/// Records the race between nodes a and b on memory `memory` (a reference
/// of the graph), named in declaration order as check() names them.
constexpr void record_race(const shape_view& g, std::uint32_t a, access_mode a_mode,
                           std::size_t a_extent, std::uint32_t b, access_mode b_mode,
                           std::size_t b_extent, const ref_info& memory) noexcept {
  if (b < a) {
    const std::uint32_t node = a;
    a = b;
    b = node;
    const access_mode mode = a_mode;
    a_mode = b_mode;
    b_mode = mode;
    const std::size_t extent = a_extent;
    a_extent = b_extent;
    b_extent = extent;
  }
  const std::string_view* const names = g.names.data();
  g.problem = shape_problem::race;
  g.race_first = names[a];
  g.race_second = names[b];
  g.race_memory = memory.name;
  g.message << "'" << names[a] << "' " << access_verb(a_mode) << " ";
  const std::size_t extent = a_extent < b_extent ? a_extent : b_extent;
  if (extent != to_the_end) g.message << "bytes [0, " << extent << ") of ";
  g.message << (memory.kind == ref_kind::buffer ? "buffer '" : "'") << memory.name << "' while '"
            << names[b] << "' " << access_verb(b_mode) << " it, and no path orders them";
}

/// Races (cudag/memory_access.hpp): two nodes touching one memory, one of
/// them writing (or one updating concurrently and the other reading), with
/// no path between them. A node's bodies and child graph touch memory
/// through it. check()'s walk, over the nodes in topological order: each
/// access asked to follow only what transitivity leaves (the last write,
/// and the reads or concurrent updates since it), so that a chain of N
/// writers costs N searches of one step, not N * N; no sorting.
constexpr bool check_races(slice<const item_info> items, const shape_view& g,
                           const shape_scratch& s) noexcept {
  const std::size_t Q = s.memory_walks.size();
  if (Q == 0) return false;
  const std::size_t N = g.names.size(), P = g.params.size();
  const item_info* const item = items.data();
  memory_walk* const walks = s.memory_walks.data();
  memory_access* const accesses = s.accesses.data();
  // Free after the sort: ranks, search stamps and stack.
  std::uint32_t* const rank = s.step_of.data();
  std::uint32_t* const visited = s.indegree.data();
  std::uint32_t* const stack = s.walk.data();
  for (std::uint32_t k = 0; k < N; ++k) rank[g.order.data()[k]] = k;
  std::uint32_t stamp = 0, used = 0;
  const auto memory_ref = [&](std::uint32_t q) -> const ref_info& {
    return q < P ? g.params.data()[q] : g.buffers.data()[q - P];
  };
  // `later` follows `earlier`, or the race is recorded.
  const auto require = [&](std::uint32_t earlier, std::uint32_t later) {
    const memory_access& a = accesses[earlier];
    const memory_access& b = accesses[later];
    if (reaches(g, rank, visited, ++stamp, stack, a.node, b.node)) return true;
    record_race(g, a.node, a.mode, a.extent, b.node, b.mode, b.extent, memory_ref(a.memory));
    return false;
  };
  const auto require_all = [&](std::uint32_t head, std::uint32_t later) {
    for (std::uint32_t e = head; e != no_index; e = accesses[e].next)
      if (!require(e, later)) return false;
    return true;
  };
  const auto append = [&](std::uint32_t& head, std::uint32_t& tail, std::uint32_t e) {
    if (head == no_index)
      head = e;
    else
      accesses[tail].next = e;
    tail = e;
  };
  for (std::uint32_t k = 0; k < N; ++k) {
    const std::uint32_t v = g.order.data()[k];
    // The node's accesses, one per memory.
    const std::uint32_t first = used;
    for (const ref_info& ref : item[g.position.data()[v]].refs) {
      if (!ref.touches_memory || ref.extent_bytes == 0) continue;
      // A view of a buffer starts at an offset that is a value: with a
      // declared extent, whether it meets another view depends on it, and
      // check() judges it from the spec. Without one it reaches to the
      // end, and meets every other view that does.
      if (ref.kind == ref_kind::buffer && ref.extent_bytes != to_the_end) continue;
      const std::uint32_t q =
          ref.kind == ref_kind::param
              ? find_hashed(g.param_lookup.data(), P, ref.hash)
              : std::uint32_t(P) + find_hashed(g.buffer_lookup.data(), g.buffer_lookup.size(), ref.hash);
      std::uint32_t e = first;
      while (e < used && accesses[e].memory != q) ++e;
      if (e < used) {
        accesses[e].mode = combined_access(accesses[e].mode, ref.access);
        if (ref.extent_bytes > accesses[e].extent) accesses[e].extent = ref.extent_bytes;
        continue;
      }
      accesses[used++] = {v, q, no_index, ref.access, ref.extent_bytes};
    }
    for (std::uint32_t x = first; x < used; ++x) {
      memory_walk& m = walks[accesses[x].memory];
      if (m.last_write != no_index && !require(m.last_write, x)) return true;
      switch (accesses[x].mode) {
        case access_mode::read_write:
          if (!require_all(m.reads_head, x) || !require_all(m.concurrent_head, x)) return true;
          m = {x, no_index, no_index, no_index, no_index};
          break;
        case access_mode::read:
          if (!require_all(m.concurrent_head, x)) return true;
          append(m.reads_head, m.reads_tail, x);
          break;
        case access_mode::concurrent:
          if (!require_all(m.reads_head, x)) return true;
          append(m.concurrent_head, m.concurrent_tail, x);
          break;
      }
    }
  }
  return false;
}

/// Every rule, in order, over one graph's items: the view receives the
/// graph's shape and its first problem (g.problem, g.message), plus the
/// problems only a top-level graph can judge (g.orphan_free,
/// g.untested_condition, g.unallocated_use). The view and the scratch must be zeroed and sized
/// as shape_sizes says.
constexpr void shape_rules(slice<const item_info> items, const shape_view& g,
                           const shape_scratch& s) noexcept {
  const std::size_t N = g.names.size();
  // ------------------------------------------------ nodes and named values --
  if (index_nodes(items, g)) return;
  name_tables(g);
  // ------------------------------------------------------- duplicate names --
  if (check_duplicate_names(g)) return;
  // ------------------------------------- one conditional node per condition --
  if (check_condition_tests(g, s)) return;
  // ---------------------------------------------------------------- edges --
  if (resolve_edges(items, g, s)) return;
  // ----------------------------------------- parameters of one type only --
  if (check_parameter_types(g)) return;
  // --------------------------- dependency lists, Kahn's topological sort --
  if (group_dependencies(g, s)) return;
  const std::size_t tail = order_nodes(g, s);
  // ------------------------------------------------------------ cycle path --
  if (tail < N) {
    describe_cycle(g, s);
    return;
  }
  // -------------------------------- typed edges: between kernels, into one
  // -------------------------------- that synchronizes its grid dependencies
  if (check_edge_kinds(items, g)) return;
  // --------------------------------------------- frees: once, of an alloc --
  if (check_frees(items, g)) return;
  // --------------------------- every condition tested by a conditional node --
  find_untested_condition(items, g);
  find_unallocated_use(items, g);
  // ------------------------------------------------------- buffer lifetimes --
  if (check_lifetimes(items, g, s)) return;
  // ------------------------------------------------------------------ races --
  (void)check_races(items, g, s);
}

template <shape_sizes S, std::size_t A>
[[nodiscard]] consteval auto analyze_shape(const std::array<item_info, A>& items) {
  constexpr std::size_t K = S.typed_edges != 0 ? S.edges : 0;
  graph_shape<S.nodes, S.edges, S.refs, S.params, S.buffers, S.conditions, S.condition_tests, K> g{};
  constexpr std::size_t Q = S.race_refs != 0 ? S.params + S.buffers : 0;
  shape_scratch_arrays<S.nodes, S.edges, S.condition_tests, K, S.race_refs, Q> scratch{};
  shape_rules(whole(items), view_of(g), scratch.spans());
  return g;
}

}  // namespace cudag::dsl::detail
