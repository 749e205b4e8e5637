#pragma once
// Exception-safe stream capture.
//
//   cudag::capture_guard capture(stream);          // cudaStreamBeginCapture
//   cublasSgemm(handle, ...);                       // any calls on `stream`
//   cudag::unique_graph graph = capture.end();      // cudaStreamEndCapture
//
// If the guard is destroyed without end() (an exception left the region),
// it ends the capture, discards what was captured and clears CUDA's last
// error, so the stream and the thread can capture and allocate again.
//
// Capturing into an existing graph (cudaStreamBeginCaptureToGraph): the
// captured nodes are added to that graph after the given dependencies;
// end_into() returns the region's last nodes, for edges to later work. An
// abandoned capture into a graph removes the nodes it had added.
//
// To put captured library calls into a spec, use builder::captured (the
// calls are recorded when the spec is lowered and again on rebind) or
// import a captured graph (import.hpp) and add it as a child.
#include <cuda_runtime_api.h>

#include <span>
#include <utility>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/handles.hpp"

namespace cudag {

class capture_guard {
 public:
  /// No capture in progress; end() throws. For move-assignment targets.
  capture_guard() = default;
  /// Begins capturing `stream` into a new graph. The legacy default stream
  /// (0) cannot be captured: use a created stream or cudaStreamPerThread.
  explicit capture_guard(cudaStream_t stream,
                         cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal);
  /// Begins capturing `stream` into `graph` (not owned), the first captured
  /// nodes depending on `dependencies` (nodes of `graph`).
  capture_guard(cudaGraph_t graph, cudaStream_t stream,
                std::span<const cudaGraphNode_t> dependencies = {},
                cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal);

  capture_guard(capture_guard&& other) noexcept;
  capture_guard& operator=(capture_guard&& other) noexcept;
  capture_guard(const capture_guard&) = delete;
  capture_guard& operator=(const capture_guard&) = delete;
  ~capture_guard();

  /// Ends the capture and returns the captured graph. Throws cudag::error
  /// when nothing is being captured, when capturing into an existing graph
  /// (use end_into()), or when CUDA invalidated the capture (an illegal call
  /// inside it); the guard is inactive afterwards either way.
  [[nodiscard]] unique_graph end();
  /// Ends a capture into an existing graph; returns the nodes the stream
  /// would have made the next captured work depend on (the region's leaves).
  std::vector<cudaGraphNode_t> end_into();
  /// Ends the capture now and discards it (what the destructor does).
  void abandon() noexcept;

  [[nodiscard]] bool active() const noexcept { return stream_ != nullptr; }
  [[nodiscard]] bool into_existing_graph() const noexcept { return target_ != nullptr; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;  ///< null: inactive
  cudaGraph_t target_ = nullptr;   ///< capture-to-graph target, not owned
  std::vector<cudaGraphNode_t> target_nodes_before_;
};

/// Captures what `f(stream)` issues on `stream` into a new graph. An
/// exception from f ends and discards the capture, then propagates.
template <class F>
[[nodiscard]] unique_graph capture_graph(cudaStream_t stream, F&& f,
                                         cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal) {
  capture_guard guard(stream, mode);
  std::forward<F>(f)(stream);
  return guard.end();
}

/// Sets this thread's capture mode (cudaThreadExchangeStreamCaptureMode)
/// for a scope, e.g. relaxed to allocate while a capture is in progress.
class capture_mode_scope {
 public:
  explicit capture_mode_scope(cudaStreamCaptureMode mode);
  ~capture_mode_scope();
  capture_mode_scope(const capture_mode_scope&) = delete;
  capture_mode_scope& operator=(const capture_mode_scope&) = delete;

 private:
  cudaStreamCaptureMode previous_;
};

/// Adds `child` (cloned) as a child-graph node to the graph `stream` is
/// being captured into, after the stream's current capture dependencies,
/// and makes later captured work depend on it. Throws cudag::error when
/// `stream` is not capturing.
cudaGraphNode_t append_child_to_capture(cudaStream_t stream, cudaGraph_t child);

/// Whether `stream` is being captured (cudaStreamIsCapturing).
[[nodiscard]] bool is_capturing(cudaStream_t stream);

}  // namespace cudag
