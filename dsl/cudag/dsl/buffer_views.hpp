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
#include <string>
#include <string_view>
#include <type_traits>

#include "cudag/buffer_bounds.hpp"
#include "cudag/error.hpp"
#include "cudag/spec.hpp"
#include "cudag/dsl/chunked_tuple.hpp"
#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/node_tuple.hpp"

namespace cudag::dsl {

/// An operand of node Node reaches past the end of buffer Buffer. Not
/// constexpr: in a constant declaration, calling it is the compile error, its
/// template arguments naming the node and the buffer; at run time it throws
/// cudag::error with check()'s text, naming the node.
/// `path`: the node at fault, Node itself or a node nested in it.
template <fixed_string Node, fixed_string Buffer>
[[noreturn]] void buffer_view_past_its_allocation(node_kind kind, std::string_view path,
                                                  view_access access, std::size_t offset,
                                                  std::size_t extent, std::size_t size,
                                                  std::string_view alloc_node) {
  throw cudag::error(detail::view_past_allocation(kind_name(kind), path, Buffer.view(), access,
                                                  offset, extent, size, alloc_node),
                     cudaSuccess, {}, std::string(path));
}

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
    (allocates_buffer<typename Items::body_type>() || ...) &&
    (views_buffers<typename Items::body_type>() || ...);

struct allocation_seen {
  std::string_view buffer;
  std::size_t bytes = 0;
  std::string_view node;
};

template <class... Items>
struct graph_t;

// The walk over every buffer view of a graph, nested graphs included:
// f(buffer type, byte offset, bytes spanned, access, node kind, node path).
// (Functions of one item or body each: nvcc does not expand a pack inside a
// lambda's lambda.)
template <class... Items, class F>
constexpr void for_each_view_in(const graph_t<Items...>& g, F& f);

template <class Body, class F>
constexpr void views_of_body(const Body& body, std::string_view name, F& f) {
  if constexpr (Body::nests_graphs) {
    body.for_each_nested_graph([&](const auto& inner, std::string_view suffix) {
      auto prefixed = [&](auto buffer, std::size_t offset, std::size_t extent, view_access access,
                          node_kind kind, std::string_view path) {
        text_buffer<240> full;
        full << name << suffix << path;
        f(buffer, offset, extent, access, kind, full.view());
      };
      for_each_view_in(inner, prefixed);
    });
  } else {
    body.for_each_buffer_view(
        [&](auto buffer, std::size_t offset, std::size_t extent, view_access access) {
          f(buffer, offset, extent, access, Body::kind, name);
        });
  }
}

template <class Item, std::size_t I, class G, class F>
constexpr void views_of_item(const G& g, F& f) {
  if constexpr (views_buffers<typename Item::body_type>())
    views_of_body(get<I>(g.items), G::items_info[I].name, f);
}

template <class... Items, class F, std::size_t... I>
constexpr void views_in_items(const graph_t<Items...>& g, F& f, std::index_sequence<I...>) {
  (views_of_item<Items, I>(g, f), ...);
}

template <class... Items, class F>
constexpr void for_each_view_in(const graph_t<Items...>& g, F& f) {
  views_in_items(g, f, std::index_sequence_for<Items...>{});
}

/// Checks item's buffer views, its nested graphs' included, against the
/// graph's allocations.
template <class Item, std::size_t Count>
constexpr void check_item_views(const Item& item,
                                const std::array<allocation_seen, Count>& allocations) {
  auto check = [&](auto buffer, std::size_t offset, std::size_t extent, view_access access,
                   node_kind kind, std::string_view path) {
    using B = typename decltype(buffer)::type;
    for (const allocation_seen& a : allocations)
      if (a.buffer == B::name.view() && !detail::view_within(offset, extent, a.bytes))
        buffer_view_past_its_allocation<Item::name, B::name>(kind, path, access, offset, extent,
                                                             a.bytes, a.node);
  };
  views_of_body(item.body, Item::name.view(), check);
}

template <class... Items>
constexpr void check_buffer_views(const Items&... items) {
  constexpr std::size_t count = (std::size_t{allocates_buffer<typename Items::body_type>()} + ...);
  std::array<allocation_seen, count> allocations{};
  std::size_t k = 0;
  (
      [&] {
        if constexpr (allocates_buffer<typename Items::body_type>())
          allocations[k++] = {Items::body_type::allocates, items.body.bytes(), Items::name.view()};
      }(),
      ...);
  (
      [&] {
        if constexpr (views_buffers<typename Items::body_type>()) check_item_views(items, allocations);
      }(),
      ...);
}

}  // namespace cudag::dsl
