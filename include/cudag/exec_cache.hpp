#pragma once
// A bounded cache of executable graphs keyed by topology and shape: a
// serving loop asks for the graph of this request's shape, and gets an exec
// already at that shape (an exact hit: no native call), one of the same
// topology moved to it by an update (a hit), or a fresh one (a miss); the
// least recently used ones are evicted to keep under a memory and a count
// cap.
//
//   cudag::exec_cache cache({.memory_cap = 256 << 20, .count_cap = 16,
//                            .execs_per_topology = 4, .stream = s});
//   cudag::exec& e = cache.acquire(spec_for(batch), binds);   // as is, updated or instantiated
//   e.launch(s);
//   cache.stats().exact_hits, .hits, .misses, .evictions, .bytes_in_use
//
// Why several execs of one topology: on current drivers an exec whose
// kernel launches changed after instantiation replays more slowly than one
// instantiated at that shape (docs/benchmarks.md, "Shape families"), so the
// hottest shapes deserve an exec each, and the rest share by update.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cudag/bindings.hpp"
#include "cudag/exec.hpp"
#include "cudag/footprint.hpp"
#include "cudag/spec.hpp"

namespace cudag {

/// A 64-bit key of a spec's topology: its nodes' names and kinds, the
/// edges between them, how many values each node reads and what each is
/// (its size; a literal, a parameter, or which graph buffer, at which
/// offset, or which condition), what is nested in child graphs and conditional
/// bodies (a conditional's kind, condition and bodies in order), the
/// declared parameters (name, type, external buffer) and conditions
/// (name, default value, reset), and a mem_alloc node's buffer, size and
/// device (CUDA cannot update them). Not part of it: parameter values and
/// which parameter a value reads, literals' bytes, launch dimensions,
/// kernel functions, the graph's own name,
/// and the order in which nodes, dependencies, parameters and conditions
/// were declared. Equal topologies give equal keys; different ones collide
/// with a chance of about 2^-64 a pair (a collision shows as a refused or
/// wrong update). Valid within one process (strings go through std::hash).
/// Cost: a few tens of nanoseconds a node.
[[nodiscard]] std::uint64_t topology_key(const graph_spec& spec);

/// A 64-bit key of a shape: what topology_key leaves out of the spec
/// (every value's source: literal bytes, the parameter read, buffer and
/// offset, condition; launch dimensions and rules; kernel and host
/// functions; copy and fill sizes; nested graphs' values) and the bindings
/// of the parameters that launch dimensions follow (grid and shape rules),
/// by name, type size and bytes, in any order. Other bindings (buffers,
/// scalars) are not part of a shape: an exact hit rebinds them. Collisions
/// as topology_key's.
[[nodiscard]] std::uint64_t shape_key(const graph_spec& spec, std::span<const binding> bindings);

struct exec_cache_options {
  /// Device memory the cached execs may take in all, in bytes (each
  /// charged as described at exec_cache::bytes_of).
  std::size_t memory_cap = std::size_t{1} << 30;
  /// Execs kept at most.
  std::size_t count_cap = 64;
  /// Execs of one topology kept at most, each at the shape it was last
  /// acquired for (0 counts as 1). Below it, a new shape of a cached
  /// topology instantiates an exec of its own (a miss); at it, the least
  /// recently acquired exec of that topology is updated to the new shape (a
  /// hit). The caps apply to all execs alike.
  std::size_t execs_per_topology = 1;
  /// Where a new exec is uploaded (mapping its graph memory, counted then)
  /// and what is synchronized before an eviction, so that no launch of an
  /// evicted exec is running when it is destroyed and its graph memory
  /// trimmed. Unset: no upload, no synchronization: the caller makes sure
  /// no launch of a cached exec runs during acquire().
  std::optional<cudaStream_t> stream;
  /// Device whose graph memory an eviction trims; -1: the current one.
  int device = -1;
  /// Trim graph memory (cudaDeviceGraphMemTrim) after each eviction.
  bool trim_on_evict = true;
  /// Where CUDA refuses to update a cached exec to the requested spec:
  /// true, instantiate afresh in its place (counted in refused_updates);
  /// false, throw the refusal (cudag::error naming the graph).
  bool reinstantiate_on_refusal = true;
  /// Estimates each exec's floor charge before it is made.
  footprint_model model = footprint_model::default_model();
  instantiate_options instantiate{};
};

struct exec_cache_stats {
  std::uint64_t exact_hits = 0;       ///< acquires served by an exec already at that shape
  std::uint64_t hits = 0;             ///< acquires served by an update of a cached exec
  std::uint64_t misses = 0;           ///< acquires that instantiated (refusals included)
  std::uint64_t evictions = 0;        ///< execs destroyed to stay under the caps
  std::uint64_t refused_updates = 0;  ///< hits CUDA refused to update or rebind (then instantiated afresh)
  std::uint64_t over_cap = 0;         ///< execs larger alone than memory_cap, kept anyway
  std::uint64_t trims = 0;            ///< cudaDeviceGraphMemTrim calls
  std::size_t bytes_in_use = 0;       ///< the cached execs' charges
  std::size_t entries = 0;
};

/// Not thread-safe (one thread at a time, like an exec).
///
/// A reference acquire() returns stays valid until that exec is evicted (by
/// a later acquire(), clear() or the cache's end). With one exec a
/// topology, a later acquire() of the same topology returns the same exec,
/// moved to the new spec, even after a refused update (instantiated afresh
/// in place). An exact hit rebinds the bindings (no native call for those
/// that did not change): a request's buffers may differ from the last one's.
///
/// Eviction order: least recently acquired first; never the exec the
/// acquire() at hand returns. An exec alone larger than memory_cap is
/// kept, alone, once every other is evicted (over_cap counts it): the
/// caller asked for it; the next miss evicts it first.
class exec_cache {
 public:
  explicit exec_cache(exec_cache_options options = {});
  ~exec_cache();
  exec_cache(const exec_cache&) = delete;
  exec_cache& operator=(const exec_cache&) = delete;

  /// An exec of `spec`'s topology at `spec` and `bindings`: one already
  /// there (exact hit), or one moved there by exec::update (hit), or
  /// instantiate() (and an upload on the stream) on a miss, after evicting least recently used execs until this one's
  /// estimate fits, and after measuring it until its charge fits. Throws
  /// what instantiate() throws (a check_error for a bad spec, on a hit too)
  /// and, with reinstantiate_on_refusal off, the refused update.
  exec& acquire(const graph_spec& spec, std::span<const binding> bindings);
  /// The same with `key` = topology_key(spec) computed by the caller, once
  /// for a spec it acquires again and again (the key costs a few tens of
  /// nanoseconds a node; a wrong key is the caller's collision).
  exec& acquire(std::uint64_t key, const graph_spec& spec, std::span<const binding> bindings);

  /// Whether an exec of this topology is cached (no recency change).
  [[nodiscard]] bool contains(const graph_spec& spec) const;
  /// Whether an exec of this topology is cached at this shape.
  [[nodiscard]] bool contains(const graph_spec& spec, std::span<const binding> bindings) const;
  /// Execs of this topology cached.
  [[nodiscard]] std::size_t count(const graph_spec& spec) const;
  /// What this topology's most recently acquired exec is charged (0 if not cached): the larger of
  /// its measured device memory (cudaMemGetInfo's drop across instantiate
  /// and upload, in the driver's steps) and its estimate (the model's
  /// exec_bytes plus every graph-owned buffer, allocation_total_bytes).
  [[nodiscard]] std::size_t bytes_of(const graph_spec& spec) const;
  /// The measurement of this topology's most recently acquired exec (null if not cached).
  [[nodiscard]] const measured_footprint* measured(const graph_spec& spec) const;
  /// Names of the cached execs' graphs, most recently acquired first.
  [[nodiscard]] std::vector<std::string> recency() const;
  /// The message of the last refused update ("" if none): names the graph.
  [[nodiscard]] const std::string& last_refusal() const noexcept { return last_refusal_; }

  [[nodiscard]] const exec_cache_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] const exec_cache_options& options() const noexcept { return options_; }
  /// Evicts everything (counted as evictions), then trims.
  void clear();

 private:
  struct entry {
    std::uint64_t key = 0;    ///< topology_key
    std::uint64_t shape = 0;  ///< shape_key of its last acquire
    std::optional<exec> executable;
    std::size_t charge = 0;
    measured_footprint measured;
  };
  using list = std::list<entry>;

  void make(entry& e, const graph_spec& spec, std::span<const binding> bindings,
            std::size_t floor);
  /// Moves entry `it`'s exec to `spec` and `bindings`: a rebind where it
  /// is at that shape already, else an update; a refusal instantiates
  /// afresh in place (or throws, as the options say).
  exec& move_in_place(list::iterator it, const graph_spec& spec, std::span<const binding> bindings,
                      bool same_shape);
  exec& add(std::uint64_t key, std::uint64_t shape, const graph_spec& spec,
            std::span<const binding> bindings);
  /// The most recently acquired entry of topology `key` (end() if none).
  [[nodiscard]] list::const_iterator newest(std::uint64_t key) const;
  void evict_until(std::size_t incoming_bytes, std::size_t incoming_count, const entry* keep);
  void evict(list::iterator it);
  void trim();
  [[nodiscard]] int device();

  exec_cache_options options_;
  list entries_;  ///< most recently acquired first; count_cap keeps the scans short
  exec_cache_stats stats_;
  std::string last_refusal_;
};

}  // namespace cudag
