#pragma once
// A declaration run without a graph, as a program without graphs runs it,
// and the measurement that tells a user whether graphs pay off for their
// shapes: the same spec launched eagerly on a stream, as a dedicated
// executable graph per shape, and as one exec reshaped between shapes.
#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cudag/bindings.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// A spec's work enqueued on a stream (run_eagerly). It keeps what that work
/// points at (host callables and their argument snapshots) until it is
/// synchronized or destroyed; destroying it waits for the stream first.
class eager_run {
 public:
  eager_run(eager_run&&) noexcept;
  eager_run& operator=(eager_run&&) noexcept;
  ~eager_run();
  /// Waits for the stream, then rethrows a host node's exception as
  /// cudag::error naming the node.
  void synchronize();

  struct state;

 private:
  explicit eager_run(std::unique_ptr<state> s);
  friend eager_run run_eagerly(const graph_spec&, std::span<const binding>, cudaStream_t);
  std::unique_ptr<state> state_;
};

/// Checks `spec` with `bindings` and enqueues its nodes on `stream` in the
/// order lowering would create them, one after the other: kernels by
/// cudaLaunchKernel, copies and memsets asynchronously, host nodes by
/// cudaLaunchHostFunc, events recorded and waited for, child graphs and
/// captured work node by node, alloc and free nodes as stream-ordered
/// allocations (a buffer no free node frees is freed after the run). A
/// conditional node, or a value reading a condition, cannot run without a
/// graph: refused, naming the node.
[[nodiscard]] eager_run run_eagerly(const graph_spec& spec, std::span<const binding> bindings,
                                    cudaStream_t stream);

/// What graphs buy at one shape. Microseconds, medians of synchronized runs.
struct payoff_row {
  std::string shape;               ///< the shape's bindings: "batch=64"
  double eager_us = 0;             ///< run_eagerly + synchronize
  double graph_build_us = 0;       ///< instantiate + upload of a dedicated exec
  double graph_replay_us = 0;      ///< launch + synchronize of that exec
  double reshape_us = 0;           ///< exec::reshape of one shared exec to this shape
  double reshaped_replay_us = 0;   ///< launch + synchronize of the shared exec after it
};
struct payoff_report {
  std::vector<payoff_row> rows;
  /// A table, then per shape how many replays pay for building a graph
  /// ((build) / (eager - replay)), or that the graph does not pay off.
  [[nodiscard]] std::string text() const;
};

/// Times `spec` for its user at each of `shapes` (bindings that override
/// `bindings`: the batch size, the sequence length): launched eagerly, as
/// a dedicated graph of the shape, and through one exec reshaped to it.
/// Each measurement is the median of `repetitions` runs, the three ways
/// interleaved. Runs the spec many times: its effects must allow that.
[[nodiscard]] payoff_report measure_payoff(const graph_spec& spec,
                                           std::span<const binding> bindings,
                                           std::span<const std::vector<binding>> shapes,
                                           cudaStream_t stream, int repetitions = 15);

}  // namespace cudag
