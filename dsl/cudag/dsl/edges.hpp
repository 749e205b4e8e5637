#pragma once
// Edges between node names, as empty types: only nodes are stored. "a -> b"
// means a runs before b.
//
//   edge<"a", "b">              a -> b
//   chain<"a", "b", "c">        a -> b -> c
//   fan_out<"a", "b", "c">      a -> b, a -> c
//   fan_in<"d", "b", "c">       b -> d, c -> d
#include <array>
#include <span>

#include "cudag/dsl/fixed_string.hpp"
#include "cudag/dsl/items.hpp"

namespace cudag::dsl {

template <fixed_string From, fixed_string To>
struct edge_t {
  static constexpr std::array<name_pair, 1> pairs{name_pair{From.view(), To.view()}};
  static constexpr item_info info = edge_item_info(pairs);
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

template <fixed_string From, fixed_string To>
inline constexpr edge_t<From, To> edge{};
template <fixed_string... Names>
inline constexpr chain_t<Names...> chain{};
template <fixed_string From, fixed_string... To>
inline constexpr fan_out_t<From, To...> fan_out{};
template <fixed_string To, fixed_string... From>
inline constexpr fan_in_t<To, From...> fan_in{};

}  // namespace cudag::dsl
