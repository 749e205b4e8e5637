#pragma once
// What makes a DOT text one that Graphviz reads, as the DOT tests of the
// check layer and of the diff assert it for hostile names.
#include <algorithm>
#include <cstddef>
#include <string>

namespace cudag::dot_text {

/// The text is valid UTF-8 (what Graphviz reads by default): no stray or
/// missing continuation byte, no overlong form, no surrogate, nothing past
/// U+10FFFF.
inline bool valid_utf8(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    const std::size_t length = c < 0x80                  ? 1
                               : c >= 0xC2 && c <= 0xDF ? 2
                               : c >= 0xE0 && c <= 0xEF ? 3
                               : c >= 0xF0 && c <= 0xF4 ? 4
                                                        : 0;
    if (length == 0 || at + length > text.size()) return false;
    for (std::size_t i = 1; i < length; ++i)
      if ((static_cast<unsigned char>(text[at + i]) & 0xC0) != 0x80) return false;
    const auto c1 = length > 1 ? static_cast<unsigned char>(text[at + 1]) : 0;
    if (length == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F))) return false;
    if (length == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))) return false;
    at += length;
  }
  return true;
}

/// The longest quoted string of a DOT text, in bytes (Graphviz refuses one
/// of 16,384).
inline std::size_t longest_quoted(const std::string& dot) {
  std::size_t longest = 0;
  bool inside = false;
  std::size_t start = 0;
  for (std::size_t at = 0; at < dot.size(); ++at) {
    if (inside && dot[at] == '\\') {
      ++at;
    } else if (dot[at] == '"') {
      if (inside) longest = std::max(longest, at - start);
      inside = !inside;
      start = at;
    }
  }
  return longest;
}

}  // namespace cudag::dot_text
