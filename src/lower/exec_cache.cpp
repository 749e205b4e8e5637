// A bounded cache of executable graphs keyed by topology and shape: nothing
// to do on an exact hit, update on a hit, instantiate on a miss, least
// recently used evicted under a memory and a count cap, graph memory trimmed
// after evicting.
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

enum tag : std::uint64_t {
  node_tag = 1,
  param_tag,
  condition_tag,
  graph_tag,
  value_tag,
  shape_tag,
  binding_tag
};

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
  // An edge's kind is part of the topology: CUDA cannot change it in place.
  for (std::size_t k = 0; k < n.deps.size(); ++k)
    deps.add(std::hash<std::string_view>{}(n.deps[k]) ^
             (static_cast<std::size_t>(n.dependency_kind(k)) * 0x9E3779B97F4A7C15ull));
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
  } else if (const auto* k = std::get_if<kernel_node>(&n.params)) {
    // Launch attributes live on the template's node: no setter reaches an
    // executable graph's, so another attribute is another topology.
    h.u64((std::uint64_t{k->cluster.x} << 32) | k->cluster.y);
    h.u64(k->cluster.z);
    h.u64((k->cooperative ? 1u : 0u) | (std::uint64_t(k->mem_sync_domain) << 8));
    h.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(k->shared_carveout)));
    const access_policy_window& w = k->access_policy;
    const auto ratio_bits = std::bit_cast<std::uint32_t>(w.hit_ratio);
    h.u64(reinterpret_cast<std::uintptr_t>(w.base));
    h.u64(w.bytes);
    h.u64((std::uint64_t{ratio_bits} << 32) | (std::uint64_t(w.hit) << 8) | std::uint64_t(w.miss));
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

// ----------------------------------------------------------- shape key --
void hash_bytes(hasher& h, std::span<const std::byte> bytes) {
  h.u64(bytes.size());
  h.str(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void hash_value(hasher& h, const value& v) {
  h.u64((std::uint64_t{v.type.size} << 8) | v.source.index());
  std::visit(
      [&](const auto& source) {
        using S = std::remove_cvref_t<decltype(source)>;
        if constexpr (std::is_same_v<S, literal>) {
          hash_bytes(h, {source.bytes.data(), source.bytes.size()});
        } else if constexpr (std::is_same_v<S, buffer_ref>) {
          h.str(source.name);
          h.u64(source.offset_bytes);
        } else {
          h.str(source.name);
        }
      },
      v.source);
}

void hash_dim(hasher& h, const dim3& d) {
  h.u64((std::uint64_t{d.x} << 32) | d.y);
  h.u64(d.z);
}

std::uint64_t graph_values_key(const graph_spec& g);

/// Everything of a node that topology_key leaves out.
std::uint64_t node_values_key(const node& n) {
  hasher h(value_tag);
  h.str(n.name);
  for_each_value(n, [&](const value& v) { hash_value(h, v); });
  std::visit(
      [&](const auto& p) {
        using P = std::remove_cvref_t<decltype(p)>;
        if constexpr (std::is_same_v<P, kernel_node>) {
          h.u64(reinterpret_cast<std::uintptr_t>(p.function));
          hash_dim(h, p.grid);
          hash_dim(h, p.block);
          h.u64(p.shared_bytes);
          h.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(p.priority)));
          if (p.grid_from) {
            h.str(p.grid_from->param);
            h.u64(p.grid_from->items_per_block);
          }
          h.u64(p.shape_rules.size());
          for (const shape_rule& r : p.shape_rules) {
            h.u64(static_cast<std::uint64_t>(r.dim));
            h.str(r.param);
            h.u64(r.multiplier);
            h.u64(r.divisor);
          }
        } else if constexpr (std::is_same_v<P, memcpy_node>) {
          h.u64(p.bytes);
          h.u64(static_cast<std::uint64_t>(p.kind));
        } else if constexpr (std::is_same_v<P, memset_node>) {
          h.u64(p.element_size);
          h.u64(p.width);
          h.u64(p.height);
          h.u64(p.pitch_bytes);
        } else if constexpr (std::is_same_v<P, host_node>) {
          h.u64(reinterpret_cast<std::uintptr_t>(p.function.get()));
        } else if constexpr (std::is_same_v<P, captured_node>) {
          h.u64(reinterpret_cast<std::uintptr_t>(p.record.get()));
        } else if constexpr (std::is_same_v<P, child_node>) {
          h.u64(p.graph ? graph_values_key(*p.graph) : 0);
        } else if constexpr (std::is_same_v<P, conditional_node>) {
          for (const graph_spec& body : p.bodies) h.u64(graph_values_key(body));
        }
      },
      n.params);
  return h.done();
}

std::uint64_t graph_values_key(const graph_spec& g) {
  unordered_hasher nodes;
  for (const node& n : g.nodes) nodes.add(node_values_key(n));
  hasher h(graph_tag);
  nodes.into(h);
  return h.done();
}

/// Whether some kernel launch of `g` (nested graphs included) follows
/// parameter `name`: a grid rule or a shape rule reads it.
bool launch_follows(const graph_spec& g, std::string_view name) {
  for (const node& n : g.nodes) {
    if (const auto* k = std::get_if<kernel_node>(&n.params)) {
      if (k->grid_from && k->grid_from->param == name) return true;
      for (const shape_rule& r : k->shape_rules)
        if (r.param == name) return true;
    } else if (const auto* c = std::get_if<child_node>(&n.params)) {
      if (c->graph && launch_follows(*c->graph, name)) return true;
    } else if (const auto* k = std::get_if<conditional_node>(&n.params)) {
      for (const graph_spec& body : k->bodies)
        if (launch_follows(body, name)) return true;
    }
  }
  return false;
}

}  // namespace

std::uint64_t topology_key(const graph_spec& spec) { return graph_key(spec); }

std::uint64_t shape_key(const graph_spec& spec, std::span<const binding> bindings) {
  unordered_hasher bound;
  for (const binding& b : bindings) {
    if (!launch_follows(spec, b.name)) continue;  // rebound on an exact hit instead
    hasher h(binding_tag);
    h.str(b.name);
    h.u64(b.type.size);
    hash_bytes(h, b.bytes);
    bound.add(h.done());
  }
  hasher h(shape_tag);
  h.u64(graph_values_key(spec));
  bound.into(h);
  return h.done();
}

exec_cache::exec_cache(exec_cache_options options) : options_(std::move(options)) {}

exec_cache::~exec_cache() {
  if (entries_.empty()) return;
  if (options_.stream) (void)native::api().stream_synchronize(*options_.stream);
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
  const std::uint64_t shape = shape_key(spec, bindings);
  std::size_t same_topology = 0;
  list::iterator oldest_of_topology = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key) continue;
    if (it->shape == shape) return move_in_place(it, spec, bindings, true);  // already there
    ++same_topology;
    oldest_of_topology = it;
  }
  if (same_topology >= std::max<std::size_t>(options_.execs_per_topology, 1)) {
    exec& moved = move_in_place(oldest_of_topology, spec, bindings, false);
    oldest_of_topology->shape = shape;
    return moved;
  }
  return add(key, shape, spec, bindings);
}

exec& exec_cache::move_in_place(list::iterator it, const graph_spec& spec,
                                std::span<const binding> bindings, bool same_shape) {
  entries_.splice(entries_.begin(), entries_, it);  // most recent; iterators stay valid
  entry& e = *it;
  try {
    if (same_shape) {
      // Only bindings outside the shape may differ: rebinding sends those
      // that did, and nothing else.
      e.executable->rebind(bindings);
      ++stats_.exact_hits;
    } else {
      e.executable->update(spec, bindings);
      ++stats_.hits;
    }
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
    entries_.erase(it);
    stats_.entries = entries_.size();
    throw;
  }
  evict_until(0, 0, &e);
  if (e.charge > options_.memory_cap) ++stats_.over_cap;
  return *e.executable;
}

exec& exec_cache::add(std::uint64_t key, std::uint64_t shape, const graph_spec& spec,
                      std::span<const binding> bindings) {
  ++stats_.misses;
  const footprint f = estimate_footprint(spec, options_.model);
  const std::size_t floor = f.exec_bytes + f.allocation_total_bytes;
  evict_until(floor, 1, nullptr);
  entries_.emplace_front();
  entry& e = entries_.front();
  e.key = key;
  e.shape = shape;
  try {
    make(e, spec, bindings, floor);
  } catch (...) {
    entries_.pop_front();
    throw;
  }
  stats_.entries = entries_.size();
  evict_until(0, 0, &e);
  if (e.charge > options_.memory_cap) ++stats_.over_cap;
  return *e.executable;
}

exec_cache::list::const_iterator exec_cache::newest(std::uint64_t key) const {
  return std::find_if(entries_.begin(), entries_.end(),
                      [&](const entry& e) { return e.key == key; });
}

bool exec_cache::contains(const graph_spec& spec) const {
  return newest(topology_key(spec)) != entries_.end();
}

bool exec_cache::contains(const graph_spec& spec, std::span<const binding> bindings) const {
  const std::uint64_t key = topology_key(spec), shape = shape_key(spec, bindings);
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const entry& e) { return e.key == key && e.shape == shape; });
}

std::size_t exec_cache::count(const graph_spec& spec) const {
  const std::uint64_t key = topology_key(spec);
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [&](const entry& e) { return e.key == key; }));
}

std::size_t exec_cache::bytes_of(const graph_spec& spec) const {
  const auto it = newest(topology_key(spec));
  return it == entries_.end() ? 0 : it->charge;
}

const measured_footprint* exec_cache::measured(const graph_spec& spec) const {
  const auto it = newest(topology_key(spec));
  return it == entries_.end() ? nullptr : &it->measured;
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
