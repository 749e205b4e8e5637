#pragma once
// The heterogeneous values of one node (a kernel's or host node's arguments
// and their resolved values, a child graph's or conditional's bodies): a
// handful of elements, as one flat layer of bases. Graph-level storage, with
// one element per item and hundreds of items, is a chunked_tuple.
//
// An aggregate, built by brace elision like chunked_tuple (no element type
// converts to a leaf or to the tuple's base), and trivial where its elements
// are: the exec arena default-initialises node storage, which every node
// kind writes before it reads it. (Boost.Hana's basic_tuple, used before,
// value-initialised its elements and cost every translation unit of the DSL
// about 4 MiB of g++ memory for two functions.)
#include <cstddef>
#include <type_traits>
#include <utility>

namespace cudag::dsl::detail {

/// Element I of a node tuple.
template <std::size_t I, class T>
struct node_tuple_leaf {
  T value;
};

template <class Indices, class... T>
struct node_tuple_base;
template <std::size_t... I, class... T>
struct node_tuple_base<std::index_sequence<I...>, T...> : node_tuple_leaf<I, T>... {};

template <class... T>
struct node_tuple : node_tuple_base<std::index_sequence_for<T...>, T...> {};

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-braces"
#endif
/// A node tuple of copies of `values`.
template <class... T>
[[nodiscard]] constexpr node_tuple<std::decay_t<T>...> make_node_tuple(const T&... values) {
  return node_tuple<std::decay_t<T>...>{values...};
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/// Element I, found by overload resolution among the tuple's bases.
template <std::size_t I, class T>
[[nodiscard]] constexpr T& node_leaf(node_tuple_leaf<I, T>& leaf) noexcept {
  return leaf.value;
}
template <std::size_t I, class T>
[[nodiscard]] constexpr const T& node_leaf(const node_tuple_leaf<I, T>& leaf) noexcept {
  return leaf.value;
}
template <std::size_t I, class Tuple>
[[nodiscard]] constexpr auto& at_c(Tuple& tuple) noexcept {
  return node_leaf<I>(tuple);
}

}  // namespace cudag::dsl::detail
