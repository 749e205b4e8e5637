#pragma once
// Where the host nodes of one executable graph report their failures: the
// native layer's host calls record into it, the exec rethrows from it. Its
// own header, below both, so that the native layer does not include the
// exec's.
#include <exception>
#include <string_view>

#include "cudag/lean_std.hpp"

namespace cudag {

/// First failure of a host node since the last rethrow. Host nodes run on a
/// driver thread where an exception must not escape: they record it here.
/// Its state (a flag, a lock, the node's name and the exception) lives in
/// the library, so that this header needs neither <atomic> nor <mutex>.
class host_failure_sink {
 public:
  host_failure_sink();
  host_failure_sink(const host_failure_sink&) = delete;
  host_failure_sink& operator=(const host_failure_sink&) = delete;
  ~host_failure_sink();

  void record(std::string_view node, std::exception_ptr failure) noexcept;
  /// Rethrows the recorded failure as cudag::error naming the node, and clears it.
  void rethrow_if_failed();
  [[nodiscard]] bool failed() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace cudag
