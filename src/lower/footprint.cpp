// Footprint of a graph: node counts, the executable's device memory by a
// per-kind model (default or measured on the device), the peak of its
// graph-owned buffers, and the memory an instantiation measurably took.
#include "cudag/footprint.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/exec_core.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_api.hpp"
#include "cudag/native_nodes.hpp"

namespace cudag {
namespace {

constexpr std::size_t kind_index(node_kind k) noexcept { return static_cast<std::size_t>(k); }

std::string mib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

// ------------------------------------------------ peak of graph buffers --
/// Maximum flow (Dinic) on a small network; capacities in bytes.
class max_flow {
 public:
  explicit max_flow(std::size_t n) : adjacency_(n), level_(n), next_(n) {}
  void edge(std::size_t from, std::size_t to, std::uint64_t capacity) {
    adjacency_[from].push_back(edges_.size());
    edges_.push_back({to, capacity});
    adjacency_[to].push_back(edges_.size());
    edges_.push_back({from, 0});
  }
  std::uint64_t run(std::size_t s, std::size_t t) {
    std::uint64_t total = 0;
    while (levels(s, t)) {
      std::fill(next_.begin(), next_.end(), 0);
      while (const std::uint64_t pushed = push(s, t, std::numeric_limits<std::uint64_t>::max()))
        total += pushed;
    }
    return total;
  }

 private:
  struct arc {
    std::size_t to;
    std::uint64_t capacity;
  };
  bool levels(std::size_t s, std::size_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::queue<std::size_t> q;
    level_[s] = 0;
    q.push(s);
    while (!q.empty()) {
      const std::size_t v = q.front();
      q.pop();
      for (std::size_t e : adjacency_[v])
        if (edges_[e].capacity > 0 && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[v] + 1;
          q.push(edges_[e].to);
        }
    }
    return level_[t] >= 0;
  }
  std::uint64_t push(std::size_t v, std::size_t t, std::uint64_t limit) {
    if (v == t) return limit;
    for (std::size_t& k = next_[v]; k < adjacency_[v].size(); ++k) {
      const std::size_t e = adjacency_[v][k];
      arc& a = edges_[e];
      if (a.capacity == 0 || level_[a.to] != level_[v] + 1) continue;
      if (const std::uint64_t pushed = push(a.to, t, std::min(limit, a.capacity))) {
        a.capacity -= pushed;
        edges_[e ^ 1].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }
  std::vector<arc> edges_;
  std::vector<std::vector<std::size_t>> adjacency_;
  std::vector<int> level_;
  std::vector<std::size_t> next_;
};

/// A block of graph-owned memory: live from node `from` to node `to`
/// (none: to the end of the graph).
struct block {
  std::size_t from;
  std::optional<std::size_t> to;
  std::uint64_t bytes;
};

struct graph_walk {
  footprint& out;

  /// Counts the nodes of `g` (nested ones included) and returns the peak of
  /// its graph-owned buffers; `unfreed` tells whether one outlives `g`.
  std::uint64_t walk(const graph_spec& g, bool& unfreed) {
    ++out.graphs;
    std::vector<block> blocks;
    std::unordered_map<std::string_view, std::size_t> block_of_buffer;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const node& n = g.nodes[i];
      ++out.nodes_by_kind[kind_index(n.kind())];
      ++out.nodes;
      if (const auto* a = std::get_if<mem_alloc_node>(&n.params)) {
        out.allocation_total_bytes += a->bytes;
        block_of_buffer[a->buffer] = blocks.size();
        blocks.push_back({i, std::nullopt, a->bytes});
      } else if (const auto* c = std::get_if<child_node>(&n.params)) {
        if (c->graph) {
          bool inner_unfreed = false;
          const std::uint64_t peak = walk(*c->graph, inner_unfreed);
          if (peak > 0)
            blocks.push_back({i, inner_unfreed ? std::nullopt : std::optional<std::size_t>(i), peak});
        }
      } else if (const auto* k = std::get_if<conditional_node>(&n.params)) {
        for (const graph_spec& body : k->bodies) {
          bool ignored = false;  // CUDA allows no alloc or free node in a body
          (void)walk(body, ignored);
        }
      }
    }
    if (blocks.empty()) return 0;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      if (const auto* f = std::get_if<mem_free_node>(&g.nodes[i].params))
        if (auto it = block_of_buffer.find(f->buffer); it != block_of_buffer.end())
          blocks[it->second].to = i;
    for (const block& b : blocks) unfreed = unfreed || !b.to;
    return peak(g, blocks);
  }

  /// The maximum-weight antichain of "a ends before b begins" (a path from
  /// a's end node to b's start node): W less the max flow of the split
  /// network (weighted Dilworth; the order is transitive since a block's
  /// start precedes its end, and closed again below to be safe).
  static std::uint64_t peak(const graph_spec& g, const std::vector<block>& blocks) {
    const std::size_t k = blocks.size();
    if (k == 0) return 0;
    std::uint64_t total = 0;
    for (const block& b : blocks) total += b.bytes;
    if (k == 1) return total;
    // Successors of each node.
    const std::size_t n = g.nodes.size();
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].name, i);
    std::vector<std::vector<std::size_t>> next(n);
    for (std::size_t i = 0; i < n; ++i)
      for (const std::string& d : g.nodes[i].deps)
        if (auto it = index.find(d); it != index.end()) next[it->second].push_back(i);
    // before[a][b]: block a ends before block b starts.
    std::vector<std::vector<char>> before(k, std::vector<char>(k, 0));
    std::vector<char> seen(n);
    for (std::size_t a = 0; a < k; ++a) {
      if (!blocks[a].to) continue;
      std::fill(seen.begin(), seen.end(), 0);
      std::vector<std::size_t> stack{*blocks[a].to};
      seen[*blocks[a].to] = 1;
      while (!stack.empty()) {
        const std::size_t v = stack.back();
        stack.pop_back();
        for (std::size_t w : next[v])
          if (!seen[w]) seen[w] = 1, stack.push_back(w);
      }
      for (std::size_t b = 0; b < k; ++b)
        if (b != a && seen[blocks[b].from] && blocks[b].from != *blocks[a].to) before[a][b] = 1;
    }
    for (std::size_t m = 0; m < k; ++m)
      for (std::size_t a = 0; a < k; ++a)
        if (before[a][m])
          for (std::size_t b = 0; b < k; ++b)
            if (before[m][b]) before[a][b] = 1;
    // Nodes: source, sink, a left and a right copy of each block.
    max_flow flow(2 + 2 * k);
    const std::size_t s = 0, t = 1;
    for (std::size_t a = 0; a < k; ++a) {
      flow.edge(s, 2 + a, blocks[a].bytes);
      flow.edge(2 + k + a, t, blocks[a].bytes);
      for (std::size_t b = 0; b < k; ++b)
        if (before[a][b]) flow.edge(2 + a, 2 + k + b, std::numeric_limits<std::uint64_t>::max());
    }
    return total - flow.run(s, t);
  }
};

// ------------------------------------------------------ measuring a model --
/// An empty kernel for the kernel nodes of measure(), compiled by the driver.
constexpr char empty_kernel_ptx[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry cudag_footprint_empty()
{
  ret;
}
)";

void noop_host(void*) {}

struct memory_reading {
  std::size_t free = 0;
  std::uint64_t reserved = 0;
};

memory_reading read_memory(int device) {
  memory_reading m;
  std::size_t total = 0;
  cuda_check(native::api().mem_get_info(&m.free, &total), "cudaMemGetInfo");
  cuda_check(native::api().device_get_graph_mem_attribute(device, cudaGraphMemAttrReservedMemCurrent,
                                                          &m.reserved),
             "cudaDeviceGetGraphMemAttribute");
  return m;
}

}  // namespace

// ---------------------------------------------------------------- model --
footprint_model footprint_model::default_model() noexcept {
  footprint_model m;
  m.fixed_bytes = 192 * 1024;
  auto set = [&](node_kind k, std::size_t bytes) { m.bytes_per_node[kind_index(k)] = bytes; };
  set(node_kind::kernel, 2176);
  set(node_kind::memcpy, 1536);
  set(node_kind::memset, 1536);
  set(node_kind::host, 1024);
  set(node_kind::child, 1024);  // the child node itself; its nodes count on their own
  set(node_kind::captured, 1024);
  set(node_kind::empty, 512);
  set(node_kind::event_record, 1024);
  set(node_kind::event_wait, 1024);
  set(node_kind::mem_alloc, 1024);
  set(node_kind::mem_free, 1024);
  set(node_kind::conditional, 4096);
  return m;
}

std::string footprint_model::table() const {
  std::string out;
  char line[96];
  for (std::size_t k = 0; k < node_kind_count; ++k) {
    std::snprintf(line, sizeof line, "%-13s %8zu B/node\n",
                  std::string(kind_name(static_cast<node_kind>(k))).c_str(), bytes_per_node[k]);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-13s %8zu B\n", "fixed", fixed_bytes);
  out += line;
  if (measured) {
    out += "measured on device " + std::to_string(device) +
           (device_name.empty() ? std::string() : " (" + device_name + ")") + ", " +
           std::to_string(nodes_measured) + " nodes a graph, cudaMemGetInfo step " +
           std::to_string(granularity_bytes) + " B\n";
  } else {
    out += "default model: not measured on this device\n";
  }
  return out;
}

footprint_model footprint_model::measure(int device, const measure_options& options) {
  const native::api_table& api = native::api();
  const bool runtime = &api == &native::cuda_runtime_api();
  int previous = 0;
  cuda_check(api.get_device(&previous), "cudaGetDevice");
  if (device < 0) device = previous;
  // The seam has no cudaSetDevice: switch only where it is needed (a real GPU).
  struct device_guard {
    int restore = -1;
    ~device_guard() {
      if (restore >= 0) (void)cudaSetDevice(restore);
    }
  } guard;
  if (device != previous) {
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    guard.restore = previous;
  }

  footprint_model m;
  m.measured = true;
  m.device = device;
  m.nodes_measured = std::max<std::size_t>(options.nodes, 1);
  if (runtime) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) m.device_name = prop.name;
  }

  // The kernel: the caller's, or the built-in PTX.
  struct library_guard {
    cudaLibrary_t library = nullptr;
    ~library_guard() {
      if (library) (void)cudaLibraryUnload(library);
    }
  } library;
  const void* kernel = options.kernel;
  if (kernel == nullptr) {
    cuda_check(cudaLibraryLoadData(&library.library, empty_kernel_ptx, nullptr, nullptr, 0, nullptr,
                                   nullptr, 0),
               "cudaLibraryLoadData");
    cudaKernel_t k = nullptr;
    cuda_check(cudaLibraryGetKernel(&k, library.library, "cudag_footprint_empty"),
               "cudaLibraryGetKernel");
    kernel = reinterpret_cast<const void*>(k);
  }
  cudaEvent_t event = nullptr;
  cuda_check(api.event_create(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  struct event_guard {
    cudaEvent_t e;
    ~event_guard() { (void)native::api().event_destroy(e); }
  } event_owner{event};

  const std::size_t n = m.nodes_measured;
  std::size_t step = 0;
  std::vector<unique_graph_exec> kept;
  std::vector<unique_graph> kept_graphs;
  // Builds a graph with `build`, instantiates and uploads it, and returns
  // the device memory the exec took (graph memory left out).
  auto measure_graph = [&](auto&& build) -> std::size_t {
    unique_graph g = make_graph();
    build(g.get());
    const memory_reading before = read_memory(device);
    unique_graph_exec x = instantiate_native(g.get(), {});
    cuda_check(api.upload(x.get(), options.stream), "cudaGraphUpload");
    // Some of an exec's memory is taken at its first launch, not before.
    cuda_check(api.launch(x.get(), options.stream), "cudaGraphLaunch");
    cuda_check(api.stream_synchronize(options.stream), "cudaStreamSynchronize");
    const memory_reading after = read_memory(device);
    // Kept until the end: the driver keeps a destroyed exec's memory for
    // the next one, which would then read as taking nothing.
    kept.push_back(std::move(x));
    kept_graphs.push_back(std::move(g));
    cuda_check(api.device_graph_mem_trim(device), "cudaDeviceGraphMemTrim");
    const std::size_t drop = before.free > after.free ? before.free - after.free : 0;
    if (drop > 0) step = step == 0 ? drop : std::min(step, drop);
    const std::uint64_t graph = after.reserved > before.reserved ? after.reserved - before.reserved : 0;
    return drop > graph ? drop - static_cast<std::size_t>(graph) : 0;
  };
  // A chain of n nodes made by add(graph, previous node).
  auto chain = [&](cudaGraph_t g, std::size_t count, auto&& add) {
    cudaGraphNode_t last = nullptr;
    for (std::size_t i = 0; i < count; ++i) {
      const cudaGraphNode_t dep[1] = {last};
      last = add(g, last ? native::deps_span(dep) : native::deps_span());
    }
    return last;
  };
  auto per_node = [&](std::size_t bytes, std::size_t count, std::size_t less) -> std::size_t {
    const std::size_t base = m.fixed_bytes + less;
    return bytes > base ? (bytes - base) / count : 0;
  };

  m.fixed_bytes = measure_graph([](cudaGraph_t) {});
  auto& b = m.bytes_per_node;
  b[kind_index(node_kind::empty)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 chain(g, n, [](cudaGraph_t gg, native::deps_span d) { return native::add_empty(gg, d, "empty"); });
               }),
               n, 0);
  b[kind_index(node_kind::kernel)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 cudaKernelNodeParams p{};
                 p.func = const_cast<void*>(kernel);
                 p.gridDim = dim3(1, 1, 1);
                 p.blockDim = dim3(1, 1, 1);
                 chain(g, n, [&](cudaGraph_t gg, native::deps_span d) { return native::add_kernel(gg, d, p, "kernel"); });
               }),
               n, 0);
  b[kind_index(node_kind::host)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 cudaHostNodeParams p{};
                 p.fn = &noop_host;
                 chain(g, n, [&](cudaGraph_t gg, native::deps_span d) { return native::add_host(gg, d, p, "host"); });
               }),
               n, 0);
  // alloc/free pairs: n/2 of each, one buffer live at a time.
  const std::size_t pairs = std::max<std::size_t>(n / 2, 1);
  const std::size_t pair_bytes = measure_graph([&](cudaGraph_t g) {
    cudaGraphNode_t last = nullptr;
    for (std::size_t i = 0; i < pairs; ++i) {
      const cudaGraphNode_t dep[1] = {last};
      const native::allocation a =
          native::add_mem_alloc(g, last ? native::deps_span(dep) : native::deps_span(), 256, device, "alloc");
      const cudaGraphNode_t after_alloc[1] = {a.node};
      last = native::add_mem_free(g, after_alloc, a.pointer, "free");
    }
  });
  const std::size_t alloc_free = per_node(pair_bytes, 2 * pairs, 0);
  b[kind_index(node_kind::mem_alloc)] = alloc_free;
  b[kind_index(node_kind::mem_free)] = alloc_free;
  // memset and memcpy nodes write into one graph-owned buffer (one alloc
  // and one free node besides).
  auto in_buffer = [&](auto&& add) {
    return [&, add](cudaGraph_t g) {
      const native::allocation a = native::add_mem_alloc(g, {}, 4096, device, "buffer");
      const cudaGraphNode_t first[1] = {a.node};
      cudaGraphNode_t last = a.node;
      for (std::size_t i = 0; i < n; ++i) {
        const cudaGraphNode_t dep[1] = {last};
        last = add(g, native::deps_span(i == 0 ? first : dep), a.pointer);
      }
      const cudaGraphNode_t end[1] = {last};
      native::add_mem_free(g, end, a.pointer, "free");
    };
  };
  b[kind_index(node_kind::memset)] =
      per_node(measure_graph(in_buffer([](cudaGraph_t g, native::deps_span d, void* p) {
                 return native::add_memset(g, d, native::memset_params(p, 0, 4, 1, 1, 0), "memset");
               })),
               n, 2 * alloc_free);
  b[kind_index(node_kind::memcpy)] =
      per_node(measure_graph(in_buffer([](cudaGraph_t g, native::deps_span d, void* p) {
                 return native::add_memcpy(
                     g, d,
                     native::memcpy_1d_params(static_cast<char*>(p) + 64, p, 64, cudaMemcpyDeviceToDevice),
                     "memcpy");
               })),
               n, 2 * alloc_free);
  const std::size_t empty = b[kind_index(node_kind::empty)];
  // A child node holding one empty node (moved in, as lowering does).
  b[kind_index(node_kind::child)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 chain(g, n, [](cudaGraph_t gg, native::deps_span d) {
                   unique_graph inner = make_graph();
                   (void)native::add_empty(inner.get(), {}, "inner");
                   const cudaGraphNode_t node =
                       native::add_child(gg, d, inner.get(), native::child_ownership::move, "child");
                   (void)inner.release();  // owned by the node now
                   return node;
                 });
               }),
               n, n * empty);
  b[kind_index(node_kind::captured)] = b[kind_index(node_kind::child)];
  // An if node with one empty node in its body.
  b[kind_index(node_kind::conditional)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 chain(g, n, [](cudaGraph_t gg, native::deps_span d) {
                   const cudaGraphConditionalHandle h = native::create_condition(gg, 0, true, "if");
                   cudaGraph_t body[1] = {nullptr};
                   const cudaGraphNode_t node =
                       native::add_conditional(gg, d, h, conditional_kind::if_then, 1, body, "if");
                   (void)native::add_empty(body[0], {}, "inner");
                   return node;
                 });
               }),
               n, n * empty);
  b[kind_index(node_kind::event_record)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 chain(g, n, [&](cudaGraph_t gg, native::deps_span d) {
                   return native::add_event_record(gg, d, event, "record");
                 });
               }),
               n, 0);
  b[kind_index(node_kind::event_wait)] =
      per_node(measure_graph([&](cudaGraph_t g) {
                 chain(g, n, [&](cudaGraph_t gg, native::deps_span d) {
                   return native::add_event_wait(gg, d, event, "wait");
                 });
               }),
               n, 0);
  m.granularity_bytes = step;
  kept.clear();
  kept_graphs.clear();
  cuda_check(api.device_graph_mem_trim(device), "cudaDeviceGraphMemTrim");
  return m;
}

// ------------------------------------------------------------- estimate --
footprint estimate_footprint(const graph_spec& spec, const footprint_model& model) {
  footprint out;
  graph_walk w{out};
  bool unfreed = false;
  out.allocation_peak_bytes = static_cast<std::size_t>(w.walk(spec, unfreed));
  out.exec_bytes = model.fixed_bytes;
  for (std::size_t k = 0; k < node_kind_count; ++k)
    out.exec_bytes += out.nodes_by_kind[k] * model.bytes_per_node[k];
  out.model_measured = model.measured;
  return out;
}

std::string footprint::summary(std::string_view graph_name) const {
  std::string s;
  if (!graph_name.empty()) s += "graph '" + std::string(graph_name) + "': ";
  s += std::to_string(nodes) + " nodes (";
  bool first = true;
  for (std::size_t k = 0; k < node_kind_count; ++k) {
    if (nodes_by_kind[k] == 0) continue;
    if (!first) s += ", ";
    first = false;
    s += std::string(kind_name(static_cast<node_kind>(k))) + " " + std::to_string(nodes_by_kind[k]);
  }
  s += "), exec ~" + mib(exec_bytes) + (model_measured ? " (measured model)" : " (default model)");
  s += ", graph-owned peak " + mib(allocation_peak_bytes) + " of " + mib(allocation_total_bytes);
  return s;
}

// ------------------------------------------------------------- measured --
graph_memory_state graph_memory(int device) {
  graph_memory_state m;
  cuda_check(native::api().device_get_graph_mem_attribute(device, cudaGraphMemAttrReservedMemCurrent,
                                                          &m.reserved_bytes),
             "cudaDeviceGetGraphMemAttribute");
  cuda_check(native::api().device_get_graph_mem_attribute(device, cudaGraphMemAttrUsedMemCurrent,
                                                          &m.used_bytes),
             "cudaDeviceGetGraphMemAttribute");
  return m;
}

std::size_t device_memory_free() {
  std::size_t free = 0, total = 0;
  cuda_check(native::api().mem_get_info(&free, &total), "cudaMemGetInfo");
  return free;
}

measured_exec instantiate_and_measure(graph_spec spec, std::span<const binding> bindings,
                                      cudaStream_t stream, const instantiate_options& options) {
  int device = 0;
  cuda_check(native::api().get_device(&device), "cudaGetDevice");
  const memory_reading before = read_memory(device);
  exec e = instantiate(std::move(spec), bindings, options);
  e.upload(stream);
  cuda_check(native::api().stream_synchronize(stream), "cudaStreamSynchronize");
  const memory_reading after = read_memory(device);
  measured_footprint f;
  f.device_bytes = before.free > after.free ? before.free - after.free : 0;
  f.graph_reserved_bytes = after.reserved > before.reserved ? after.reserved - before.reserved : 0;
  f.graph_after = graph_memory(device);
  return measured_exec{std::move(e), f};
}

}  // namespace cudag
