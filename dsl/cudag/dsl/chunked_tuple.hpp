#pragma once
// A tuple for hundreds of heterogeneous elements (a graph's items): chunks of
// at most `tuple_chunk_size` elements, each chunk one flat layer of base
// classes, and the chunks in turn the bases of one flat layer. Element access
// is overload resolution against a chunk's bases (no recursion), and no
// class has more than a few dozen bases. That bound is what nvcc needs: its
// front end spends time quadratic in a class's number of direct bases
// (measured: one class of 1,500 bases 33 s, of 500 bases 2 s; g++ 0.05 s).
#include <cstddef>
#include <type_traits>
#include <utility>

namespace cudag::dsl::detail {

/// Whether any, and how many, of a pack's values are true, read from an
/// array: a fold over a graph's items nests one level per item, and clang
/// refuses a fold longer than its -fbracket-depth (256 by default); an array
/// has no depth. Called as any_of_values({false, pred<Items>()...}).
template <std::size_t N>
[[nodiscard]] constexpr bool any_of_values(const bool (&values)[N]) noexcept {
  for (const bool v : values)
    if (v) return true;
  return false;
}
template <std::size_t N>
[[nodiscard]] constexpr std::size_t count_of_values(const bool (&values)[N]) noexcept {
  std::size_t n = 0;
  for (const bool v : values) n += v ? 1 : 0;
  return n;
}

inline constexpr std::size_t tuple_chunk_size = 16;

/// Element I (its index in the whole tuple) of type T.
template <std::size_t I, class T>
struct tuple_leaf {
  T value;
};

/// One chunk: elements I... as one flat layer of bases.
template <class Indices, class... T>
struct tuple_chunk;
template <std::size_t... I, class... T>
struct tuple_chunk<std::index_sequence<I...>, T...> : tuple_leaf<I, T>... {};

template <std::size_t C, class Chunk>
struct chunk_leaf {
  Chunk chunk;
};
/// The whole tuple: chunks C... as one flat layer of bases.
template <class ChunkIndices, class... Chunks>
struct chunk_set;
template <std::size_t... C, class... Chunks>
struct chunk_set<std::index_sequence<C...>, Chunks...> : chunk_leaf<C, Chunks>... {};

template <std::size_t C, class Chunk>
[[nodiscard]] constexpr const Chunk& chunk_at(const chunk_leaf<C, Chunk>& leaf) noexcept {
  return leaf.chunk;
}
template <std::size_t C, class Chunk>
[[nodiscard]] constexpr Chunk& chunk_at(chunk_leaf<C, Chunk>& leaf) noexcept {
  return leaf.chunk;
}

// ---------------------------------------------------------------- layout --
template <std::size_t First, class Indices>
struct offset_indices;
template <std::size_t First, std::size_t... I>
struct offset_indices<First, std::index_sequence<I...>> {
  using type = std::index_sequence<First + I...>;
};
/// The chunk holding T... as elements First, First + 1, ...
template <std::size_t First, class... T>
using chunk_of =
    tuple_chunk<typename offset_indices<First, std::index_sequence_for<T...>>::type, T...>;

template <class... Chunks>
struct chunk_list {};

/// Element types a tuple may hold as a run (specialised true for a type
/// that is empty and needs no per-element work): tuple_chunk_size of them in
/// a row make one chunk holding an array of them, with no leaf, and so no
/// class, per element. get<I> does not reach such elements.
template <class T>
inline constexpr bool held_as_run = false;
/// A chunk of tuple_chunk_size elements of one type held as a run.
template <class T>
struct tuple_run {
  T values[tuple_chunk_size];
};

/// The chunk holding T... as elements First, First + 1, ..., or a run.
template <std::size_t First, class... T>
struct chunk_type {
  using type = chunk_of<First, T...>;
};
template <std::size_t First, class T, class... Rest>
  requires(held_as_run<T> && sizeof...(Rest) + 1 == tuple_chunk_size &&
           (std::is_same_v<T, Rest> && ...))
struct chunk_type<First, T, Rest...> {
  using type = tuple_run<T>;
};

// Peels tuple_chunk_size elements at a time (sixteen named parameters: a
// pack cannot be split at a position without indexing into it, which is
// what costs). Done... are the chunks made so far. Types only: no function
// is named by these packs.
#define CUDAG_DSL_CHUNK_TYPES class T0, class T1, class T2, class T3, class T4, class T5, class T6, \
  class T7, class T8, class T9, class T10, class T11, class T12, class T13, class T14, class T15
#define CUDAG_DSL_CHUNK_ARGS T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15

template <std::size_t First, class Done, class... T>
struct chunk_layout;
template <std::size_t First, class... Done, class... T>
  requires(sizeof...(T) <= tuple_chunk_size)
struct chunk_layout<First, chunk_list<Done...>, T...> {
  using type =
      chunk_set<std::make_index_sequence<sizeof...(Done) + 1>, Done...,
                typename chunk_type<First, T...>::type>;
};
template <std::size_t First, class... Done, CUDAG_DSL_CHUNK_TYPES, class... Rest>
  requires(sizeof...(Rest) > 0)
struct chunk_layout<First, chunk_list<Done...>, CUDAG_DSL_CHUNK_ARGS, Rest...> {
  using type = typename chunk_layout<First + tuple_chunk_size,
                                     chunk_list<Done..., typename chunk_type<First, CUDAG_DSL_CHUNK_ARGS>::type>,
                                     Rest...>::type;
};

#undef CUDAG_DSL_CHUNK_TYPES
#undef CUDAG_DSL_CHUNK_ARGS

/// The tuple of T... (value-initialisable where every T is).
template <class... T>
using chunked_tuple = typename chunk_layout<0, chunk_list<>, T...>::type;

// ------------------------------------------------------------ construction --
/// A chunked_tuple of copies of `values`: one aggregate initialisation, the
/// values taken in order by brace elision (chunk by chunk, leaf by leaf), so
/// no function or type is made per chunk. No element type converts to a leaf
/// or a chunk, which is what makes each value land in its element.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-braces"
#endif
template <class... T>
[[nodiscard]] constexpr chunked_tuple<T...> make_chunked_tuple(const T&... values) {
  return chunked_tuple<T...>{values...};
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/// Element I (of type T), found by overload resolution in its chunk.
template <std::size_t I, class T>
[[nodiscard]] constexpr const T& leaf_value(const tuple_leaf<I, T>& leaf) noexcept {
  return leaf.value;
}
template <std::size_t I, class ChunkSet>
[[nodiscard]] constexpr const auto& get(const ChunkSet& tuple) noexcept {
  return leaf_value<I>(chunk_at<I / tuple_chunk_size>(tuple));
}

}  // namespace cudag::dsl::detail
