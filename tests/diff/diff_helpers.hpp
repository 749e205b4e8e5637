#pragma once
// The graph diff tests' kernels and host function; the other builders of
// spec structs: spec_builders.hpp.
#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cudag/spec.hpp"
#include "spec_builders.hpp"

namespace cudag::diff_test {

using namespace cudag::spec_builders;

inline void kernel_a() {}
inline void kernel_b() {}

inline kernel_node kernel(std::vector<value> args = {}) {
  return kernel_calling(reinterpret_cast<const void*>(&kernel_a), "kernel_a", std::move(args));
}

inline std::shared_ptr<const host_function> some_host_function() {
  return std::make_shared<const host_function>([](std::span<const void* const>) {});
}

}  // namespace cudag::diff_test
