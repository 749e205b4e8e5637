#pragma once
// The rule that an operand viewing a graph-allocated buffer stays inside the
// allocation, shared by check() and the DSL (which applies it where a graph
// is declared): a copy's or set's whole range, any other operand's address
// (one past the last byte is still an address a kernel may be given).
#include <cstddef>
#include <string>
#include <string_view>

namespace cudag {

/// How a node's operand touches the buffer it views.
enum class view_access : unsigned char {
  address,  ///< a kernel, host or captured argument: only the address is known
  reads,    ///< a memcpy source
  writes,   ///< a memcpy destination
  sets      ///< a memset destination
};

namespace detail {

/// The bytes a memset of `height` rows of `width` elements of
/// `element_bytes`, rows `pitch_bytes` apart, spans from its first byte (its
/// last row's end); all of std::size_t where that does not fit.
[[nodiscard]] constexpr std::size_t memset_extent(std::size_t element_bytes, std::size_t width,
                                                  std::size_t height,
                                                  std::size_t pitch_bytes) noexcept {
  constexpr std::size_t most = ~std::size_t{0};
  if (width == 0 || height == 0 || element_bytes == 0) return 0;
  if (width > most / element_bytes) return most;
  const std::size_t row = width * element_bytes;
  if (height == 1) return row;
  if (pitch_bytes != 0 && height - 1 > (most - row) / pitch_bytes) return most;
  return (height - 1) * pitch_bytes + row;
}

/// Whether `extent` bytes from byte `offset` lie inside an allocation of
/// `size` bytes.
[[nodiscard]] constexpr bool view_within(std::size_t offset, std::size_t extent,
                                         std::size_t size) noexcept {
  return offset <= size && extent <= size - offset;
}

/// The refusal's text: "memcpy node 'copy' writes bytes [512, 1025) of
/// buffer 'tmp', past the end of its 1024 bytes (allocated by 'alloc')".
[[nodiscard]] std::string view_past_allocation(std::string_view kind, std::string_view node,
                                               std::string_view buffer, view_access access,
                                               std::size_t offset, std::size_t extent,
                                               std::size_t size, std::string_view alloc_node);

/// Throws cudag::error with that text, naming `node`. Out of line: the DSL
/// calls it from one small function per node name.
[[noreturn]] void refuse_view_past_allocation(std::string_view kind, std::string_view node,
                                              std::string_view buffer, view_access access,
                                              std::size_t offset, std::size_t extent,
                                              std::size_t size, std::string_view alloc_node);

}  // namespace detail
}  // namespace cudag
