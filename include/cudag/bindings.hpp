#pragma once
// Values for a graph's named parameters, given at instantiation or rebinding.
#include <cstring>
#include <string>
#include <vector>

#include "cudag/type_tag.hpp"

namespace cudag {

struct binding {
  std::string name;
  type_tag type;
  std::vector<std::byte> bytes;
};

/// bind("x", d_x): the value of parameter "x". Its type must be the declared
/// one (or T* for a declared const T*); checked when the binding is used.
template <class T>
[[nodiscard]] binding bind(std::string name, const T& v) {
  binding b{std::move(name), type_of<T>(), std::vector<std::byte>(sizeof(T))};
  std::memcpy(b.bytes.data(), &v, sizeof(T));
  return b;
}

}  // namespace cudag
