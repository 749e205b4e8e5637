#pragma once
// Move-only owners of CUDA runtime handles. Destruction never throws; a
// failed destroy during unwinding is ignored (nothing useful can be done with
// it). Graphs, executable graphs and streams are made and destroyed through
// the native seam (native_api.hpp), so a recorder can stand in for CUDA.
#include <cuda_runtime_api.h>

#include <type_traits>

#include "cudag/error.hpp"
#include "cudag/lean_std.hpp"
#include "cudag/native_api.hpp"
#include "cudag/retained.hpp"

namespace cudag {

// A graph or exec destroyed may have dropped the last reference to what a
// graph kept alive (cudag/retained.hpp): released here, on this thread, if
// CUDA has called its destructor already.
struct graph_deleter {
  void operator()(cudaGraph_t g) const noexcept {
    (void)native::api().graph_destroy(g);
    (void)release_retained_objects();
  }
};
struct graph_exec_deleter {
  void operator()(cudaGraphExec_t g) const noexcept {
    (void)native::api().exec_destroy(g);
    (void)release_retained_objects();
  }
};
struct stream_deleter {
  void operator()(cudaStream_t s) const noexcept { (void)native::api().stream_destroy(s); }
};
struct event_deleter {
  void operator()(cudaEvent_t e) const noexcept { (void)cudaEventDestroy(e); }
};
struct device_memory_deleter {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};

using unique_graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, graph_deleter>;
using unique_graph_exec =
    std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, graph_exec_deleter>;
using unique_stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_deleter>;
using unique_event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, event_deleter>;

[[nodiscard]] inline unique_graph make_graph() {
  cudaGraph_t g = nullptr;
  cuda_check(native::api().graph_create(&g, 0), "cudaGraphCreate");
  return unique_graph(g);
}

[[nodiscard]] inline unique_stream make_stream(unsigned flags = cudaStreamNonBlocking) {
  cudaStream_t s = nullptr;
  cuda_check(native::api().stream_create(&s, flags), "cudaStreamCreateWithFlags");
  return unique_stream(s);
}

[[nodiscard]] inline unique_event make_event(unsigned flags = cudaEventDisableTiming) {
  cudaEvent_t e = nullptr;
  CUDAG_CUDA(cudaEventCreateWithFlags(&e, flags));
  return unique_event(e);
}

/// Device memory of n elements of T, freed with cudaFree.
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    void* p = nullptr;
    CUDAG_CUDA(cudaMalloc(&p, count * sizeof(T)));
    data_.reset(p);
  }
  [[nodiscard]] T* data() const noexcept { return static_cast<T*>(data_.get()); }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  std::unique_ptr<void, device_memory_deleter> data_;
  std::size_t count_ = 0;
};

}  // namespace cudag
