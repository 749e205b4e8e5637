#pragma once
// A tuple as one flat layer of base classes, one per element, indexed by
// position. Element access is overload resolution against the bases (no
// recursion), and the type's depth stays 1 whatever the element count, which
// is what keeps 512-node graphs within the compilers' template limits.
#include <cstddef>
#include <type_traits>
#include <utility>

namespace cudag::dsl {

template <std::size_t I, class T>
struct tuple_leaf {
  T value;
};

template <class Indices, class... T>
struct flat_tuple_base;
template <std::size_t... I, class... T>
struct flat_tuple_base<std::index_sequence<I...>, T...> : tuple_leaf<I, T>... {};

template <class... T>
struct flat_tuple : flat_tuple_base<std::index_sequence_for<T...>, T...> {
  static constexpr std::size_t size = sizeof...(T);
};

template <std::size_t I, class T>
[[nodiscard]] constexpr T& get(tuple_leaf<I, T>& leaf) noexcept {
  return leaf.value;
}
template <std::size_t I, class T>
[[nodiscard]] constexpr const T& get(const tuple_leaf<I, T>& leaf) noexcept {
  return leaf.value;
}

/// Builds a flat_tuple from values (aggregate initialisation of each leaf,
/// so elements need not be default-constructible).
template <std::size_t... I, class... T>
[[nodiscard]] constexpr flat_tuple<T...> make_flat_tuple_at(std::index_sequence<I...>, T&&... values) {
  return flat_tuple<T...>{flat_tuple_base<std::index_sequence<I...>, T...>{
      tuple_leaf<I, T>{std::forward<T>(values)}...}};
}
template <class... T>
[[nodiscard]] constexpr flat_tuple<std::decay_t<T>...> make_flat_tuple(T&&... values) {
  return make_flat_tuple_at<>(std::index_sequence_for<T...>{}, std::decay_t<T>(std::forward<T>(values))...);
}

/// The type of element I (found the same way, without recursion).
template <std::size_t I, class T>
T element_type_of(const tuple_leaf<I, T>&);
template <std::size_t I, class Tuple>
using element_t = decltype(element_type_of<I>(std::declval<const Tuple&>()));

}  // namespace cudag::dsl
