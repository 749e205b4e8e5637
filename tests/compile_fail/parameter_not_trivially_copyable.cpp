// A graph parameter's bytes are copied into the exec: a std::string is not
// trivially copyable.
// expect-error: static assertion failed.*cudag: a graph parameter's type must be trivially copyable
// expect-name: param_t<
// context-first gcc: a static_assert of the parameter template param<>
#include <string>

#include "common.hpp"
constexpr auto label = param<"label", std::string>;
