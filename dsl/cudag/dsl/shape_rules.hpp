#pragma once
// The DSL's shape rules at run time. shape.hpp's rules are constexpr
// functions over slices: the compiler runs them over a graph's std::arrays
// (G::shape), and check_shape() runs the same functions over vectors, for a
// graph described as plain data. Its verdict is the compile error the DSL
// would give for that graph: the error type's name and its text (the
// fixed_string the type is named with).
//
//   shape_description d;
//   d.nodes.push_back({.name = "a", .kind = node_kind::kernel});
//   d.nodes.push_back({.name = "b", .kind = node_kind::kernel});
//   d.edges = {{"a", "b"}, {"b", "a"}};
//   check_shape(d);   // {cycle, "cycle_through", "a -> b -> a"}
//
// What a DSL graph refuses elsewhere (argument types in the node factories,
// kinds forbidden in conditional bodies, a switch without cases) is not
// described here: only the shape.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/dsl/shape.hpp"

namespace cudag::dsl::detail {

// ----------------------------------------------------------- description --
/// A parameter, buffer or condition a node reads. `type`: a parameter's type
/// (type_id_of<T>); a parameter read with two types is a conflict.
struct shape_reference {
  ref_kind kind = ref_kind::param;
  std::string name;
  type_id type = nullptr;
  /// A pointer the node touches memory through, as the DSL's node would
  /// (by the parameter's type, the node's kind or a with_access()
  /// declaration), how, and how many bytes.
  bool touches_memory = false;
  access_mode access = access_mode::read_write;
  std::size_t extent_bytes = to_the_end;
};

/// A conditional node inside a node's bodies or child graph, and the
/// condition it tests; the path names it from the graph holding the node, as
/// the DSL and check() do ("loop/again", "pick[1]/inner").
struct shape_nested_test {
  std::string condition;
  std::string node_path;
};

struct shape_node {
  std::string name;
  node_kind kind = node_kind::kernel;
  /// Everything the node reads, its bodies and child graph included, in
  /// order. The references implied by `allocates`, `frees` and `tests` are
  /// added in front when missing, as the DSL's nodes list them.
  std::vector<shape_reference> refs;
  std::string allocates;  ///< mem_alloc: the buffer
  std::string frees;      ///< mem_free: the buffer
  std::string tests;      ///< conditional: the condition
  std::vector<shape_nested_test> nested_tests;
  /// Kernel: marked with synchronizes_grid_dependencies().
  bool synchronizes_grid_dependencies = false;
};

/// An edge: `from` runs before `to`, of kind `kind`.
struct shape_edge {
  std::string from;
  std::string to;
  edge_kind kind = edge_kind::full;
};

/// A graph: nodes in declaration order, edges in declaration order.
struct shape_description {
  std::vector<shape_node> nodes;
  std::vector<shape_edge> edges;
};

// --------------------------------------------------------------- verdict --
/// The compile error the DSL gives for a graph, or none.
struct shape_verdict {
  shape_problem problem = shape_problem::none;  ///< none for the top-level problems
  std::string_view error;  ///< the error type: "cycle_through"; empty when the graph fits
  std::string message;     ///< its text: "a -> b -> a"

  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

/// The name of the error type graph.hpp reports a problem with.
[[nodiscard]] constexpr std::string_view shape_error_name(shape_problem problem) noexcept {
  switch (problem) {
    case shape_problem::none:
      return "";
    case shape_problem::duplicate_node:
      return "duplicate_node_name";
    case shape_problem::unknown_node_in_edge:
      return "unknown_node_in_edge";
    case shape_problem::parameter_type_conflict:
      return "parameter_declared_with_two_types";
    case shape_problem::cycle:
      return "cycle_through";
    case shape_problem::buffer_allocated_twice:
      return "buffer_allocated_twice";
    case shape_problem::buffer_outside_lifetime:
      return "buffer_used_outside_its_lifetime";
    case shape_problem::condition_tested_twice:
      return "condition_tested_by_two_conditional_nodes";
    case shape_problem::empty_node_name:
      return "node_with_empty_name";
    case shape_problem::buffer_freed_twice:
      return "buffer_freed_twice";
    case shape_problem::edge_of_two_kinds:
      return "edge_declared_with_two_kinds";
    case shape_problem::typed_edge_not_between_kernels:
      return "edge_kind_needs_kernel_nodes";
    case shape_problem::typed_edge_into_unsynchronized_kernel:
      return "kernel_does_not_synchronize_grid_dependencies";
    case shape_problem::race:
      return "race";
  }
  return "?";
}

// ----------------------------------------------------------- run-time shape --
/// A graph_shape whose arrays are vectors: what shape_rules() computes for
/// items known at run time.
struct runtime_shape {
  std::vector<std::string_view> names;
  std::vector<std::uint32_t> position;
  std::vector<node_kind> kinds;
  std::vector<std::uint64_t> owned_condition;
  std::vector<hashed_index> node_lookup;
  std::vector<std::uint32_t> dep_begin;
  std::vector<std::uint32_t> deps;
  std::vector<edge_kind> dep_kinds;
  std::size_t max_deps = 0;
  std::vector<std::uint32_t> order;
  std::vector<ref_info> all_refs;
  std::vector<ref_info> params;
  std::vector<std::size_t> param_offsets;
  std::size_t param_bytes = 0;
  std::vector<hashed_index> param_lookup;
  std::vector<ref_info> buffers;
  std::vector<hashed_index> buffer_lookup;
  std::vector<ref_info> conditions;
  std::vector<hashed_index> condition_lookup;
  std::vector<condition_test> condition_tests;
  message_buffer forbidden_path;
  node_kind forbidden_kind = node_kind::empty;
  shape_problem problem = shape_problem::none;
  message_buffer message;
  std::string_view orphan_free_buffer;
  message_buffer orphan_free;
  message_buffer untested_condition;
  message_buffer unallocated_use;
  std::string_view race_first, race_second, race_memory;

  explicit runtime_shape(const shape_sizes& s)
      : names(s.nodes),
        position(s.nodes),
        kinds(s.nodes),
        owned_condition(s.nodes),
        node_lookup(s.nodes),
        dep_begin(s.nodes + 1),
        deps(s.edges),
        dep_kinds(s.typed_edges != 0 ? s.edges : 0),
        order(s.nodes),
        all_refs(s.refs),
        params(s.params),
        param_offsets(s.params),
        param_lookup(s.params),
        buffers(s.buffers),
        buffer_lookup(s.buffers),
        conditions(s.conditions),
        condition_lookup(s.conditions),
        condition_tests(s.condition_tests) {}
};

/// The sizes analyze_shape's template arguments carry, for items known at
/// run time (measure_items, then measure_shape).
[[nodiscard]] inline shape_sizes measure_items_at_run_time(std::span<const item_info> items) {
  const slice<const item_info> in{items.data(), items.size()};
  shape_sizes s = count_items(in);
  std::vector<hashed_index> sorted(s.refs);
  std::vector<std::string_view> names(s.refs);
  const slice<hashed_index> sorted_refs{sorted.data(), s.refs};
  const slice<std::string_view> ref_names{names.data(), s.refs};
  s.params = count_distinct(in, ref_kind::param, sorted_refs, ref_names);
  s.buffers = count_distinct(in, ref_kind::buffer, sorted_refs, ref_names);
  s.conditions = count_distinct(in, ref_kind::condition, sorted_refs, ref_names);
  return s;
}

/// analyze_shape at run time: the same rules over vectors. The shape views
/// the items' names: they must outlive it.
[[nodiscard]] inline runtime_shape analyze_shape_at_run_time(std::span<const item_info> items) {
  const shape_sizes s = measure_items_at_run_time(items);
  const std::size_t N = s.nodes, E = s.edges;
  runtime_shape shape(s);
  // Zeroed scratch: four arrays per edge, five of nodes + 1 and three of
  // nodes, two of flags, one per condition test.
  std::vector<std::uint32_t> per_edge(4 * E), per_node(5 * (N + 1) + 3 * N);
  const std::unique_ptr<bool[]> flags(new bool[2 * N + 1]());
  std::vector<hashed_index> by_condition(s.condition_tests);
  const std::size_t K = s.typed_edges != 0 ? E : 0;
  std::vector<edge_kind> kinds(2 * K);
  std::vector<memory_walk> memory_walks(s.race_refs != 0 ? s.params + s.buffers : 0);
  std::vector<memory_access> accesses(s.race_refs);
  std::uint32_t* e = per_edge.data();
  std::uint32_t* n = per_node.data();
  const auto take = [](std::uint32_t*& at, std::size_t size) {
    const slice<std::uint32_t> out{at, size};
    at += size;
    return out;
  };
  shape_scratch scratch;
  scratch.from = take(e, E);
  scratch.to = take(e, E);
  scratch.grouped = take(e, E);
  scratch.succ = take(e, E);
  scratch.count = take(n, N + 1);
  scratch.fill = take(n, N + 1);
  scratch.succ_begin = take(n, N + 1);
  scratch.succ_fill = take(n, N + 1);
  scratch.walk = take(n, N + 1);
  scratch.indegree = take(n, N);
  scratch.ready = take(n, N);
  scratch.step_of = take(n, N);
  scratch.after_alloc = {flags.get(), N};
  scratch.before_free = {flags.get() + N, N};
  scratch.by_condition = {by_condition.data(), by_condition.size()};
  scratch.kind = {kinds.data(), K};
  scratch.grouped_kind = {kinds.data() + K, K};
  scratch.memory_walks = whole(memory_walks);
  scratch.accesses = whole(accesses);
  shape_rules({items.data(), items.size()}, view_of(shape), scratch);
  return shape;
}

/// Whether graph.hpp's top_level_error reports shape.unallocated_use (a
/// buffer read by a node while no node allocates it) as
/// buffer_used_but_never_allocated<"node step uses buffer tmp">: it does.
inline constexpr bool reports_unallocated_use = true;

/// The first problem of a shape as graph.hpp reports it: the declaration's
/// problem (graph()); then, for a top-level graph, a free of a buffer no node
/// allocates and a condition no conditional node tests (top_level_error,
/// at lower(), instantiate() and to_spec()).
[[nodiscard]] inline shape_verdict verdict_of(const runtime_shape& shape, bool top_level = true) {
  shape_verdict v;
  if (shape.problem != shape_problem::none) {
    v.problem = shape.problem;
    v.error = shape_error_name(shape.problem);
    v.message = std::string(shape.message.view());
  } else if (top_level && shape.orphan_free.size != 0) {
    v.error = "buffer_freed_but_never_allocated";
    v.message = std::string(shape.orphan_free.view());
  } else if (top_level && reports_unallocated_use && shape.unallocated_use.size != 0) {
    v.error = "buffer_used_but_never_allocated";
    v.message = std::string(shape.unallocated_use.view());
  } else if (top_level && shape.untested_condition.size != 0) {
    v.error = "condition_tested_by_no_conditional_node";
    v.message = std::string(shape.untested_condition.view());
  }
  return v;
}

/// The DSL's items for a description (views into it: it must outlive them).
struct described_items {
  std::vector<item_info> items;
  std::vector<std::vector<ref_info>> refs;         ///< per node
  std::vector<std::vector<condition_test>> tests;  ///< per node
  std::vector<name_pair> edges;

  explicit described_items(shape_description&&) = delete;  // would outlive the names it views
  explicit described_items(const shape_description& d) {
    const std::size_t N = d.nodes.size();
    refs.resize(N);
    tests.resize(N);
    items.reserve(N + 1);
    for (std::size_t i = 0; i < N; ++i) {
      const shape_node& node = d.nodes[i];
      const auto lists = [&node](ref_kind kind, const std::string& name) {
        for (const shape_reference& r : node.refs)
          if (r.kind == kind && r.name == name) return true;
        return false;
      };
      const auto ref = [](ref_kind kind, std::string_view name, type_id type) {
        ref_info r;
        r.kind = kind;
        r.hash = name_hash(name);
        r.name = name;
        r.type = type;
        return r;
      };
      const auto described = [&ref](const shape_reference& d) {
        ref_info r = ref(d.kind, d.name, d.type);
        r.touches_memory = d.touches_memory;
        r.access = d.access;
        r.extent_bytes = d.extent_bytes;
        return r;
      };
      std::vector<ref_info>& out = refs[i];
      if (!node.allocates.empty() && !lists(ref_kind::buffer, node.allocates))
        out.push_back(ref(ref_kind::buffer, node.allocates, nullptr));
      if (!node.frees.empty() && !lists(ref_kind::buffer, node.frees))
        out.push_back(ref(ref_kind::buffer, node.frees, nullptr));
      if (!node.tests.empty() && !lists(ref_kind::condition, node.tests))
        out.push_back(ref(ref_kind::condition, node.tests, nullptr));
      for (const shape_reference& r : node.refs) out.push_back(described(r));

      std::vector<condition_test>& t = tests[i];
      const auto test = [](std::string_view condition, std::string_view path) {
        condition_test c;
        c.hash = name_hash(condition);
        c.condition = condition;
        c.node_path << path;
        return c;
      };
      if (!node.tests.empty()) t.push_back(test(node.tests, node.name));
      for (const shape_nested_test& n : node.nested_tests)
        t.push_back(test(n.condition, n.node_path));

      item_info info;
      info.is_node = true;
      info.name = node.name;
      info.kind = node.kind;
      info.refs = out;
      info.allocates = node.allocates;
      info.frees = node.frees;
      info.owns_condition = node.tests;
      info.condition_tests = t;
      info.synchronizes_grid_dependencies = node.synchronizes_grid_dependencies;
      items.push_back(info);
    }
    // One edge item per run of edges of one kind, in order.
    edges.reserve(d.edges.size());
    for (const shape_edge& e : d.edges) edges.push_back({e.from, e.to});
    const std::span<const name_pair> all(edges);
    for (std::size_t first = 0, last = 0; first < edges.size(); first = last) {
      while (last < edges.size() && d.edges[last].kind == d.edges[first].kind) ++last;
      items.push_back(edge_item_info(all.subspan(first, last - first), d.edges[first].kind));
    }
  }
};

/// The compile error a DSL declaration of the described graph gives (none:
/// it compiles). `top_level`: also judge the problems only a top-level
/// graph can (a nested graph's enclosing one may allocate or test them).
[[nodiscard]] inline shape_verdict check_shape(const shape_description& d, bool top_level = true) {
  const described_items described(d);
  return verdict_of(analyze_shape_at_run_time(described.items), top_level);
}

}  // namespace cudag::dsl::detail
