#pragma once
// What changed between two specs: nodes added and removed, kinds and
// parameters changed, edges added and removed, declarations changed; as
// data, as text (one change a line) and as a DOT picture of both graphs with
// the changes coloured. Used to say why an executable graph cannot take a
// new spec in place.
//
// Nodes pair by name within each graph level, never by position: two specs
// that declare the same nodes and edges in another order do not differ.
// Nodes of child graphs and conditional bodies pair the same way, level by
// level, and are named by path as everywhere in the library ("stage/fill",
// "branch[1]/write", see nested_prefix in spec.hpp).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag {

enum class change_kind {
  node_added,          ///< a node only the 'after' spec has (its edges included)
  node_removed,        ///< a node only the 'before' spec has (its edges included)
  kind_changed,        ///< same name, another node kind, or a conditional of another
                       ///< kind or body count (its nested nodes are not compared)
  params_changed,      ///< same name and kind, one field of its parameters differs
  edge_added,          ///< a dependency the paired node gained
  edge_removed,        ///< a dependency the paired node lost
  declaration_changed, ///< a parameter or condition declared, dropped or redeclared
  edge_kind_changed    ///< a dependency kept, of another edge_kind (full, programmatic,
                       ///< launch_completion): another topology, as CUDA cannot change
                       ///< an edge's data in place
};

/// One change. `detail` is readable text whose user strings are already
/// escaped and cut (a control byte or a byte that is not valid UTF-8 shown as
/// \xNN, a string longer than 512 bytes cut, saying how long it was).
struct spec_change {
  change_kind kind;
  /// Path of the node ("stage/fill" inside child 'stage'); for an edge, its
  /// target; for a declaration, the parameter or condition (its graph's
  /// nested prefix, then its name). Not escaped.
  std::string node;
  /// What changed: "grid (4,1,1) -> (8,1,1)", "argument 2: param 'x' -> param 'y'",
  /// "edge 'a' -> 'b'" (paths), "edge 'a' -> 'b' changes kind: full -> programmatic",
  /// "kernel -> memset", "param type int -> long".
  std::string detail;

  friend bool operator==(const spec_change&, const spec_change&) = default;
};

struct spec_diff {
  /// Graph by graph (a graph's own changes, then those of the graphs nested
  /// in its paired nodes, in the 'after' spec's node order); within a graph:
  /// declarations (parameters, then conditions), then the 'after' spec's
  /// nodes in order (added, or kind or parameter changes, then edges added,
  /// then edges removed, then edges whose kind changed), then the removed
  /// nodes in the 'before' spec's order.
  std::vector<spec_change> changes;

  [[nodiscard]] bool empty() const noexcept { return changes.empty(); }

  /// Only parameter (and declaration) changes: every node and edge pairs by
  /// name, node kinds, edge kinds, conditional kinds and body counts are
  /// equal. A kernel that starts or stops synchronizing its grid
  /// dependencies is a parameter change (CUDA never sees the marker). What
  /// an update of an executable graph may apply in place (CUDA may still
  /// refuse some parameter changes, such as a memory node's size).
  [[nodiscard]] bool same_topology() const noexcept;

  /// Every change, one a line, each line ending in '\n' ("" when empty):
  ///   added fc2: kernel
  ///   removed tmp: mem_alloc
  ///   changed kind of fill: kernel -> memset
  ///   changed fc1: grid (4,1,1) -> (8,1,1)
  ///   added edge 'fc1' -> 'fc2'
  ///   removed edge 'a' -> 'b'
  ///   edge 'a' -> 'b' changes kind: full -> programmatic
  ///   changed b: synchronizes grid dependencies no -> yes
  ///   changed declaration of n: param type int -> long
  [[nodiscard]] std::string text() const;
  /// The first `max_changes` lines of text(), then "... and N more changes"
  /// when there are more: for messages that must stay short.
  [[nodiscard]] std::string text(std::size_t max_changes) const;
};

/// The changes that turn `before` into `after`, in linear time (hash maps by
/// name). A name declared twice in one graph pairs by its first declaration;
/// later ones count as added or removed. Child graphs that are the same
/// object on both sides are not compared further. The top-level graphs'
/// own names are not compared (a child graph's name is), nor what keeps a
/// kernel's module alive (kernel_node::keep_alive). Throws
/// cudag::error, naming the node, for a child graph that contains itself and
/// for graphs nested more than 64 deep.
[[nodiscard]] spec_diff diff(const graph_spec& before, const graph_spec& after);

/// diff(before, after).text(max_changes): the changes for the message of a
/// refused update, at most `max_changes` lines and a count of the rest; ""
/// when the specs do not differ.
[[nodiscard]] std::string diff_text(const graph_spec& before, const graph_spec& after,
                                    std::size_t max_changes = 20);

/// DOT picture of the union of both graphs: added nodes and edges green,
/// removed ones red and dashed, changed nodes orange with their changes (those
/// of `d`, by path) in the label, unchanged ones grey; an edge of a kind other
/// than full is labelled with its kind, and one whose kind changed is orange,
/// labelled "full -> programmatic"; child graphs and
/// conditional bodies as clusters, as cudag::to_dot(spec) draws them. A node
/// whose kind changed is drawn as its 'after' version, whose nested graphs
/// are then all added. Declaration changes and counts are in the graph's label. Escaped and
/// bounded as to_dot(spec) is; throws as diff() does.
[[nodiscard]] std::string to_dot(const spec_diff& d, const graph_spec& before,
                                 const graph_spec& after);

/// Name of a change kind: "node_added", "params_changed", ...
[[nodiscard]] std::string_view change_kind_name(change_kind kind) noexcept;

}  // namespace cudag
