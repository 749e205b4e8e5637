// A bounded cache of executable graphs keyed by topology: update on a hit,
// instantiate on a miss, least recently used evicted under a memory and a
// count cap, graph memory trimmed after evicting.
#include "cudag/exec_cache.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>

#include "cudag/check.hpp"
#include "cudag/error.hpp"
#include "cudag/native_api.hpp"

namespace cudag {
namespace {

/// splitmix64's finalizer: spreads every input bit over the result.
constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// An ordered combination of 64-bit words; strings through std::hash (the
/// key lives in one process, so the standard library's hash will do).
class hasher {
 public:
  explicit hasher(std::uint64_t tag) noexcept : h_(mix(tag)) {}
  /// One multiply a word (the step is a bijection of the word for a given
  /// state); done() mixes the whole.
  void u64(std::uint64_t v) noexcept { h_ = (std::rotl(h_, 5) ^ v) * 0x517cc1b727220a95ull; }
  void str(std::string_view s) noexcept { u64(std::hash<std::string_view>{}(s)); }
  [[nodiscard]] std::uint64_t done() const noexcept { return mix(h_); }

 private:
  std::uint64_t h_;
};

/// An unordered combination (a multiset of words): the sum and the xor of
/// their mixed values.
class unordered_hasher {
 public:
  void add(std::uint64_t v) noexcept {
    const std::uint64_t m = mix(v);
    sum_ += m;
    xor_ ^= m;
    ++count_;
  }
  void into(hasher& h) const noexcept {
    h.u64(count_);
    h.u64(sum_);
    h.u64(xor_);
  }

 private:
  std::uint64_t sum_ = 0, xor_ = 0, count_ = 0;
};

enum tag : std::uint64_t { node_tag = 1, param_tag, condition_tag, graph_tag };

void hash_type(hasher& h, const type_tag& t) {
  h.str(t.info ? std::string_view(t.info->name()) : std::string_view());
  h.u64(t.size);
}

std::uint64_t graph_key(const graph_spec& g);

std::uint64_t node_key(const node& n) {
  hasher h(node_tag);
  h.str(n.name);
  h.u64(static_cast<std::uint64_t>(n.kind()));
  unordered_hasher deps;
  for (const std::string& d : n.deps) deps.add(std::hash<std::string_view>{}(d));
  deps.into(h);
  // What each value is, not what it holds: a node reading another graph
  // buffer or condition, or more or fewer values, cannot be updated in place.
  std::uint64_t values = 0;
  for_each_value(n, [&](const value& v) {
    ++values;
    h.u64((std::uint64_t{v.type.size} << 8) | v.source.index());
    if (const auto* b = std::get_if<buffer_ref>(&v.source)) {
      h.str(b->name);
      h.u64(b->offset_bytes);
    } else if (const auto* c = std::get_if<condition_ref>(&v.source)) {
      h.str(c->name);
    }
  });
  h.u64(values);
  if (const auto* a = std::get_if<mem_alloc_node>(&n.params)) {
    h.str(a->buffer);
    h.u64(a->bytes);
    h.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(a->device)));
  } else if (const auto* f = std::get_if<mem_free_node>(&n.params)) {
    h.str(f->buffer);
  } else if (const auto* c = std::get_if<child_node>(&n.params)) {
    h.u64(c->graph ? graph_key(*c->graph) : 0);
  } else if (const auto* k = std::get_if<conditional_node>(&n.params)) {
    h.u64(static_cast<std::uint64_t>(k->kind));
    h.str(k->condition);
    h.u64(k->bodies.size());
    for (const graph_spec& body : k->bodies) h.u64(graph_key(body));
  }
  return h.done();
}

/// Nodes, parameters and conditions as multisets: declaration order does
/// not count.
std::uint64_t graph_key(const graph_spec& g) {
  unordered_hasher nodes, params, conditions;
  for (const node& n : g.nodes) nodes.add(node_key(n));
  for (const param_decl& p : g.params) {
    hasher h(param_tag);
    h.str(p.name);
    hash_type(h, p.type);
    h.u64(p.external_buffer ? 1 : 0);
    params.add(h.done());
  }
  for (const condition_decl& c : g.conditions) {
    hasher h(condition_tag);
    h.str(c.name);
    h.u64(c.default_value);
    h.u64(c.assign_default ? 1 : 0);
    conditions.add(h.done());
  }
  hasher h(graph_tag);
  nodes.into(h);
  params.into(h);
  conditions.into(h);
  return h.done();
}

}  // namespace

std::uint64_t topology_key(const graph_spec& spec) { return graph_key(spec); }

exec_cache::exec_cache(exec_cache_options options) : options_(std::move(options)) {}

exec_cache::~exec_cache() {
  if (entries_.empty()) return;
  if (options_.stream) (void)native::api().stream_synchronize(*options_.stream);
  by_key_.clear();
  entries_.clear();
  if (options_.trim_on_evict) {
    int dev = options_.device;
    if (dev >= 0 || native::api().get_device(&dev) == cudaSuccess)
      (void)native::api().device_graph_mem_trim(dev);
  }
}

int exec_cache::device() {
  if (options_.device >= 0) return options_.device;
  int dev = 0;
  cuda_check(native::api().get_device(&dev), "cudaGetDevice");
  return dev;
}

void exec_cache::trim() {
  cuda_check(native::api().device_graph_mem_trim(device()), "cudaDeviceGraphMemTrim");
  ++stats_.trims;
}

void exec_cache::evict(list::iterator it) {
  stats_.bytes_in_use -= it->charge;
  by_key_.erase(it->key);
  entries_.erase(it);  // destroys the exec, then its template graph
  ++stats_.evictions;
  stats_.entries = entries_.size();
}

void exec_cache::evict_until(std::size_t incoming_bytes, std::size_t incoming_count,
                             const entry* keep) {
  bool evicted = false;
  bool synchronized = false;
  for (;;) {
    const bool over_memory = stats_.bytes_in_use + incoming_bytes > options_.memory_cap;
    const bool over_count = entries_.size() + incoming_count > options_.count_cap;
    if (!over_memory && !over_count) break;
    auto victim = entries_.end();
    for (auto it = entries_.end(); it != entries_.begin();) {
      --it;
      if (&*it != keep) {
        victim = it;
        break;
      }
    }
    if (victim == entries_.end()) break;  // only the one at hand is left
    if (options_.stream && !synchronized) {
      // No launch of the exec may be running when it goes.
      cuda_check(native::api().stream_synchronize(*options_.stream), "cudaStreamSynchronize");
      synchronized = true;
    }
    evict(victim);
    evicted = true;
  }
  if (evicted && options_.trim_on_evict) trim();
}

void exec_cache::make(entry& e, const graph_spec& spec, std::span<const binding> bindings,
                      std::size_t floor) {
  const int dev = device();
  const std::size_t free_before = device_memory_free();
  const graph_memory_state graph_before = graph_memory(dev);
  exec fresh = instantiate(spec, bindings, options_.instantiate);
  if (options_.stream) {
    fresh.upload(*options_.stream);
    cuda_check(native::api().stream_synchronize(*options_.stream), "cudaStreamSynchronize");
  }
  const std::size_t free_after = device_memory_free();
  measured_footprint m;
  m.graph_after = graph_memory(dev);
  m.device_bytes = free_before > free_after ? free_before - free_after : 0;
  m.graph_reserved_bytes = m.graph_after.reserved_bytes > graph_before.reserved_bytes
                               ? m.graph_after.reserved_bytes - graph_before.reserved_bytes
                               : 0;
  e.executable.emplace(std::move(fresh));
  e.measured = m;
  e.charge = std::max(m.device_bytes, floor);
  stats_.bytes_in_use += e.charge;
}

exec& exec_cache::acquire(const graph_spec& spec, std::span<const binding> bindings) {
  return acquire(topology_key(spec), spec, bindings);
}

exec& exec_cache::acquire(std::uint64_t key, const graph_spec& spec,
                          std::span<const binding> bindings) {
  if (auto found = by_key_.find(key); found != by_key_.end()) {
    const list::iterator it = found->second;
    entries_.splice(entries_.begin(), entries_, it);  // most recent; iterators stay valid
    entry& e = *it;
    try {
      e.executable->update(spec, bindings);
      ++stats_.hits;
      return *e.executable;
    } catch (const check_error&) {
      throw;  // a bad spec: no instantiation would take it either
    } catch (const error& refusal) {
      ++stats_.refused_updates;
      last_refusal_ = "exec cache: graph '" + spec.name + "': the cached exec of its topology " +
                      "cannot be updated to it: " + refusal.what();
      if (!options_.reinstantiate_on_refusal)
        throw error(last_refusal_, refusal.code(), refusal.call(), refusal.node());
    }
    // Instantiated afresh in place: references to it stay valid.
    ++stats_.misses;
    stats_.bytes_in_use -= e.charge;
    e.charge = 0;
    e.executable.reset();
    if (options_.trim_on_evict) trim();  // its graph memory goes back too
    const footprint f = estimate_footprint(spec, options_.model);
    const std::size_t floor = f.exec_bytes + f.allocation_total_bytes;
    evict_until(floor, 0, &e);
    try {
      make(e, spec, bindings, floor);
    } catch (...) {
      by_key_.erase(key);
      entries_.erase(it);
      stats_.entries = entries_.size();
      throw;
    }
    evict_until(0, 0, &e);
    if (e.charge > options_.memory_cap) ++stats_.over_cap;
    return *e.executable;
  }

  ++stats_.misses;
  const footprint f = estimate_footprint(spec, options_.model);
  const std::size_t floor = f.exec_bytes + f.allocation_total_bytes;
  evict_until(floor, 1, nullptr);
  entries_.emplace_front();
  entry& e = entries_.front();
  e.key = key;
  try {
    make(e, spec, bindings, floor);
  } catch (...) {
    entries_.pop_front();
    throw;
  }
  by_key_.emplace(key, entries_.begin());
  stats_.entries = entries_.size();
  evict_until(0, 0, &e);
  if (e.charge > options_.memory_cap) ++stats_.over_cap;
  return *e.executable;
}

bool exec_cache::contains(const graph_spec& spec) const {
  return by_key_.count(topology_key(spec)) != 0;
}

std::size_t exec_cache::bytes_of(const graph_spec& spec) const {
  auto it = by_key_.find(topology_key(spec));
  return it == by_key_.end() ? 0 : it->second->charge;
}

const measured_footprint* exec_cache::measured(const graph_spec& spec) const {
  auto it = by_key_.find(topology_key(spec));
  return it == by_key_.end() ? nullptr : &it->second->measured;
}

std::vector<std::string> exec_cache::recency() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const entry& e : entries_) names.push_back(e.executable ? e.executable->spec().name : "");
  return names;
}

void exec_cache::clear() {
  if (entries_.empty()) return;
  if (options_.stream)
    cuda_check(native::api().stream_synchronize(*options_.stream), "cudaStreamSynchronize");
  while (!entries_.empty()) evict(std::prev(entries_.end()));
  if (options_.trim_on_evict) trim();
}

}  // namespace cudag
