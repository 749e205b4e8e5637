#pragma once
// One exception type for every cudag failure: what failed, the CUDA call and
// its error name where there is one, and the node at fault by name.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace cudag {

class error : public std::runtime_error {
 public:
  error(std::string message, cudaError_t code = cudaSuccess, std::string call = {},
        std::string node = {});

  /// The CUDA error, cudaSuccess when the failure did not come from CUDA.
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  /// The CUDA API call that failed ("" when none).
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// The node at fault ("" when the failure is not about one node).
  [[nodiscard]] const std::string& node() const noexcept { return node_; }

 private:
  cudaError_t code_;
  std::string call_;
  std::string node_;
};

/// Throws cudag::error for a failed CUDA call; clears CUDA's last (non-sticky)
/// error so that the thread stays usable. Cold path, kept out of line.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, std::string_view node = {});

/// Checks one CUDA return code. `call` is the API's name, `node` the graph
/// node the call was made for, if any.
inline void cuda_check(cudaError_t code, const char* call, std::string_view node = {}) {
  if (code != cudaSuccess) [[unlikely]]
    throw_cuda_error(code, call, node);
}

}  // namespace cudag

/// Checks a CUDA runtime call and names it in the error: CUDAG_CUDA(cudaFree(p)).
#define CUDAG_CUDA(call_expression) ::cudag::cuda_check((call_expression), #call_expression)
/// Same, naming the graph node the call was made for.
#define CUDAG_CUDA_NODE(call_expression, node_name) \
  ::cudag::cuda_check((call_expression), #call_expression, (node_name))
