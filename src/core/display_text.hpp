#pragma once
// Internal: how pictures and diffs show user strings and a few CUDA values
// (DOT pictures of specs, diffs as text and as pictures). Names can hold
// anything: a NUL, control bytes, invalid UTF-8, megabytes; what is shown
// stays valid UTF-8, one line, bounded, and Graphviz accepts every quoted
// string.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace cudag::display {

/// A function's name without its anonymous namespaces, as its users write
/// it: "_GLOBAL__N__4709cdbd_11_adaptive_cu_main::disturb" (nvcc's host
/// code), "(anonymous namespace)::disturb" (clang, the demangler) and
/// "{anonymous}::disturb" (g++) all read "disturb".
[[nodiscard]] inline std::string without_anonymous_namespaces(std::string_view name) {
  constexpr std::string_view spelled[] = {"(anonymous namespace)::", "{anonymous}::"};
  constexpr std::string_view nvcc = "_GLOBAL__N_";
  auto identifier = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string out;
  out.reserve(name.size());
  for (std::size_t at = 0; at < name.size();) {
    const std::string_view rest = name.substr(at);
    std::size_t skip = 0;
    for (std::string_view s : spelled)
      if (rest.starts_with(s)) skip = s.size();
    // nvcc's component is one identifier, at a component's start.
    if (skip == 0 && rest.starts_with(nvcc) && (at == 0 || !identifier(name[at - 1]))) {
      std::size_t end = nvcc.size();
      while (end < rest.size() && identifier(rest[end])) ++end;
      if (rest.substr(end).starts_with("::")) skip = end + 2;
    }
    if (skip != 0) {
      at += skip;
    } else {
      out += name[at++];
    }
  }
  return out;
}

/// At most this much of one user string is shown (then its length).
inline constexpr std::size_t max_shown_bytes = 512;
/// Graphviz refuses a quoted string of 16,384 bytes or more; a label that
/// long is unreadable anyway.
inline constexpr std::size_t max_quoted_bytes = 8192;

/// Length of the valid UTF-8 sequence at text[at], or 0 when the bytes there
/// are not one (stray continuation byte, overlong form, surrogate, beyond
/// U+10FFFF, cut short).
[[nodiscard]] inline std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return length;
}

inline void append_hex(std::string& out, unsigned char c) {
  static constexpr char digits[] = "0123456789ABCDEF";
  out += digits[c >> 4];
  out += digits[c & 0xF];
}

/// Concatenation by appending: g++ 12 warns falsely (-Wrestrict) on
/// `"literal" + std::string` once inlined.
[[nodiscard]] inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (std::string_view part : parts) size += part.size();
  std::string out;
  out.reserve(size);
  for (std::string_view part : parts) out += part;
  return out;
}

[[nodiscard]] inline std::string dims(const dim3& d) {
  return cat({"(", std::to_string(d.x), ",", std::to_string(d.y), ",", std::to_string(d.z), ")"});
}

[[nodiscard]] inline std::string_view copy_kind_name(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost: return "host to host";
    case cudaMemcpyHostToDevice: return "host to device";
    case cudaMemcpyDeviceToHost: return "device to host";
    case cudaMemcpyDeviceToDevice: return "device to device";
    default: return "default";
  }
}

/// A quoted DOT string that Graphviz always accepts: quotes and backslashes
/// escaped, newlines as DOT's centred line break, a NUL, another control
/// character or a byte that is not valid UTF-8 written out as the text \xNN,
/// and at most max_quoted_bytes of it (cut between characters). Not named
/// `quoted`: argument-dependent lookup would find std::quoted for a
/// std::string argument where <string> declares it (libc++), and prefer it.
[[nodiscard]] inline std::string dot_quoted(std::string_view text) {
  std::string out = "\"";
  std::size_t at = 0;
  while (at < text.size()) {
    if (out.size() + 16 > max_quoted_bytes) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[at]);
    const std::size_t length = utf8_length(text, at);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      // dropped
    } else if (length == 0 || c < 0x20 || c == 0x7F) {
      out += "\\\\x";
      append_hex(out, c);
    } else {
      out.append(text.substr(at, length));
      at += length;
      continue;
    }
    ++at;
  }
  return out + '"';
}

}  // namespace cudag::display
