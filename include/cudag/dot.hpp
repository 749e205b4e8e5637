#pragma once
// Pictures of a spec in Graphviz DOT: every node with its name, kind and key
// parameters; child graphs and conditional bodies as clusters holding their
// own nodes and edges. Works on any spec, checked or not: a dependency on an
// unknown node is drawn as a red "missing" node instead of failing.
#include <string>

#include "cudag/spec.hpp"

namespace cudag {

/// DOT text of the spec. Node identifiers are generated ("n0", "n1", ...);
/// names appear only in escaped labels, so any name is safe: a NUL, another
/// control byte or a byte that is not valid UTF-8 is shown as the text \xNN,
/// a string longer than 512 bytes is cut (saying how long it was), and no
/// quoted string reaches Graphviz's limit of 16,384 bytes. Throws
/// cudag::error, naming the node, for a child graph that contains itself and
/// for graphs nested more than 64 deep (as check() does).
[[nodiscard]] std::string to_dot(const graph_spec& spec);

/// Writes to_dot(spec) to `path`; throws cudag::error naming the path when
/// the file cannot be written.
void write_dot(const graph_spec& spec, const std::string& path);

/// Runs Graphviz (`dot -Tsvg dot_path -o svg_path`). Returns false, without
/// throwing, when Graphviz is not installed or fails.
[[nodiscard]] bool render_svg(const std::string& dot_path, const std::string& svg_path);

}  // namespace cudag
