#pragma once
// Node name -> declaration index, built once per graph. An open-addressing
// table (linear probing, at most half full) of 8-byte slots: 32 bits of the
// name's hash and the node's index. A lookup touches one slot and, only when
// the hash bits agree, the node's name; std::unordered_map's bucket -> node ->
// key chain made name resolution the largest cost of checking 400,000 edges.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag::check_detail {

class name_index {
 public:
  name_index() = default;
  /// Indexes nothing yet; names are read from `nodes`, which must outlive it.
  explicit name_index(const std::vector<node>& nodes)
      : nodes_(&nodes), slots_(std::bit_ceil(std::max<std::size_t>(2 * nodes.size(), 16))) {
    mask_ = slots_.size() - 1;
  }

  /// Adds node `index` under its name; returns the index already held when
  /// the name is present (the table is left unchanged then).
  std::optional<std::uint32_t> insert(std::uint32_t index) {
    const std::string_view name = (*nodes_)[index].name;
    const std::uint32_t tag = tag_of(name);
    for (std::size_t at = tag & mask_;; at = (at + 1) & mask_) {
      slot& s = slots_[at];
      if (s.index == empty) {
        s = slot{tag, index};
        return std::nullopt;
      }
      if (s.tag == tag && (*nodes_)[s.index].name == name) return s.index;
    }
  }

  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name) const {
    if (!nodes_) return std::nullopt;
    const std::uint32_t tag = tag_of(name);
    for (std::size_t at = tag & mask_;; at = (at + 1) & mask_) {
      const slot& s = slots_[at];
      if (s.index == empty) return std::nullopt;
      if (s.tag == tag && (*nodes_)[s.index].name == name) return s.index;
    }
  }

 private:
  static constexpr std::uint32_t empty = ~0u;
  struct slot {
    std::uint32_t tag = 0;
    std::uint32_t index = empty;
  };

  static std::uint32_t tag_of(std::string_view name) noexcept {
    const std::size_t h = std::hash<std::string_view>{}(name);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }

  // The table holds at most nodes.size() names in twice as many slots, so
  // probing always meets an empty slot.
  const std::vector<node>* nodes_ = nullptr;
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace cudag::check_detail
