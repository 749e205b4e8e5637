#pragma once
// The buffer-bounds rule of check() (cudag/buffer_bounds.hpp) where a DSL
// graph is declared: every operand viewing a buffer the graph allocates
// stays inside the allocation. Sizes, offsets and byte counts are values, so
// the rule runs in graph() itself: in a constant declaration the refusal is
// the compile error, at run time it throws. A child graph or conditional
// body is declared before the graph that allocates the buffers it may view,
// so graph() walks the graphs nested in its nodes too, and a nested node is
// named by its path ("stage/copy").
#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "cudag/buffer_bounds.hpp"
#include "cudag/spec.hpp"
#include "cudag/dsl/chunked_tuple.hpp"
#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/node_tuple.hpp"

namespace cudag::dsl {

/// Read where a constant graph's operand of node Node (or of a node nested
/// in it) reaches past the end of the buffer it views: not a constant, so
/// reading it in a constant declaration is the compile error, naming the
/// node. A variable, not a function: nothing is compiled per node name.
template <fixed_string Node>
inline bool buffer_view_past_its_allocation = true;

template <class... Items>
struct graph_t;

namespace detail {

template <class Body>
[[nodiscard]] consteval bool allocates_buffer() {
  if constexpr (requires { Body::allocates; })
    return !Body::allocates.empty();
  else
    return false;  // an edge
}
template <class Body>
[[nodiscard]] consteval bool views_buffers() {
  if constexpr (requires { Body::views_buffers; })
    return Body::views_buffers;
  else
    return false;
}

/// Whether a graph of Items... has anything to check: an allocation and an
/// operand that may view one (a graph without either pays nothing).
template <class... Items>
inline constexpr bool checks_buffer_views =
    any_of_values({false, allocates_buffer<typename Items::body_type>()...}) &&
    any_of_values({false, views_buffers<typename Items::body_type>()...});

struct allocation_seen {
  std::string_view buffer;
  std::size_t bytes = 0;
  std::string_view node;
};

/// The first view past its allocation that a walk over a node met.
struct view_past_end {
  bool found = false;
  node_kind kind = node_kind::kernel;
  text_buffer<240> path;  ///< after the node's own name: "" or "/copy", "[1]/late"
  std::string_view buffer;
  view_access access = view_access::address;
  std::size_t offset = 0, extent = 0, size = 0;
  std::string_view alloc_node;
};

/// Compares each view a walk reports with the graph's allocations and keeps
/// the first past its end. One type for every node: the walks over bodies
/// are instantiated once per body type, not once per node.
struct view_checker {
  const allocation_seen* allocations;
  std::size_t count;
  view_past_end* first;

  constexpr void operator()(std::string_view buffer, std::size_t offset, std::size_t extent,
                            view_access access, node_kind kind, std::string_view path) const {
    if (first->found) return;
    for (std::size_t a = 0; a < count; ++a) {
      const allocation_seen& seen = allocations[a];
      if (seen.buffer != buffer || cudag::detail::view_within(offset, extent, seen.bytes)) continue;
      *first = {true, kind, {}, buffer, access, offset, extent, seen.bytes, seen.node};
      first->path << path;
      return;
    }
  }
};

// The walk over every buffer view of a node, the graphs nested in it
// included: check(buffer, byte offset, bytes spanned, access, node kind,
// path after the node's name). (Functions of one item or body each: nvcc
// does not expand a pack inside a lambda's lambda.)
template <class... Items>
constexpr void views_in_graph(const graph_t<Items...>& g, std::string_view prefix,
                              const view_checker& check);

template <class Body>
constexpr void views_of_body(const Body& body, std::string_view path, const view_checker& check) {
  if constexpr (Body::nests_graphs) {
    body.for_each_nested_graph([&](const auto& inner, std::string_view suffix) {
      text_buffer<240> prefix;
      prefix << path << suffix;
      views_in_graph(inner, prefix.view(), check);
    });
  } else {
    body.for_each_buffer_view(
        [&](std::string_view buffer, std::size_t offset, std::size_t extent, view_access access) {
          check(buffer, offset, extent, access, Body::kind, path);
        });
  }
}

template <class Item, std::size_t I, class G>
constexpr void views_of_item(const G& g, std::string_view prefix, const view_checker& check) {
  if constexpr (views_buffers<typename Item::body_type>()) {
    text_buffer<240> path;
    path << prefix << G::items_info[I].name;
    views_of_body(get<I>(g.items), path.view(), check);
  }
}

template <class... Items, std::size_t... I>
constexpr void views_in_items(const graph_t<Items...>& g, std::string_view prefix,
                              const view_checker& check, std::index_sequence<I...>) {
  // In order, over an array rather than a fold (any_of_values says why).
  const int in_order[] = {0, (views_of_item<Items, I>(g, prefix, check), 0)...};
  (void)in_order;
}

template <class... Items>
constexpr void views_in_graph(const graph_t<Items...>& g, std::string_view prefix,
                              const view_checker& check) {
  views_in_items(g, prefix, check, std::index_sequence_for<Items...>{});
}

// One function per item, called from folds without lambdas: a lambda in
// check_buffer_views<Items...> would be a type named by every item of the
// graph, one per item (quadratic in the graph's size, in compile time).
template <class Item, std::size_t Count>
constexpr void note_allocation(const Item& item, std::array<allocation_seen, Count>& allocations,
                               std::size_t& k) {
  if constexpr (allocates_buffer<typename Item::body_type>())
    allocations[k++] = {Item::body_type::allocates, item.body.bytes(), Item::name.view()};
}

template <class Item>
constexpr void check_item_views(const Item& item, const view_checker& check) {
  if constexpr (views_buffers<typename Item::body_type>()) {
    views_of_body(item.body, std::string_view(), check);
    const view_past_end& first = *check.first;
    if (!first.found) return;
    if (std::is_constant_evaluated() && buffer_view_past_its_allocation<Item::name>)
      return;  // not reached: the read above is the compile error
    text_buffer<240> path;
    path << Item::name.view() << first.path.view();
    cudag::detail::refuse_view_past_allocation(kind_name(first.kind), path.view(), first.buffer,
                                               first.access, first.offset, first.extent,
                                               first.size, first.alloc_node);
  }
}

template <class... Items>
constexpr void check_buffer_views(const Items&... items) {
  constexpr std::size_t count = count_of_values({false, allocates_buffer<typename Items::body_type>()...});
  std::array<allocation_seen, count> allocations{};
  std::size_t k = 0;
  const int noted[] = {0, (note_allocation(items, allocations, k), 0)...};  // in order, no fold
  (void)noted;
  view_past_end first;
  const view_checker check{allocations.data(), count, &first};
  const int checked[] = {0, (check_item_views(items, check), 0)...};
  (void)checked;
}

}  // namespace detail
}  // namespace cudag::dsl
