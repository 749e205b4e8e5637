#pragma once
// Layer 2: checks of a spec with Boost.Graph, on the CPU, before any CUDA
// call; and analyses of its shape. Every rejection names the nodes at fault.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudag/bindings.hpp"
#include "cudag/error.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// A spec that cudag refuses. what() is a readable sentence; nodes() names
/// the nodes involved (the cycle in order, the edge's two ends, ...).
/// Graph-nested nodes are named by path: "loop/body_kernel".
class check_error : public error {
 public:
  check_error(std::string message, std::vector<std::string> nodes);
  [[nodiscard]] const std::vector<std::string>& nodes() const noexcept { return nodes_; }

 private:
  std::vector<std::string> nodes_;
};

/// Throws check_error on the first problem found: duplicate or empty node
/// names, an edge to an unknown node, a cycle (the cycle's path in order),
/// an undeclared parameter/buffer/condition, a parameter whose declared type
/// does not match its use, buffers used outside their alloc..free window,
/// freed twice or never allocated, node kinds CUDA forbids in conditional
/// bodies (host, event record/wait, mem alloc/free, captured work that is
/// not a plain graph), conditional bodies of the wrong count, and a declared
/// condition no conditional node uses. Recurses into children and bodies.
void check(const graph_spec& spec);

/// check(spec), then every parameter bound exactly once with its declared
/// type (or T* for const T*), and no binding for an undeclared parameter.
void check(const graph_spec& spec, std::span<const binding> bindings);

/// Node indices in a deterministic topological order: Kahn's algorithm,
/// taking among ready nodes the one declared first. Throws check_error on a
/// cycle or an unknown dependency.
[[nodiscard]] std::vector<std::size_t> topological_order(const graph_spec& spec);

struct graph_analysis {
  std::vector<std::size_t> order;  ///< topological_order()
  std::size_t critical_path = 0;   ///< nodes on the longest dependency chain
  std::size_t width = 0;           ///< most nodes at one depth (a lower bound of parallelism)
  /// Edges (from, to) implied by other paths: removable without changing order.
  std::vector<std::pair<std::string, std::string>> redundant_edges;
};

/// Shape analyses of the top-level graph (children and bodies count as one node).
[[nodiscard]] graph_analysis analyze(const graph_spec& spec);

}  // namespace cudag
