// The chunked tuple that holds a graph's items: every element lands in its
// place across chunk boundaries, at compile time and at run time.
#include "cudag/dsl/chunked_tuple.hpp"

#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

namespace {

using cudag::dsl::detail::get;
using cudag::dsl::detail::make_chunked_tuple;

template <int K>
struct tagged {
  int value;
};

struct pair_like {
  int a;
  double b;
};

// 35 elements of 35 types: three chunks, the last one partial.
template <std::size_t... I>
constexpr auto make_tagged(std::index_sequence<I...>) {
  return make_chunked_tuple(tagged<int(I)>{int(I) * 3 + 1}...);
}
constexpr auto tagged_35 = make_tagged(std::make_index_sequence<35>{});

template <std::size_t... I>
constexpr bool all_in_place(std::index_sequence<I...>) {
  return ((get<I>(tagged_35).value == int(I) * 3 + 1) && ...);
}
static_assert(all_in_place(std::make_index_sequence<35>{}));
static_assert(std::is_same_v<std::remove_cvref_t<decltype(get<17>(tagged_35))>, tagged<17>>);

}  // namespace

TEST(ChunkedTuple, ElementsOfMixedTypesKeepTheirValuesAcrossChunks) {
  const double half = 0.5;
  const auto t = make_chunked_tuple(1, half, pair_like{7, 2.5}, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                    14, 15, 16, pair_like{17, 17.5}, 18, 'x');
  EXPECT_EQ(get<0>(t), 1);
  EXPECT_DOUBLE_EQ(get<1>(t), 0.5);
  EXPECT_EQ(get<2>(t).a, 7);
  EXPECT_DOUBLE_EQ(get<2>(t).b, 2.5);
  EXPECT_EQ(get<15>(t), 16);
  EXPECT_EQ(get<16>(t).a, 17);  // first element of the second chunk
  EXPECT_DOUBLE_EQ(get<16>(t).b, 17.5);
  EXPECT_EQ(get<17>(t), 18);
  EXPECT_EQ(get<18>(t), 'x');
}

TEST(ChunkedTuple, ValueInitialisedElementsAreZero) {
  const cudag::dsl::detail::chunked_tuple<int, double, pair_like, int, int, int, int, int, int, int,
                                          int, int, int, int, int, int, int, long>
      t{};
  EXPECT_EQ(get<0>(t), 0);
  EXPECT_EQ(get<2>(t).a, 0);
  EXPECT_EQ(get<17>(t), 0L);
}
