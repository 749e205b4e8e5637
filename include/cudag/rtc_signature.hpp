#pragma once
// Parameter types of a run-time compiled kernel, read from the mangled name
// NVRTC gives it (nvrtcGetLoweredName), and of the signature the host code
// declares for it, so that the two can be compared before any launch.
//
// Both sides go through one reader of Itanium C++ ABI type encodings: the
// kernel's side from its mangled name, the declared side from
// typeid(T).name() (which g++ spells in the same encoding). Types therefore
// compare by their full names: a struct parameter must be declared in the
// same namespace, with the same name, in the kernel source and in the host
// code.
//
// An `extern "C"` kernel's name carries no types: nothing can be checked,
// and such a kernel is accepted as declared.
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace cudag::rtc {

/// What a mangled kernel name says about the kernel.
struct lowered_signature {
  std::string function;                 ///< "scale<float>", "ns::axpy"
  std::vector<std::string> parameters;  ///< C++ spellings: "const float*", "int"

  /// "void scale<float>(float*, float, int)".
  [[nodiscard]] std::string to_string() const;
};

/// Reads the function name and parameter types from an Itanium-mangled name
/// ("_Z5scaleIfEvPT_S0_i"). std::nullopt for a name that is not mangled (an
/// `extern "C"` kernel). Throws cudag::error naming the position for a
/// mangling this reader does not know (function-typed or expression template
/// arguments, local names, ABI tags).
[[nodiscard]] std::optional<lowered_signature> parse_lowered_name(std::string_view mangled);

/// The C++ spelling of one Itanium type encoding ("PKf" -> "const float*").
/// Throws cudag::error for an encoding it cannot read.
[[nodiscard]] std::string demangle_type(std::string_view encoding);

/// The parameter types of a declared signature, spelled as parse_lowered_name
/// spells them.
template <class Signature>
struct declared_parameters;
template <class... P>
struct declared_parameters<void(P...)> {
  [[nodiscard]] static std::vector<std::string> get() { return {demangle_type(typeid(P).name())...}; }
};

/// "void(float*, int)" for parameter spellings {"float*", "int"}.
[[nodiscard]] std::string signature_text(std::string_view function,
                                         const std::vector<std::string>& parameters);

/// Throws cudag::error when `declared` differs from what `lowered_name`
/// encodes; the message shows both signatures and the first differing
/// parameter. Accepts a name without types (extern "C").
void check_signature(std::string_view name_expression, std::string_view lowered_name,
                     const std::vector<std::string>& declared);

}  // namespace cudag::rtc
