#include "cudag/capture.hpp"

#include <algorithm>
#include <string>

#include "cudag/native_api.hpp"
#include "cudag/native_nodes.hpp"

namespace cudag {
namespace {

void refuse_legacy_stream(cudaStream_t stream, const char* what) {
  if (stream == nullptr || stream == cudaStreamLegacy)
    throw error(std::string(what) +
                    ": the legacy default stream (stream 0) cannot be captured; capture a created "
                    "stream or cudaStreamPerThread",
                cudaErrorStreamCaptureUnsupported, "cudaStreamBeginCapture");
}

/// Checks one native call made by `where` (a function of this file, not a node).
/// cudaGetErrorName/String stay direct: text lookups, not graph calls.
void check(cudaError_t code, const char* call, const char* where) {
  if (code == cudaSuccess) [[likely]]
    return;
  (void)native::api().get_last_error();  // a non-sticky error must not poison the next call
  throw error(std::string(where) + ": " + call + " failed: " + cudaGetErrorName(code) + " (" +
                  cudaGetErrorString(code) + ")",
              code, call);
}

std::vector<cudaGraphNode_t> nodes_of(cudaGraph_t graph, const char* what) {
  std::size_t count = 0;
  check(native::api().graph_get_nodes(graph, nullptr, &count), "cudaGraphGetNodes", what);
  std::vector<cudaGraphNode_t> nodes(count);
  if (count)
    check(native::api().graph_get_nodes(graph, nodes.data(), &count), "cudaGraphGetNodes", what);
  nodes.resize(count);
  return nodes;
}

}  // namespace

capture_guard::capture_guard(cudaStream_t stream, cudaStreamCaptureMode mode) {
  refuse_legacy_stream(stream, "capture_guard");
  native::begin_capture(stream, mode, {});
  stream_ = stream;
}

capture_guard::capture_guard(cudaGraph_t graph, cudaStream_t stream,
                             std::span<const cudaGraphNode_t> dependencies,
                             cudaStreamCaptureMode mode) {
  if (graph == nullptr)
    throw error("capture_guard: capturing into an existing graph needs a graph (got null)",
                cudaErrorInvalidValue, "cudaStreamBeginCaptureToGraph");
  refuse_legacy_stream(stream, "capture_guard");
  std::vector<cudaGraphNode_t> before = nodes_of(graph, "capture_guard (into a graph)");
  std::sort(before.begin(), before.end());
  check(native::api().stream_begin_capture_to_graph(stream, graph, dependencies.data(), nullptr,
                                                         dependencies.size(), mode),
             "cudaStreamBeginCaptureToGraph", "capture_guard (into a graph)");
  stream_ = stream;
  target_ = graph;
  target_nodes_before_ = std::move(before);
}

capture_guard::capture_guard(capture_guard&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)),
      target_(std::exchange(other.target_, nullptr)),
      target_nodes_before_(std::move(other.target_nodes_before_)) {}

capture_guard& capture_guard::operator=(capture_guard&& other) noexcept {
  if (this != &other) {
    abandon();
    stream_ = std::exchange(other.stream_, nullptr);
    target_ = std::exchange(other.target_, nullptr);
    target_nodes_before_ = std::move(other.target_nodes_before_);
  }
  return *this;
}

capture_guard::~capture_guard() { abandon(); }

unique_graph capture_guard::end() {
  if (!active())
    throw error("capture_guard::end: no capture in progress (never begun, already ended, or moved from)",
                cudaErrorIllegalState, "cudaStreamEndCapture");
  if (into_existing_graph())
    throw error("capture_guard::end: this guard captures into an existing graph; use end_into()",
                cudaErrorIllegalState, "cudaStreamEndCapture");
  return native::end_capture(std::exchange(stream_, nullptr), {});
}

std::vector<cudaGraphNode_t> capture_guard::end_into() {
  if (!active())
    throw error("capture_guard::end_into: no capture in progress (never begun, already ended, or moved from)",
                cudaErrorIllegalState, "cudaStreamEndCapture");
  if (!into_existing_graph())
    throw error("capture_guard::end_into: this guard captures into a new graph; use end()",
                cudaErrorIllegalState, "cudaStreamEndCapture");
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* leaves = nullptr;
  std::size_t leaf_count = 0;
  const cudaError_t info = native::api().stream_get_capture_info(stream_, &status, nullptr, nullptr,
                                                                 &leaves, nullptr, &leaf_count);
  std::vector<cudaGraphNode_t> result;
  if (info == cudaSuccess) result.assign(leaves, leaves + leaf_count);
  // The capture ends whatever the query said: the guard must not stay active.
  cudaGraph_t graph = nullptr;
  const cudaError_t code = native::api().stream_end_capture(std::exchange(stream_, nullptr), &graph);
  target_ = nullptr;
  target_nodes_before_.clear();
  check(info, "cudaStreamGetCaptureInfo", "capture_guard::end_into");
  check(code, "cudaStreamEndCapture", "capture_guard::end_into");
  return result;
}

void capture_guard::abandon() noexcept {
  if (!active()) return;
  if (target_ == nullptr) {
    native::abandon_capture(std::exchange(stream_, nullptr));
    return;
  }
  cudaGraph_t graph = nullptr;
  (void)native::api().stream_end_capture(std::exchange(stream_, nullptr), &graph);
  // Remove what the abandoned region added to the caller's graph.
  try {
    for (cudaGraphNode_t n : nodes_of(target_, "capture_guard::abandon"))
      if (!std::binary_search(target_nodes_before_.begin(), target_nodes_before_.end(), n))
        native::destroy_node(n);
  } catch (...) {
    // nothing more can be done while unwinding
  }
  target_ = nullptr;
  target_nodes_before_.clear();
  (void)native::api().get_last_error();  // an invalidated capture must not fail the thread's next call
}

capture_mode_scope::capture_mode_scope(cudaStreamCaptureMode mode) : previous_(mode) {
  check(native::api().thread_exchange_stream_capture_mode(&previous_),
             "cudaThreadExchangeStreamCaptureMode", "capture_mode_scope");
}

capture_mode_scope::~capture_mode_scope() {
  (void)native::api().thread_exchange_stream_capture_mode(&previous_);
}

cudaGraphNode_t append_child_to_capture(cudaStream_t stream, cudaGraph_t child) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  std::size_t dep_count = 0;
  check(native::api().stream_get_capture_info(stream, &status, nullptr, &graph, &deps, nullptr,
                                                   &dep_count),
             "cudaStreamGetCaptureInfo", "append_child_to_capture");
  if (status != cudaStreamCaptureStatusActive || graph == nullptr)
    throw error("append_child_to_capture: the stream is not being captured",
                cudaErrorStreamCaptureImplicit, "cudaStreamGetCaptureInfo");
  cudaGraphNode_t node = native::add_child(graph, native::deps_span(deps, dep_count), child,
                                           native::child_ownership::clone, {});
  try {
    native::set_capture_dependencies(stream, {&node, 1}, {});
  } catch (...) {
    native::destroy_node(node);  // the capture stays as it was
    throw;
  }
  return node;
}

bool is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(native::api().stream_is_capturing(stream, &status), "cudaStreamIsCapturing",
             "is_capturing");
  return status == cudaStreamCaptureStatusActive;
}

}  // namespace cudag
