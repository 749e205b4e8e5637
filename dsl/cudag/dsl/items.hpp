#pragma once
// What each item of a graph declaration (a node or a group of edges) tells
// the shape checker, as plain constexpr data: names, edges, the parameters,
// buffers and conditions it refers to. The checker works on arrays of these,
// never on the items' types, so the graph algorithms cost no template work.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/memory_access.hpp"
#include "cudag/spec.hpp"

namespace cudag::dsl {

/// An edge as a pair of node names: `constexpr name_pair table[] = {{"a", "b"}}`
/// for edges_from<table>.
struct name_pair {
  std::string_view from;
  std::string_view to;
};

namespace detail {

/// A distinct address per type: compile-time type identity that can be
/// compared for equality inside constant expressions.
template <class T>
struct type_key {
  static constexpr char id = 0;
};
using type_id = const char*;
template <class T>
inline constexpr type_id type_id_of = &type_key<T>::id;

enum class ref_kind : unsigned char { param, buffer, condition };

/// One reference from a node to a named parameter, buffer or condition.
struct ref_info {
  ref_kind kind = ref_kind::param;
  std::uint64_t hash = 0;
  std::string_view name;
  type_id type = nullptr;     ///< parameter type, or buffer element type
  std::size_t size = 0;       ///< parameter bytes
  std::size_t align = 1;      ///< parameter alignment
  unsigned default_value = 0; ///< condition
  bool assign_default = true; ///< condition
  type_tag (*runtime_type)() noexcept = nullptr;  ///< parameter: its run-time type tag
  /// A pointer the node touches memory through (cudag/memory_access.hpp's
  /// model: by the argument's type, the node's kind or a declaration), how,
  /// and how many bytes from the pointer (a memcpy's or memset's are values:
  /// to the end, as far as the race rule knows).
  bool touches_memory = false;
  access_mode access = access_mode::read_write;
  std::size_t extent_bytes = to_the_end;
};

/// `r` as a pointer the node touches memory through, in mode `mode`.
[[nodiscard]] constexpr ref_info touching(ref_info r, access_mode mode) noexcept {
  r.touches_memory = true;
  r.access = mode;
  return r;
}

/// The body of an item that is not a node (edges): nothing to lower.
struct edge_body {
  static constexpr bool launch_follows_parameters = false;
};

/// A conditional node and the condition it tests. CUDA binds a conditional
/// handle to exactly one conditional node, so a graph (bodies and child
/// graphs included) may hold at most one test of each condition.
struct condition_test {
  std::uint64_t hash = 0;       ///< of the condition's name
  std::string_view condition;
  text_buffer<120> node_path;   ///< "outer/inner" from the graph holding it
};

/// The compile-time description of one declaration item.
struct item_info {
  bool is_node = false;
  std::string_view name;                 ///< node name
  node_kind kind = node_kind::empty;
  std::span<const name_pair> edges;      ///< edge items
  std::span<const ref_info> refs;        ///< everything the node (and its bodies) reads
  std::string_view allocates;            ///< mem-alloc: buffer name
  std::string_view frees;                ///< mem-free: buffer name
  /// For a child graph holding a node of a kind CUDA forbids in
  /// conditional bodies: that node's path inside it.
  std::string_view forbidden_in_body;
  node_kind forbidden_kind = node_kind::empty;
  bool conditional_safe = true;
  std::string_view owns_condition;       ///< conditional: the condition it tests
  std::span<const condition_test> condition_tests;  ///< its own and its bodies'
  /// Kernel node: it calls cudaGridDependencySynchronize() before reading
  /// what its predecessors wrote, so typed edges may lead into it.
  bool synchronizes_grid_dependencies = false;
  /// Edge items: the kind of every edge of the item.
  edge_kind edges_kind = edge_kind::full;
};

/// The description of an edge group, its edges of kind `kind`.
[[nodiscard]] constexpr item_info edge_item_info(std::span<const name_pair> pairs,
                                                 edge_kind kind = edge_kind::full) noexcept {
  item_info info;
  info.edges = pairs;
  info.edges_kind = kind;
  return info;
}
}  // namespace detail
}  // namespace cudag::dsl
