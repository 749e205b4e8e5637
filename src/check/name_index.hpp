#pragma once
// Node name -> declaration index, built once per graph. An open-addressing
// table (linear probing, at most half full) of 16-byte slots: the node's
// index, 28 bits of the name's hash with its length (up to 15), and the
// name's first 8 bytes. A name of 8 bytes or fewer is decided by its slot
// alone; a longer one is compared with the node's name only when hash bits,
// length class and first bytes all agree. A lookup thus touches one slot,
// and resolve_dependencies() hashes a batch of dependencies ahead and
// prefetches their slots, so that the cache misses of a large graph's lookups
// overlap.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
  /// With `fingerprints`, insert() also keeps each node's fingerprint_of()
  /// by index, for names_node(), past the caches (a small graph's names
  /// are compared in place).
  name_index(const std::vector<node>& nodes, bool fingerprints) : name_index(nodes) {
    if (fingerprints && nodes.size() > 4096) fingerprints_.resize(nodes.size());
  }

  /// A name in a word: the name itself, zero-padded, with its length in the
  /// top byte, for names of up to 7 bytes; for longer ones their first 7
  /// bytes and 0xFF on top. Equal names have equal fingerprints, and names of
  /// up to 7 bytes with equal fingerprints are equal.
  [[nodiscard]] static std::uint64_t fingerprint_of(std::string_view name,
                                                    std::uint64_t prefix) noexcept {
    constexpr std::uint64_t low7 = 0x00FFFFFFFFFFFFFFull;
    if (name.size() <= 7) return prefix | (static_cast<std::uint64_t>(name.size()) << 56);
    return (prefix & low7) | ~low7;
  }

  /// True when node `index` exists and is named `name` (whose prefix_of()
  /// is `prefix`): where fingerprints are kept, one word compared, the names
  /// themselves only past 7 bytes.
  [[nodiscard]] bool names_node(std::uint32_t index, std::string_view name,
                                std::uint64_t prefix) const noexcept {
    if (fingerprints_.empty()) return nodes_ && index < nodes_->size() && (*nodes_)[index].name == name;
    return index < fingerprints_.size() && fingerprints_[index] == fingerprint_of(name, prefix) &&
           (name.size() <= 7 || (*nodes_)[index].name == name);
  }
  void prefetch_fingerprint(std::uint32_t index) const noexcept {
    if (index < fingerprints_.size()) __builtin_prefetch(&fingerprints_[index]);
  }

  /// A hash of 8-byte words, inlined: node names are short, and hashing is
  /// most of what a small graph's check costs. Every load is a whole word
  /// (the tail overlaps the last full one, or is prefix_of()), as bytes
  /// stored one by one and read back as a word stall the CPU.
  [[nodiscard]] static std::uint64_t hash_of(std::string_view name) noexcept {
    return hash_of(name, prefix_of(name));
  }

  /// hash_of() with the name's prefix_of() already computed.
  [[nodiscard]] static std::uint64_t hash_of(std::string_view name, std::uint64_t prefix) noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (name.size() * 0xFF51AFD7ED558CCDull);
    if (name.size() < 8) return mix(h ^ prefix);
    const char* at = name.data();
    std::size_t left = name.size();
    for (; left >= 8; left -= 8, at += 8) h = mix(h ^ load8(at));
    if (left > 0) h = mix(h ^ load8(name.data() + name.size() - 8));
    return mix(h);
  }

  /// The first min(size, 8) bytes of `name`, zero-padded, in a word.
  [[nodiscard]] static std::uint64_t prefix_of(std::string_view name) noexcept {
    const char* p = name.data();
    const std::size_t n = name.size();
    const auto byte = [&](std::size_t i) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
    };
    if (n >= 8) return load8(p);
    if (n >= 4) {
      const std::uint64_t low = load4(p), high = load4(p + n - 4);
      return low | ((high >> (8 * (8 - n))) << 32);
    }
    if (n == 3) return byte(0) | (byte(1) << 8) | (byte(2) << 16);
    if (n == 2) return byte(0) | (byte(1) << 8);
    return n == 1 ? byte(0) : 0;
  }

  /// Adds node `index` under its name; returns the index already held when
  /// the name is present (the table is left unchanged then).
  std::optional<std::uint32_t> insert(std::uint32_t index) {
    return insert(index, hash_of((*nodes_)[index].name));
  }

  /// insert() with the name's hash_of() already computed.
  std::optional<std::uint32_t> insert(std::uint32_t index, std::uint64_t hash) {
    const std::string_view name = (*nodes_)[index].name;
    const std::uint32_t tag = tag_of(hash, name.size());
    const std::uint64_t prefix = prefix_of(name);
    if (!fingerprints_.empty()) fingerprints_[index] = fingerprint_of(name, prefix);
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      slot& s = slots_[at];
      if (s.index == empty) {
        s = slot{index, tag, prefix};
        return std::nullopt;
      }
      if (matches(s, tag, prefix, name)) return s.index;
    }
  }

  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name) const {
    const std::uint64_t prefix = prefix_of(name);
    return find(name, hash_of(name, prefix), prefix);
  }

  /// find() with the name's hash_of() already computed.
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name, std::uint64_t hash) const {
    return find(name, hash, prefix_of(name));
  }

  /// find() with the name's hash_of() and prefix_of() already computed.
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view name, std::uint64_t hash,
                                                  std::uint64_t prefix) const {
    if (!nodes_) return std::nullopt;
    const std::uint32_t tag = tag_of(hash, name.size());
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const slot& s = slots_[at];
      if (s.index == empty) return std::nullopt;
      if (matches(s, tag, prefix, name)) return s.index;
    }
  }

  void prefetch(std::uint64_t hash) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & mask_]);
  }

 private:
  static constexpr std::uint32_t empty = ~0u;
  static std::uint64_t load8(const char* p) noexcept {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    return word;
  }
  static std::uint64_t load4(const char* p) noexcept {
    std::uint32_t word;
    std::memcpy(&word, p, 4);
    return word;
  }
  static std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  struct slot {
    std::uint32_t index = empty;
    std::uint32_t tag = 0;
    std::uint64_t prefix = 0;
  };

  // High hash bits (the low ones pick the slot) and the length, capped at 15.
  static std::uint32_t tag_of(std::uint64_t hash, std::size_t length) noexcept {
    return (static_cast<std::uint32_t>(hash >> 32) & ~0xFu) |
           static_cast<std::uint32_t>(std::min<std::size_t>(length, 15));
  }
  // Equal tags mean equal lengths up to 15; a name of at most 8 bytes is then
  // all in the prefix (zero-padded, and its length tells "a" from "a\0").
  bool matches(const slot& s, std::uint32_t tag, std::uint64_t prefix, std::string_view name) const {
    return s.tag == tag && s.prefix == prefix &&
           (name.size() <= 8 || (*nodes_)[s.index].name == name);
  }

  // The table holds at most nodes.size() names in twice as many slots, so
  // probing always meets an empty slot.
  const std::vector<node>* nodes_ = nullptr;
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  std::vector<std::uint64_t> fingerprints_;  // by node index, when kept
};

/// Inserts every node of `nodes` into `names`, in declaration order: calls
/// before(i) first (it may throw), then duplicate(i, existing) where node i's
/// name is already held by node `existing` (it may throw; if it returns,
/// node i is left out). Past the caches, names are hashed a few nodes ahead
/// of their insertion and their slots prefetched, so that the slots' cache
/// misses overlap.
template <class Before, class Duplicate>
void index_all(name_index& names, const std::vector<node>& nodes, Before&& before,
               Duplicate&& duplicate) {
  const auto count = static_cast<std::uint32_t>(nodes.size());
  if (count <= 4096) {
    for (std::uint32_t i = 0; i < count; ++i) {
      before(i);
      if (auto existing = names.insert(i)) duplicate(i, *existing);
    }
    return;
  }
  constexpr std::uint32_t ahead = 16;
  std::uint64_t hashes[ahead];
  const auto hash_ahead = [&](std::uint32_t i) {
    hashes[i % ahead] = name_index::hash_of(nodes[i].name);
    names.prefetch(hashes[i % ahead]);
  };
  for (std::uint32_t i = 0; i < ahead; ++i) hash_ahead(i);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t hash = hashes[i % ahead];
    if (i + ahead < count) hash_ahead(i + ahead);
    before(i);
    if (auto existing = names.insert(i, hash)) duplicate(i, *existing);
  }
}

/// Resolves every dependency name of `nodes` through `names`, in order (node
/// by node, each node's dependencies in their declared order): calls
/// resolved(v, k, index) for dependency k of node v, or unknown(v, k) when no
/// node has that name (unknown may throw; if it returns, resolution goes on).
/// Hashes run a few dependencies ahead of the lookups, which prefetch.
template <class Resolved, class Unknown>
void resolve_dependencies(const name_index& names, const std::vector<node>& nodes,
                          Resolved&& resolved, Unknown&& unknown) {
  // Chains name the node declared just before: it is tried before the table.
  // Its name's length and prefix are taken once a node, each dependency's
  // prefix once.
  struct previous_name {
    std::size_t size = 0;
    std::uint64_t prefix = 0;
    bool exists = false;
  };
  const auto previous_of = [&](std::size_t v) {
    if (v == 0) return previous_name{};
    const std::string& previous = nodes[v - 1].name;
    return previous_name{previous.size(), name_index::prefix_of(previous), true};
  };
  const auto is_previous = [&](const previous_name& previous, std::size_t v,
                               const std::string& name, std::uint64_t prefix) {
    return previous.exists && previous.size == name.size() && previous.prefix == prefix &&
           (name.size() <= 8 || nodes[v - 1].name == name);
  };
  if (nodes.size() <= 4096) {  // the table is in cache: no pipeline, no hash for a chain
    for (std::size_t v = 0; v < nodes.size(); ++v) {
      const auto& deps = nodes[v].deps;
      if (deps.empty()) continue;
      const previous_name previous = previous_of(v);
      for (std::size_t k = 0; k < deps.size(); ++k) {
        const std::uint64_t prefix = name_index::prefix_of(deps[k]);
        if (is_previous(previous, v, deps[k], prefix))
          resolved(v, k, static_cast<std::uint32_t>(v - 1));
        else if (auto found = names.find(deps[k], name_index::hash_of(deps[k], prefix), prefix))
          resolved(v, k, *found);
        else
          unknown(v, k);
      }
    }
    return;
  }
  // Two passes over each batch of dependencies: the first fetches their
  // strings (each node's list is its own allocation: fetched a few nodes
  // ahead), hashes them and prefetches their slots, so that a batch's cache
  // misses are all in flight at once; the second finds them in cache.
  constexpr std::size_t batch = 1024;
  constexpr std::size_t lists_ahead = 8;
  std::vector<std::uint64_t> hashes(batch), prefixes(batch);
  const std::size_t count = nodes.size();
  std::size_t node_a = 0, dep_a = 0;  // the next dependency to hash
  std::size_t node_b = 0, dep_b = 0;  // the next dependency to look up
  while (node_b < count) {
    std::size_t hashed = 0;
    while (node_a < count && hashed < batch) {
      if (dep_a == 0 && node_a + lists_ahead < count) {
        const char* list = reinterpret_cast<const char*>(nodes[node_a + lists_ahead].deps.data());
        __builtin_prefetch(list);
        __builtin_prefetch(list + 64);
        __builtin_prefetch(list + 128);
      }
      const auto& deps = nodes[node_a].deps;
      for (; dep_a < deps.size() && hashed < batch; ++dep_a, ++hashed) {
        const std::uint64_t prefix = name_index::prefix_of(deps[dep_a]);
        const std::uint64_t hash = name_index::hash_of(deps[dep_a], prefix);
        names.prefetch(hash);
        hashes[hashed] = hash;
        prefixes[hashed] = prefix;
      }
      if (dep_a < deps.size()) break;  // the batch ends inside this node's list
      ++node_a;
      dep_a = 0;
    }
    previous_name previous = previous_of(node_b);
    for (std::size_t i = 0; i < hashed; ++i) {
      while (dep_b == nodes[node_b].deps.size()) {
        ++node_b;
        dep_b = 0;
        previous = previous_of(node_b);
      }
      const std::string& name = nodes[node_b].deps[dep_b];
      if (is_previous(previous, node_b, name, prefixes[i]))
        resolved(node_b, dep_b, static_cast<std::uint32_t>(node_b - 1));
      else if (auto found = names.find(name, hashes[i], prefixes[i]))
        resolved(node_b, dep_b, *found);
      else
        unknown(node_b, dep_b);
      ++dep_b;
    }
    // Past the nodes whose lists are done, those without dependencies too.
    while (node_b < count && dep_b == nodes[node_b].deps.size()) {
      ++node_b;
      dep_b = 0;
    }
  }
}

/// True when `hints` (graph_spec::dependency_hints) has one entry per
/// dependency of `nodes`, so that resolve_hinted() may read it.
[[nodiscard]] inline bool hints_fit(const std::vector<std::uint32_t>& hints,
                                    std::size_t dependency_count) noexcept {
  return !hints.empty() && hints.size() == dependency_count;
}

/// resolve_dependencies() for a spec whose dependency hints fit (hints_fit();
/// `names` keeps fingerprints): the same calls in the same order, but a
/// dependency whose hint is in range and names the node of that index (its
/// fingerprint, and past 7 bytes the whole name, equal) is resolved to it
/// without hashing; any other is looked up by name. Names being unique
/// (index_all() refused duplicates first), a hint that passes is the node the
/// name lookup would find. Past the caches, fingerprints are prefetched a
/// few dependencies ahead (the hints are read in order) and each node's
/// list a few nodes ahead.
template <class Resolved, class Unknown>
void resolve_hinted(const name_index& names, const std::vector<node>& nodes,
                    const std::vector<std::uint32_t>& hints, Resolved&& resolved,
                    Unknown&& unknown) {
  const std::size_t count = nodes.size();
  const bool far = count > 4096;
  constexpr std::size_t hints_ahead = 32;
  constexpr std::size_t lists_ahead = 8;
  const std::size_t total = hints.size();
  std::size_t slot = 0;
  for (std::size_t v = 0; v < count; ++v) {
    if (far && v + lists_ahead < count) {
      const char* list = reinterpret_cast<const char*>(nodes[v + lists_ahead].deps.data());
      __builtin_prefetch(list);
      __builtin_prefetch(list + 64);
      __builtin_prefetch(list + 128);
    }
    const auto& deps = nodes[v].deps;
    for (std::size_t k = 0; k < deps.size(); ++k, ++slot) {
      if (far && slot + hints_ahead < total) names.prefetch_fingerprint(hints[slot + hints_ahead]);
      const std::string& name = deps[k];
      const std::uint64_t prefix = name_index::prefix_of(name);
      const std::uint32_t hinted = hints[slot];
      if (names.names_node(hinted, name, prefix))
        resolved(v, k, hinted);
      else if (auto found = names.find(name, name_index::hash_of(name, prefix), prefix))
        resolved(v, k, *found);
      else
        unknown(v, k);
    }
  }
}

}  // namespace cudag::check_detail
