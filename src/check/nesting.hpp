#pragma once
// How deep child graphs and conditional bodies may nest: far beyond any real
// pipeline, and low enough that the walks that recurse per level (the spec
// tree of check(), to_dot()) stay far from the end of a thread's stack. A
// child graph that contains itself reaches it, and is refused there.
#include <cstddef>

namespace cudag::check_detail {

inline constexpr std::size_t max_nesting = 64;

}  // namespace cudag::check_detail
