#pragma once
// Run-time identity of a C++ type, for parameters and arguments whose type is
// checked when a graph is assembled at run time. Compares by std::type_info,
// which agrees between nvcc- and g++-compiled translation units.
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace cudag {

struct type_tag {
  const std::type_info* info = nullptr;
  std::uint32_t size = 0;
  std::uint32_t align = 0;
  bool is_pointer = false;
  bool is_integral = false;
  bool is_signed = false;  ///< how a launch rule reads an integral value
  /// A pointer to const: what a kernel given it only reads (memory_access.hpp).
  bool points_to_const = false;

  /// Readable (demangled) name, for error messages.
  [[nodiscard]] std::string name() const;

  friend bool operator==(const type_tag& a, const type_tag& b) noexcept {
    return a.info == b.info || (a.info && b.info && *a.info == *b.info);
  }
};

template <class T>
[[nodiscard]] type_tag type_of() noexcept {
  using U = std::remove_cvref_t<T>;
  static_assert(std::is_trivially_copyable_v<U>,
                "cudag: graph parameters and kernel arguments must be trivially copyable");
  return type_tag{&typeid(U), sizeof(U), alignof(U), std::is_pointer_v<U>, std::is_integral_v<U>,
                  std::is_signed_v<U>, std::is_const_v<std::remove_pointer_t<U>> && std::is_pointer_v<U>};
}

/// True when a value declared as `from` may be passed where `to` is expected:
/// the same type, or T* where const T* is expected, or any object pointer
/// where void* / const void* is expected.
[[nodiscard]] bool binds_to(const type_tag& from, const type_tag& to) noexcept;

}  // namespace cudag
