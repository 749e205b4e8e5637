#pragma once
// Names as template arguments: node, edge, parameter, buffer and condition
// names are fixed strings, so a graph's shape lives in types and constexpr
// values. Names are compared by a 64-bit hash first (sorted lookup), then by
// their text, so that a hash collision can never merge two names.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudag::dsl {

template <std::size_t N>
struct fixed_string {
  char chars[N + 1] = {};

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&text)[N + 1]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i != N; ++i) chars[i] = text[i];
  }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {chars, N}; }
};
template <std::size_t M>
fixed_string(const char (&)[M]) -> fixed_string<M - 1>;

namespace detail {

/// FNV-1a: cheap to evaluate at compile time, good enough to sort by.
[[nodiscard]] constexpr std::uint64_t name_hash(std::string_view text) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

/// Text assembled at compile time (diagnostics, node paths), bounded in
/// length.
template <std::size_t Capacity>
struct text_buffer {
  static constexpr std::size_t capacity = Capacity;
  char text[capacity] = {};
  std::size_t size = 0;

  constexpr text_buffer& operator<<(std::string_view part) noexcept {
    for (char c : part) {
      if (size + 4 >= capacity) {  // keep the head of a very long path readable
        if (size + 3 < capacity) text[size++] = '.', text[size++] = '.', text[size++] = '.';
        return *this;
      }
      text[size++] = c;
    }
    return *this;
  }
  constexpr text_buffer& operator<<(std::size_t number) noexcept {
    char digits[24] = {};
    std::size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + number % 10);
      number /= 10;
    } while (number != 0);
    char ordered[24] = {};
    for (std::size_t i = 0; i < n; ++i) ordered[i] = digits[n - 1 - i];
    return *this << std::string_view(ordered, n);
  }
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {text, size}; }
};
/// A compile-time diagnostic.
using message_buffer = text_buffer<480>;

/// The exact-length fixed string of a compile-time message (for error types).
template <std::size_t N>
[[nodiscard]] constexpr fixed_string<N> to_fixed(std::string_view text) noexcept {
  fixed_string<N> out;
  if constexpr (N > 0)
    for (std::size_t i = 0; i != N; ++i) out.chars[i] = text[i];
  return out;
}

}  // namespace detail
}  // namespace cudag::dsl
