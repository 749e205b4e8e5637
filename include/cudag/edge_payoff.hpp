#pragma once
// Whether a graph's typed edges (programmatic, launch completion) pay off on
// the device at hand. An early launch overlaps a kernel's start with its
// predecessor's end: a gain for short kernels, a loss for kernels of many
// waves, whose early blocks hold resources while they wait (on an H200, a
// 1,000-kernel chain replayed 1.59x faster at one block a kernel and 0.91x
// as fast at eight waves). Measured here, not guessed, so that a user never
// ships the slow case by accident.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>

#include "cudag/bindings.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// `spec` with every edge full: each node's dependency kinds dropped, in
/// nested graphs too. The kernels' markers stay (they only permit).
[[nodiscard]] graph_spec with_full_edges(graph_spec spec);

/// How many edges of `spec`'s tree are of another kind than full.
[[nodiscard]] std::size_t typed_edge_count(const graph_spec& spec) noexcept;

/// The verdict of choose_edge_kinds. Microseconds a replay, medians.
struct edge_kind_choice {
  std::size_t typed_edges = 0;  ///< edges of the spec that are not full
  double typed_replay_us = 0;   ///< a replay with its typed edges
  double full_replay_us = 0;    ///< a replay of the same graph, every edge full
  bool keep_typed = false;      ///< typed edges replay faster, past the margin
  graph_spec chosen;            ///< the spec as given, or with_full_edges of it

  /// "typed edges: 999, replay 494.0 us; every edge full: 785.0 us; keep the typed edges (1.59x)".
  [[nodiscard]] std::string text() const;
};

/// Instantiates `spec` (bindings as for instantiate) twice, as given and
/// with_full_edges, and replays both on `stream`, interleaved: each sample
/// is `launches` back-to-back launches and one synchronize, `samples`
/// samples each. Keeps the typed edges only where their median replay is
/// faster than the full edges' by more than `margin` (0.02: 2 %); a spec
/// without typed edges is returned as it is, unmeasured. Runs the graph
/// many times: its effects must allow that.
[[nodiscard]] edge_kind_choice choose_edge_kinds(const graph_spec& spec,
                                                 std::span<const binding> bindings,
                                                 cudaStream_t stream, int samples = 15,
                                                 int launches = 10, double margin = 0.02);

}  // namespace cudag
