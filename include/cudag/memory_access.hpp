#pragma once
// Who reads and who writes: the memory a node touches, and the rule that two
// nodes with no path between them must not touch the same bytes while one of
// them writes. Shared by check() (the race pass) and the DSL, which applies
// the same rule at compile time.
//
// What a node touches, argument by argument:
//  - a kernel's `const T*` parameter is read; its `T*` parameter is read and
//    written (kernels are often not const-correct: declare `read` to narrow);
//  - a memcpy reads `bytes` from its source and writes them to its
//    destination; a memset writes the bytes it sets;
//  - a host or captured node reads and writes every pointer it is given (it
//    may do anything with it) unless it declares less;
//  - events, allocations and frees touch no bytes here (the buffer-lifetime
//    rules order allocations and frees).
// A pointer's memory is the parameter or buffer it names (a view of a buffer
// starts at its offset), or its address where it is a literal. Without a
// declared extent an access covers its memory from its start to the end.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudag {

/// How a node touches the memory one of its arguments points at.
enum class access_mode : unsigned char {
  read,        ///< reads only (a narrowing for a `T*` it never writes)
  read_write,  ///< reads and writes
  /// Updates that are meant to run concurrently with other such updates
  /// (atomics): two concurrent accesses are no race, but a concurrent access
  /// and a plain read or write are.
  concurrent,
};

[[nodiscard]] constexpr std::string_view access_mode_name(access_mode mode) noexcept {
  switch (mode) {
    case access_mode::read: return "read";
    case access_mode::read_write: return "read_write";
    case access_mode::concurrent: return "concurrent";
  }
  return "unknown";
}

/// An access without a declared extent reaches to the end of its memory.
inline constexpr std::size_t to_the_end = ~std::size_t{0};

/// What a node declares about argument `argument` (its position among the
/// node's arguments, from 0): how it touches the memory, and how many bytes
/// from the argument's address (to_the_end: all of them).
struct access_declaration {
  std::uint32_t argument = 0;
  access_mode mode = access_mode::read_write;
  std::size_t extent_bytes = to_the_end;
  friend bool operator==(const access_declaration&, const access_declaration&) = default;
};

/// Whether two accesses of one memory by two different nodes conflict: one
/// of them writes, or one is a concurrent update and the other a plain read.
[[nodiscard]] constexpr bool accesses_conflict(access_mode a, access_mode b) noexcept {
  if (a == access_mode::read_write || b == access_mode::read_write) return true;
  return a != b;  // read against concurrent
}

/// The one mode that stands for two accesses of the same memory by one node.
[[nodiscard]] constexpr access_mode combined_access(access_mode a, access_mode b) noexcept {
  return a == b ? a : access_mode::read_write;
}

/// Whether [a_begin, a_begin + a_extent) and [b_begin, b_begin + b_extent)
/// share a byte (an extent of to_the_end reaches to the end of the memory).
[[nodiscard]] constexpr bool byte_ranges_overlap(std::size_t a_begin, std::size_t a_extent,
                                                 std::size_t b_begin, std::size_t b_extent) noexcept {
  if (a_extent == 0 || b_extent == 0) return false;
  const auto ends_before = [](std::size_t begin, std::size_t extent, std::size_t other) {
    return extent != to_the_end && extent <= other - begin;  // begin + extent <= other, no overflow
  };
  if (a_begin <= b_begin) return !ends_before(a_begin, a_extent, b_begin);
  return !ends_before(b_begin, b_extent, a_begin);
}

/// "writes", "reads" or "updates concurrently": the verb of a race's message.
[[nodiscard]] constexpr std::string_view access_verb(access_mode mode) noexcept {
  switch (mode) {
    case access_mode::read: return "reads";
    case access_mode::read_write: return "writes";
    case access_mode::concurrent: return "updates concurrently";
  }
  return "touches";
}

}  // namespace cudag
