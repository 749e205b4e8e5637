#pragma once
// A typed value in device memory that kernels read through a pointer: the
// graph keeps the pointer, and set() changes the value before a replay with
// one small asynchronous copy on the launch stream, ordered like the launch.
#include <cuda_runtime_api.h>

#include <memory>
#include <type_traits>

#include "cudag/handles.hpp"

namespace cudag {

template <class T>
class device_scalar {
  static_assert(std::is_trivially_copyable_v<T>, "device_scalar<T> needs a trivially copyable T");

 public:
  explicit device_scalar(const T& initial = T{}) {
    void* p = nullptr;
    CUDAG_CUDA(cudaMalloc(&p, sizeof(T)));
    memory_.reset(p);
    // cudaMemcpy from pageable memory may return before its DMA lands, and
    // work on a non-blocking stream is not ordered after it: wait for it here.
    CUDAG_CUDA(cudaMemcpyAsync(p, &initial, sizeof(T), cudaMemcpyHostToDevice, cudaStreamLegacy));
    CUDAG_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
  }

  /// The device address: pass it to kernels or bind it to a T* parameter.
  [[nodiscard]] T* get() const noexcept { return static_cast<T*>(memory_.get()); }

  /// Enqueues the new value on `stream`: launches enqueued before it see the
  /// old value, launches after it the new one. The source is pageable host
  /// memory, which CUDA stages before returning, so `value` may die at once.
  void set(const T& value, cudaStream_t stream) {
    CUDAG_CUDA(cudaMemcpyAsync(memory_.get(), &value, sizeof(T), cudaMemcpyHostToDevice, stream));
  }

  /// Reads the value back (waits for `stream`).
  [[nodiscard]] T read(cudaStream_t stream) const {
    T out{};
    CUDAG_CUDA(cudaMemcpyAsync(&out, memory_.get(), sizeof(T), cudaMemcpyDeviceToHost, stream));
    CUDAG_CUDA(cudaStreamSynchronize(stream));
    return out;
  }

 private:
  std::unique_ptr<void, device_memory_deleter> memory_;
};

}  // namespace cudag
