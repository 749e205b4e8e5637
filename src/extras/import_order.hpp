#pragma once
// Which allocation an imported node's pointer refers to, by the graph's
// order rather than by address alone.
//
// CUDA hands a freed allocation's address to a later allocation of the same
// graph (malloc a, free a, malloc c: c == a). A pointer read back from a
// node therefore names the allocation of that address that is live along
// the node's dependency path: among the mem-alloc nodes the node depends on
// (directly or not) whose range holds the address, the one that comes last
// in the graph's order. CUDA orders allocations that share an address (the
// later one depends on the free of the earlier one), so that one is unique.
//
// Internal to import (src/extras/import.cpp); a header of its own so that
// the cpu suite can test it without a GPU.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudag::import_detail {

/// A mem-alloc node of the graph being imported.
struct graph_allocation {
  std::size_t node = 0;  ///< index of the alloc node in the graph's node list
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};

class allocation_order {
 public:
  /// `deps[i]`: indices of the nodes node i depends on (any order,
  /// duplicates allowed); `allocations`: the graph's mem-alloc nodes.
  /// Throws cudag::error when the dependencies have a cycle or an index
  /// out of range.
  allocation_order(const std::vector<std::vector<std::size_t>>& deps,
                   std::vector<graph_allocation> allocations);

  /// The allocation holding `address` that is live at node `user`: the last,
  /// in the graph's order, of the allocations `user` depends on that hold
  /// it; null when none of them does.
  [[nodiscard]] const graph_allocation* live_at(std::size_t user, std::uintptr_t address) const;

  /// The allocations node `user` depends on, in the graph's order (a child
  /// graph node passes them to its body).
  [[nodiscard]] std::vector<graph_allocation> before(std::size_t user) const;

  /// Position of node `i` in a topological order of the graph.
  [[nodiscard]] std::size_t position(std::size_t i) const { return position_[i]; }

 private:
  std::vector<graph_allocation> allocations_;  // sorted by position of their node
  std::size_t words_ = 0;                       // 64-bit words of one ancestor set
  std::vector<std::uint64_t> ancestors_;        // per node: bit a = allocations_[a] is an ancestor
  std::vector<std::size_t> position_;

  [[nodiscard]] bool depends_on(std::size_t user, std::size_t allocation) const {
    return (ancestors_[user * words_ + allocation / 64] >> (allocation % 64)) & 1u;
  }
};

}  // namespace cudag::import_detail
