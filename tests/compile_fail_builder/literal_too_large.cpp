// A spec writer holds converted literals inline, 16 bytes at most.
// expect-error: static assertion failed.*cudag: literal too large to hold inline
#include <array>

#include "cudag/spec_writer.hpp"
cudag::value_view view_of(const std::array<float, 8>& v) { return cudag::value_view::literal_copy(v); }
