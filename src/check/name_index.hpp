#pragma once
// Node name -> declaration index, built once per graph. An open-addressing
// table (linear probing, at most half full) of 16-byte slots: the node's
// index, 28 bits of the name's hash with its length (up to 15), and the
// name's first 8 bytes. A name of 8 bytes or fewer is decided by its slot
// alone; a longer one is compared with the node's name only when hash bits,
// length class and first bytes all agree. A lookup thus touches one slot.
// A large graph's dependencies are resolved in two passes: the first reads
// every dependency name (each node's list is its own heap allocation: a miss
// a list, fetched well ahead) into a fingerprint by slot, the second looks
// them up from the fingerprints, prefetching slots a few lookups ahead, so
// that neither pass's misses wait on the other's. The table is a
// large_array: in huge pages where the system grants them.
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
#include "large_array.hpp"

namespace cudag::check_detail {

class name_index {
 public:
  name_index() = default;
  /// Indexes nothing yet; names are read from `nodes`, which must outlive it.
  explicit name_index(const std::vector<node>& nodes)
      : nodes_(&nodes), slots_(std::bit_ceil(std::max<std::size_t>(2 * nodes.size(), 16)), slot{}) {
    mask_ = slots_.size() - 1;
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


  /// A hash of 8-byte words, inlined: node names are short, and hashing is
  /// most of what a small graph's check costs. Every load is a whole word
  /// (the tail overlaps the last full one, or is prefix_of()), as bytes
  /// stored one by one and read back as a word stall the CPU.
  [[nodiscard]] static std::uint64_t hash_of(std::string_view name) noexcept {
    return hash_of(name, prefix_of(name));
  }

  /// hash_of() with the name's prefix_of() already computed.
  [[nodiscard]] static std::uint64_t hash_of(std::string_view name, std::uint64_t prefix) noexcept {
    if (name.size() < 8) return short_hash(name.size(), prefix);
    std::uint64_t h = seed_of(name.size());
    const char* at = name.data();
    std::size_t left = name.size();
    for (; left >= 8; left -= 8, at += 8) h = mix(h ^ load8(at));
    if (left > 0) h = mix(h ^ load8(name.data() + name.size() - 8));
    return mix(h);
  }

  /// True when `fingerprint` is that of a name of up to 7 bytes (which it
  /// then identifies).
  [[nodiscard]] static bool is_short(std::uint64_t fingerprint) noexcept {
    return (fingerprint >> 56) <= 7;
  }
  /// hash_of() the name whose fingerprint_of() is `fingerprint`, which
  /// is_short().
  [[nodiscard]] static std::uint64_t hash_of_short(std::uint64_t fingerprint) noexcept {
    constexpr std::uint64_t low7 = 0x00FFFFFFFFFFFFFFull;
    return short_hash(static_cast<std::size_t>(fingerprint >> 56), fingerprint & low7);
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

  /// find() of the name whose fingerprint_of() is `fingerprint`, which
  /// is_short(), and whose hash_of() is `hash`: decided by the slots alone.
  [[nodiscard]] std::optional<std::uint32_t> find_short(std::uint64_t fingerprint,
                                                        std::uint64_t hash) const noexcept {
    if (!nodes_) return std::nullopt;
    constexpr std::uint64_t low7 = 0x00FFFFFFFFFFFFFFull;
    const std::uint32_t tag = tag_of(hash, static_cast<std::size_t>(fingerprint >> 56));
    const std::uint64_t prefix = fingerprint & low7;
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const slot& s = slots_[at];
      if (s.index == empty) return std::nullopt;
      if (s.tag == tag && s.prefix == prefix) return s.index;
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
  static std::uint64_t seed_of(std::size_t size) noexcept {
    return 0x9E3779B97F4A7C15ull ^ (size * 0xFF51AFD7ED558CCDull);
  }
  // hash_of() a name of `size` < 8 bytes whose prefix_of() is `prefix`.
  static std::uint64_t short_hash(std::size_t size, std::uint64_t prefix) noexcept {
    return mix(seed_of(size) ^ prefix);
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
  large_array<slot> slots_;
  std::size_t mask_ = 0;
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
    __builtin_prefetch(&nodes[i].deps);  // and the kind beside it, for before(i)
  };
  for (std::uint32_t i = 0; i < ahead; ++i) hash_ahead(i);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t hash = hashes[i % ahead];
    if (i + ahead < count) hash_ahead(i + ahead);
    before(i);
    if (auto existing = names.insert(i, hash)) duplicate(i, *existing);
  }
}

/// Each dependency's name_index::fingerprint_of() by slot (node v's k-th
/// dependency at dep_begin[v] + k), in one pass over the nodes. Each node's
/// list of names is its own allocation, somewhere in the heap: reading them
/// is a cache and TLB miss a list, which is most of what resolving a large
/// graph costs. So the lists are fetched well ahead, in two stages (a node's
/// `deps` member, then the list it points to), and nothing else waits on
/// them: the table is probed in a second pass, from the fingerprints alone
/// for names of up to 7 bytes.
inline large_array<std::uint64_t> dependency_fingerprints(const std::vector<node>& nodes,
                                                          const std::uint32_t* dep_begin) {
  const std::size_t count = nodes.size();
  large_array<std::uint64_t> keys(dep_begin[count]);
  constexpr std::size_t lists_ahead = 16;
  constexpr std::size_t nodes_ahead = 4 * lists_ahead;
  for (std::size_t v = 0; v < count; ++v) {
    if (v + nodes_ahead < count) __builtin_prefetch(&nodes[v + nodes_ahead].deps);
    if (v + lists_ahead < count) {
      const auto& ahead = nodes[v + lists_ahead].deps;
      const char* list = reinterpret_cast<const char*>(ahead.data());
      const std::size_t bytes = std::min<std::size_t>(ahead.size() * sizeof(std::string), 512);
      for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(list + at);
    }
    std::uint64_t* out = keys.data() + dep_begin[v];
    for (const std::string& name : nodes[v].deps)
      *out++ = name_index::fingerprint_of(name, name_index::prefix_of(name));
  }
  return keys;
}

/// Resolves every dependency of `nodes` from its fingerprint `keys[slot]`
/// (dependency_fingerprints()), calling resolved(v, k, index) or
/// unknown(v, k) in order as resolve_dependencies() does. A name of up to 7
/// bytes is found from its fingerprint alone; a longer one is read again and
/// looked up by name. Lookups are prefetched a few slots ahead.
template <class Resolved, class Unknown>
void lookup_fingerprints(const name_index& names, const std::vector<node>& nodes,
                         const std::uint32_t* dep_begin, const std::uint64_t* keys,
                         Resolved&& resolved, Unknown&& unknown) {
  const std::size_t count = nodes.size();
  const std::size_t total = dep_begin[count];
  constexpr std::size_t ahead = 16;  // slots, a power of two
  std::uint64_t hashes[ahead] = {};
  const auto look_ahead = [&](std::size_t s) {
    if (name_index::is_short(keys[s])) {
      hashes[s % ahead] = name_index::hash_of_short(keys[s]);
      names.prefetch(hashes[s % ahead]);
    }
  };
  for (std::size_t s = 0; s < std::min(ahead, total); ++s) look_ahead(s);
  for (std::size_t v = 0; v < count; ++v) {
    const std::size_t first = dep_begin[v], last = dep_begin[v + 1];
    for (std::size_t s = first; s < last; ++s) {
      const std::uint64_t key = keys[s];
      const std::uint64_t hash = hashes[s % ahead];
      if (s + ahead < total) look_ahead(s + ahead);
      const bool is_short = name_index::is_short(key);
      const std::optional<std::uint32_t> found =
          is_short ? names.find_short(key, hash) : names.find(nodes[v].deps[s - first]);
      if (found)
        resolved(v, s - first, *found);
      else
        unknown(v, s - first);
    }
  }
}

/// Resolves every dependency name of `nodes` through `names`, in order (node
/// by node, each node's dependencies in their declared order): calls
/// resolved(v, k, index) for dependency k of node v, or unknown(v, k) when no
/// node has that name (unknown may throw; if it returns, resolution goes on).
/// `dep_begin` holds each node's first dependency slot (nodes.size() + 1
/// entries). Past the caches, the dependencies' fingerprints are read first
/// (dependency_fingerprints()), then looked up (lookup_fingerprints()).
template <class Resolved, class Unknown>
void resolve_dependencies(const name_index& names, const std::vector<node>& nodes,
                          const std::uint32_t* dep_begin, Resolved&& resolved, Unknown&& unknown) {
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
  const large_array<std::uint64_t> keys = dependency_fingerprints(nodes, dep_begin);
  lookup_fingerprints(names, nodes, dep_begin, keys.data(), resolved, unknown);
}

}  // namespace cudag::check_detail
