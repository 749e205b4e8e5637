#include "cudag/error.hpp"

namespace cudag {

namespace {
/// Errors that mean this process cannot use a GPU at all: no device, no
/// driver, a driver too old for the runtime, or only the stub library.
bool no_usable_device(cudaError_t code) noexcept {
  switch (code) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorCallRequiresNewerDriver:
      return true;
    default:
      return false;
  }
}

std::string cuda_message(cudaError_t code, const char* call, std::string_view node) {
  std::string message;
  message.reserve(128);
  if (no_usable_device(code)) message += "no usable CUDA device was found: ";
  message += call;
  message += " failed";
  if (!node.empty()) {
    message += " for node '";
    message += node;
    message += '\'';
  }
  message += ": ";
  message += cudaGetErrorName(code);
  message += " (";
  message += cudaGetErrorString(code);
  message += ')';
  return message;
}
}  // namespace

error::error(std::string message, cudaError_t code, std::string call, std::string node)
    : std::runtime_error(std::move(message)),
      code_(code),
      call_(std::move(call)),
      node_(std::move(node)) {}

void throw_cuda_error(cudaError_t code, const char* call, std::string_view node) {
  (void)cudaGetLastError();  // a non-sticky error must not poison the next call
  // Keep only the function name of a checked expression such as "cudaFree(p)".
  std::string_view expression(call);
  std::string function(expression.substr(0, expression.find('(')));
  throw error(cuda_message(code, function.c_str(), node), code, function, std::string(node));
}

}  // namespace cudag
