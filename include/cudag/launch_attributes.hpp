#pragma once
// The launch attributes of a kernel node beyond its priority (cluster,
// cooperative launch, memory-sync domain, shared-memory carveout, L2
// access-policy window), and the rules on them that check() applies at run
// time and the DSL where a node is declared: one implementation of each,
// constexpr, so that both front ends refuse exactly the same attributes.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudag {

/// An L2 access-policy window (cudaLaunchAttributeAccessPolicyWindow):
/// accesses to [base, base + bytes) take property `hit` (persisting: kept
/// in the set-aside L2) for a share `hit_ratio` of the range, `miss` for the
/// rest. A fixed address, as CUDA takes it; bytes 0: no window.
struct access_policy_window {
  const void* base = nullptr;
  std::size_t bytes = 0;
  float hit_ratio = 1.0f;  ///< 0 to 1
  cudaAccessProperty hit = cudaAccessPropertyPersisting;
  cudaAccessProperty miss = cudaAccessPropertyStreaming;
  friend constexpr bool operator==(const access_policy_window&, const access_policy_window&) = default;
};

/// The launch attributes of a kernel node beyond its priority (each left at
/// its default sends nothing). The builder's launch_config sets them
/// fluently; the DSL with with_attributes(kernel<...>(...), {...}).
struct launch_attributes {
  dim3 cluster{0, 0, 0};  ///< thread-block clusters of x*y*z blocks; 0x0x0: none
  bool cooperative = false;  ///< every block resident at once (grid-wide sync)
  cudaLaunchMemSyncDomain mem_sync_domain = cudaLaunchMemSyncDomainDefault;
  int shared_carveout = -1;  ///< percent of the unified cache, 0-100; -1: none
  access_policy_window access_policy;
};

[[nodiscard]] constexpr bool has_cluster(const launch_attributes& a) noexcept {
  return a.cluster.x != 0 || a.cluster.y != 0 || a.cluster.z != 0;
}

/// Which grid dimensions follow a parameter (known only at lowering).
struct grid_follows {
  bool x = false, y = false, z = false;
};

/// What can be wrong with a node's launch attributes: one bit each.
enum class launch_attribute_fault : unsigned {
  none = 0,
  cluster_partly_zero = 1u << 0,
  cluster_over_8_blocks = 1u << 1,
  cluster_over_a_following_dimension = 1u << 2,
  cluster_does_not_divide_grid = 1u << 3,
  carveout_out_of_range = 1u << 4,
  window_at_null = 1u << 5,
  window_ratio_out_of_range = 1u << 6,
};

/// Every fault of attributes `a` of a kernel launched over `grid`, or'ed.
/// A cluster must be 1 in a grid dimension that follows a parameter
/// (whether it divides it is known only at lowering, and changes with every
/// rebinding); in every other it must divide the grid.
[[nodiscard]] constexpr unsigned launch_attribute_faults(dim3 grid, grid_follows follows,
                                                         const launch_attributes& a) noexcept {
  using fault = launch_attribute_fault;
  unsigned faults = 0;
  const auto add = [&](launch_attribute_fault f) { faults |= static_cast<unsigned>(f); };
  if (has_cluster(a)) {
    const dim3 c = a.cluster;
    if (c.x == 0 || c.y == 0 || c.z == 0) add(fault::cluster_partly_zero);
    if (std::uint64_t{c.x} * c.y * c.z > 8) add(fault::cluster_over_8_blocks);
    const struct {
      unsigned grid, cluster;
      bool follows;
    } axes[] = {{grid.x, c.x, follows.x}, {grid.y, c.y, follows.y}, {grid.z, c.z, follows.z}};
    for (const auto& axis : axes) {
      if (axis.cluster <= 1) continue;
      if (axis.follows)
        add(fault::cluster_over_a_following_dimension);
      else if (axis.grid % axis.cluster != 0)
        add(fault::cluster_does_not_divide_grid);
    }
  }
  if (a.shared_carveout < -1 || a.shared_carveout > 100) add(fault::carveout_out_of_range);
  if (a.access_policy.bytes != 0) {
    if (a.access_policy.base == nullptr) add(fault::window_at_null);
    if (!(a.access_policy.hit_ratio >= 0.0f && a.access_policy.hit_ratio <= 1.0f))
      add(fault::window_ratio_out_of_range);
  }
  return faults;
}

/// The message for fault `fault` (one bit) of kernel node `node`, as
/// check() and the DSL give it: "kernel node 'k' has a cluster of 4x1x1
/// blocks, which does not divide its grid of 6x1x1 blocks".
[[nodiscard]] std::string describe_launch_attribute_fault(launch_attribute_fault fault,
                                                          std::string_view node, dim3 grid,
                                                          grid_follows follows,
                                                          const launch_attributes& a);

}  // namespace cudag
