#pragma once
// Edges between node names, as empty items (no storage, no code to lower).
// "a -> b" means a runs before b.
//
//   edge<"a", "b">              a -> b
//   edge<"a", "b", edge_kind::programmatic>
//                               a -> b of another kind than full (CUDA's
//                               programmatic dependent launch): kernel nodes
//                               only, into a kernel marked with
//                               synchronizes_grid_dependencies(...)
//   chain<"a", "b", "c">        a -> b -> c
//   fan_out<"a", "b", "c">      a -> b, a -> c
//   fan_in<"d", "b", "c">       b -> d, c -> d
//   edges<"a -> b -> d", "a -> c -> d">
//                               paths written as arrows, any number per item:
//                               a large graph's edges as one item (each item
//                               adds to the graph type, and so to compile time)
//   edges_from<table>           the pairs of a constexpr name_pair array,
//                               e.g. constexpr name_pair table[] = {{"a", "b"}};
//                               the type names only the table: the cheapest
//                               to compile for large graphs
#include <array>
#include <span>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"

namespace cudag::dsl {

/// Never defined: the compile error for a path that is not "a -> b [-> c ...]".
template <fixed_string Path>
struct malformed_edge_path;

namespace detail {

/// An edge; of another kind than full (programmatic, launch_completion)
/// where Kind says so. (One template with the kind as an argument: choosing
/// between two templates by the kind cost g++ 6 MiB more on 1,000 full edges.)
template <fixed_string From, fixed_string To, edge_kind Kind>
struct edge_t {
  static constexpr std::array<name_pair, 1> pairs{name_pair{From.view(), To.view()}};
  static constexpr item_info info = edge_item_info(pairs, Kind);
  using body_type = edge_body;
  edge_body body;
};

template <fixed_string... Names>
struct chain_t {
  static_assert(sizeof...(Names) >= 2, "cudag: a chain joins at least two nodes");
  static constexpr std::array<std::string_view, sizeof...(Names)> names{Names.view()...};
  static constexpr auto pairs = [] {
    std::array<name_pair, sizeof...(Names) - 1> out{};
    for (std::size_t i = 0; i + 1 < names.size(); ++i) out[i] = {names[i], names[i + 1]};
    return out;
  }();
  static constexpr item_info info = edge_item_info(pairs);
  using body_type = edge_body;
  edge_body body;
};

template <fixed_string From, fixed_string... To>
struct fan_out_t {
  static constexpr std::array<name_pair, sizeof...(To)> pairs{name_pair{From.view(), To.view()}...};
  static constexpr item_info info = edge_item_info(pairs);
  using body_type = edge_body;
  edge_body body;
};

template <fixed_string To, fixed_string... From>
struct fan_in_t {
  static constexpr std::array<name_pair, sizeof...(From)> pairs{name_pair{From.view(), To.view()}...};
  static constexpr item_info info = edge_item_info(pairs);
  using body_type = edge_body;
  edge_body body;
};

// ----------------------------------------------------------- arrow paths --
// Index arithmetic only: GCC 12 refuses string_view::find in constant
// expressions when built with -fsanitize=undefined.
[[nodiscard]] constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n'; }

/// The names of path "a -> b -> c", in order; `out` may be null to count.
/// Returns the number of names, or 0 when a name is empty or there is no arrow.
constexpr std::size_t split_arrow_path(std::string_view path, std::string_view* out) noexcept {
  std::size_t names = 0, start = 0;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    const bool arrow = i + 1 < path.size() && path[i] == '-' && path[i + 1] == '>';
    if (!arrow && i != path.size()) continue;
    std::size_t first = start, last = i;
    while (first < last && is_blank(path[first])) ++first;
    while (last > first && is_blank(path[last - 1])) --last;
    if (first == last) return 0;
    if (out) out[names] = path.substr(first, last - first);
    ++names;
    start = i + 2;
    ++i;  // past the '>'
  }
  return names >= 2 ? names : 0;
}

[[nodiscard]] constexpr std::size_t edges_in_path(std::string_view path) noexcept {
  const std::size_t names = split_arrow_path(path, nullptr);
  return names > 0 ? names - 1 : 0;
}

/// An upper bound on the names in any of the paths (a name takes at least
/// one character and an arrow two).
template <class... Size>
consteval std::size_t path_capacity(Size... sizes) noexcept {
  std::size_t most = 1;
  ((most = sizes / 3 + 1 > most ? sizes / 3 + 1 : most), ...);
  return most;
}

template <fixed_string Path>
consteval bool check_arrow_path() {
  if constexpr (split_arrow_path(Path.view(), nullptr) == 0)
    return sizeof(malformed_edge_path<Path>) == 0;
  return true;
}

template <fixed_string... Paths>
struct edges_t {
  static_assert(sizeof...(Paths) >= 1, "cudag: edges<> takes at least one path");
  static_assert((check_arrow_path<Paths>() && ...));
  static constexpr std::size_t count = (std::size_t(0) + ... + edges_in_path(Paths.view()));
  static constexpr auto pairs = [] {
    std::array<name_pair, count> out{};
    std::size_t k = 0;
    for (std::string_view path : std::array<std::string_view, sizeof...(Paths)>{Paths.view()...}) {
      std::array<std::string_view, path_capacity(Paths.size()...)> names{};
      const std::size_t n = split_arrow_path(path, names.data());
      for (std::size_t i = 0; i + 1 < n; ++i) out[k++] = {names[i], names[i + 1]};
    }
    return out;
  }();
  static constexpr item_info info = edge_item_info(pairs);
  using body_type = edge_body;
  edge_body body;
};

/// Edges listed in a constexpr array of name_pair (static storage): the
/// graph's type holds a reference to the table, not the names themselves.
template <const auto& Table>
struct edge_table_t {
  static constexpr std::span<const name_pair> pairs{Table};
  static constexpr item_info info = edge_item_info(pairs);
  using body_type = edge_body;
  edge_body body;
};

}  // namespace detail

/// How an edge orders its nodes (cudag::edge_kind): full, programmatic or
/// launch_completion.
using cudag::edge_kind;

template <fixed_string From, fixed_string To, edge_kind Kind = edge_kind::full>
inline constexpr detail::edge_t<From, To, Kind> edge{};
template <fixed_string... Names>
inline constexpr detail::chain_t<Names...> chain{};
template <fixed_string From, fixed_string... To>
inline constexpr detail::fan_out_t<From, To...> fan_out{};
template <fixed_string To, fixed_string... From>
inline constexpr detail::fan_in_t<To, From...> fan_in{};
template <fixed_string... Paths>
inline constexpr detail::edges_t<Paths...> edges{};
template <const auto& Table>
inline constexpr detail::edge_table_t<Table> edges_from{};

}  // namespace cudag::dsl
