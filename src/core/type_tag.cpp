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
  if (!from.is_pointer || !to.is_pointer) return false;
  const std::string f = from.name();
  const std::string t = to.name();
  if (t == "void*" || t == "void const*") return true;
  // "float*" may go where "float const*" is expected.
  if (f.size() > 1 && t == f.substr(0, f.size() - 1) + " const*") return true;
  return false;
}

}  // namespace cudag
