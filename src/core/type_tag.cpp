#include "cudag/type_tag.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace cudag {

std::string type_tag::name() const {
  if (!info) return "<none>";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(info->name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(info->name());
}

bool binds_to(const type_tag& from, const type_tag& to) noexcept {
  if (from == to) return true;
  if (!from.is_pointer || !to.is_pointer || !from.info || !to.info) return false;
  // Read from the mangled names (Itanium C++ ABI, which g++, clang++ and
  // nvcc share): no demangling, no allocation, as every check of a T*
  // parameter passed where a const T* is expected asks. A pointer is "P"
  // and its pointee's name, a const pointee "K" and the type's name
  // ("Pf" float*, "PKf" const float*, "Pv" void*, "PKv" const void*); a
  // leading '*' marks a name the compiler made unique to its translation unit.
  std::string_view f = from.info->name();
  std::string_view t = to.info->name();
  if (!f.empty() && f.front() == '*') f.remove_prefix(1);
  if (!t.empty() && t.front() == '*') t.remove_prefix(1);
  if (t == "Pv" || t == "PKv") return true;
  // "Pf" may go where "PKf" is expected.
  return f.size() > 1 && f.front() == 'P' && t.size() == f.size() + 1 && t.substr(0, 2) == "PK" &&
         t.substr(2) == f.substr(1);
}

}  // namespace cudag
