#include "cudag/import.hpp"

#include <cuda.h>  // CUDA_KERNEL_NODE_PARAMS_v2: the driver's view of a kernel node
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "cudag/capture.hpp"
#include "cudag/error.hpp"
#include "cudag/handles.hpp"
#include "cudag/native_api.hpp"
#include "cudag/native_nodes.hpp"
#include "import_order.hpp"

namespace cudag {
// ------------------------------------------------------ allocation_order --
namespace import_detail {

allocation_order::allocation_order(const std::vector<std::vector<std::size_t>>& deps,
                                   std::vector<graph_allocation> allocations)
    : allocations_(std::move(allocations)), position_(deps.size(), 0) {
  const std::size_t count = deps.size();
  // Kahn's sort, ready nodes taken in index order.
  std::vector<std::vector<std::size_t>> dependents(count);
  std::vector<std::size_t> waiting(count, 0);
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t d : deps[i]) {
      if (d >= count)
        throw error("import: node " + std::to_string(i) + " depends on node " + std::to_string(d) +
                        " of a graph of " + std::to_string(count) + " nodes",
                    cudaErrorInvalidValue);
      dependents[d].push_back(i);
      ++waiting[i];
    }
  std::vector<std::size_t> order;
  order.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    if (waiting[i] == 0) order.push_back(i);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (std::size_t next : dependents[order[k]])
      if (--waiting[next] == 0) order.push_back(next);
  if (order.size() != count)
    throw error("import: the graph's dependencies have a cycle", cudaErrorInvalidValue);
  for (std::size_t k = 0; k < count; ++k) position_[order[k]] = k;

  for (const graph_allocation& a : allocations_)
    if (a.node >= count)
      throw error("import: an allocation names node " + std::to_string(a.node) + " of a graph of " +
                      std::to_string(count) + " nodes",
                  cudaErrorInvalidValue);
  std::stable_sort(allocations_.begin(), allocations_.end(),
                   [&](const graph_allocation& x, const graph_allocation& y) {
                     return position_[x.node] < position_[y.node];
                   });
  std::vector<std::vector<std::size_t>> allocated_by(count);  // node -> its allocation indices
  for (std::size_t a = 0; a < allocations_.size(); ++a) allocated_by[allocations_[a].node].push_back(a);

  // Ancestor sets over the allocations, propagated in topological order.
  words_ = (allocations_.size() + 63) / 64;
  ancestors_.assign(count * words_, 0);
  for (std::size_t n : order)
    for (std::size_t d : deps[n]) {
      for (std::size_t w = 0; w < words_; ++w) ancestors_[n * words_ + w] |= ancestors_[d * words_ + w];
      for (std::size_t a : allocated_by[d]) ancestors_[n * words_ + a / 64] |= std::uint64_t(1) << (a % 64);
    }
}

const graph_allocation* allocation_order::live_at(std::size_t user, std::uintptr_t address) const {
  for (std::size_t a = allocations_.size(); a-- > 0;) {
    const graph_allocation& candidate = allocations_[a];
    if (address - candidate.begin < candidate.bytes && address >= candidate.begin &&
        depends_on(user, a))
      return &candidate;
  }
  return nullptr;
}

std::vector<graph_allocation> allocation_order::before(std::size_t user) const {
  std::vector<graph_allocation> result;
  for (std::size_t a = 0; a < allocations_.size(); ++a)
    if (depends_on(user, a)) result.push_back(allocations_[a]);
  return result;
}

}  // namespace import_detail

namespace {

// Every graph call goes through the native seam (native_api.hpp), so that
// an import runs on the recorder and each call can be made to fail there.
const native::api_table& api() { return native::api(); }

/// A call of the import of graph `graph` failed (`what`: for which of its
/// nodes, before the node has a name). cudaGetErrorName/String stay direct
/// here and below: text lookups, not graph calls.
[[noreturn]] void graph_call_failed(cudaError_t code, const char* call, const std::string& graph,
                                    const std::string& what = {}) {
  (void)api().get_last_error();
  throw error("import of graph '" + graph + "': " + call + " failed" + what + ": " +
                  cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")",
              code, call);
}

/// "call failed: cudaErrorName", for the reasons of opaque nodes.
std::string failed(const char* call, cudaError_t code) {
  return std::string(call) + " failed: " + cudaGetErrorName(code);
}

std::string readable(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(mangled);
}

type_tag bytes_tag(std::size_t size) {
  switch (size) {
    case 1: return type_of<std::uint8_t>();
    case 2: return type_of<std::uint16_t>();
    case 4: return type_of<std::uint32_t>();
    case 8: return type_of<std::uint64_t>();
    default:
      return type_tag{&typeid(std::byte), static_cast<std::uint32_t>(size), 1, false, false};
  }
}

value literal_of(const void* bytes, std::size_t size) {
  return value{bytes_tag(size), literal{literal_bytes(bytes, size)}};
}

// Allocations made by mem-alloc nodes of this graph or an enclosing one.
struct allocation {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
  std::string buffer;

  [[nodiscard]] bool holds(std::uintptr_t address) const {
    return address >= begin && address - begin < bytes;
  }
};

// What a graph's importer knows of the allocations made outside it.
struct enclosing_allocations {
  /// Allocations the child graph node depends on, in the enclosing graph's
  /// order: the last one holding an address is the live one.
  std::vector<allocation> before;
  /// Every allocation of the enclosing graphs, in creation order.
  std::vector<allocation> all;
};

struct shared_graph_deleter {
  void operator()(cudaGraph_t g) const noexcept { (void)api().graph_destroy(g); }
};

class importer {
 public:
  /// `path`: where the graph lies, for messages ("" at the top level,
  /// "child_0/" inside child node child_0).
  importer(cudaGraph_t graph, enclosing_allocations enclosing, std::string path = {})
      : graph_(graph), enclosing_(std::move(enclosing)), path_(std::move(path)) {}

  graph_spec run(std::string name) {
    graph_spec spec;
    spec.name = std::move(name);
    // The graph as messages name it: a child by its node's path.
    const std::string graph_name = path_.empty() ? spec.name : path_.substr(0, path_.size() - 1);
    auto check_graph = [&](cudaError_t code, const char* call) {
      if (code != cudaSuccess) [[unlikely]]
        graph_call_failed(code, call, graph_name);
    };
    std::size_t count = 0;
    check_graph(api().graph_get_nodes(graph_, nullptr, &count), "cudaGraphGetNodes");
    std::vector<cudaGraphNode_t> nodes(count);
    if (count) check_graph(api().graph_get_nodes(graph_, nodes.data(), &count), "cudaGraphGetNodes");
    nodes.resize(count);

    std::vector<cudaGraphNodeType> types(count);
    std::map<std::string, std::size_t> per_kind;
    std::vector<std::string> names(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (const cudaError_t code = api().node_get_type(nodes[i], &types[i]); code != cudaSuccess)
        graph_call_failed(code, "cudaGraphNodeGetType", graph_name,
                          " for its node " + std::to_string(i) + " of " + std::to_string(count));
      const std::string kind = kind_of(types[i]);
      names[i] = kind + "_" + std::to_string(per_kind[kind]++);
      index_of_[nodes[i]] = i;
    }
    std::size_t edge_count = 0;
    check_graph(api().graph_get_edges(graph_, nullptr, nullptr, nullptr, &edge_count),
                "cudaGraphGetEdges");
    // With each edge's data: CUDA refuses the query without it (a lossy
    // query) once an edge is not full.
    std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
    std::vector<cudaGraphEdgeData> edge_data(edge_count);
    if (edge_count)
      check_graph(api().graph_get_edges(graph_, from.data(), to.data(), edge_data.data(), &edge_count),
                  "cudaGraphGetEdges");
    from.resize(edge_count);
    to.resize(edge_count);
    std::vector<std::vector<std::size_t>> deps(count);
    std::vector<std::vector<edge_kind>> kinds(count);  // one per dependency, as deps
    for (std::size_t e = 0; e < edge_count; ++e) {
      const std::size_t target = index_of_.at(to[e]);
      const std::size_t dependency = index_of_.at(from[e]);
      const auto edge = [&] {
        return "import of graph '" + graph_name + "': the edge '" + path_ + names[dependency] +
               "' -> '" + path_ + names[target] + "'";
      };
      const std::optional<edge_kind> kind = native::edge_kind_of(edge_data[e]);
      if (!kind)
        throw error(edge() + " has edge data cudag does not know (type " +
                        std::to_string(edge_data[e].type) + ", from port " +
                        std::to_string(edge_data[e].from_port) + ", to port " +
                        std::to_string(edge_data[e].to_port) +
                        "); cudag reads full, programmatic and launch-completion edges only",
                    cudaErrorNotSupported, "cudaGraphGetEdges", path_ + names[target]);
      std::vector<std::size_t>& d = deps[target];
      const auto listed = std::find(d.begin(), d.end(), dependency);
      if (listed == d.end()) {
        d.push_back(dependency);
        kinds[target].push_back(*kind);
      } else if (const edge_kind first = kinds[target][listed - d.begin()]; first != *kind) {
        throw error(edge() + " is there twice, " + std::string(edge_kind_name(first)) + " and " +
                        std::string(edge_kind_name(*kind)) +
                        "; cudag keeps one kind per dependency",
                    cudaErrorNotSupported, "cudaGraphGetEdges", path_ + names[target]);
      }
    }

    // Allocations first, so that every user of a buffer can refer to it.
    // CUDA reuses a freed allocation's address for a later allocation of
    // the same graph: a pointer is resolved by the graph's order
    // (import_order.hpp), not by address alone.
    std::vector<import_detail::graph_allocation> graph_allocations;
    for (std::size_t i = 0; i < count; ++i)
      if (types[i] == cudaGraphNodeTypeMemAlloc) {
        cudaMemAllocNodeParams p{};
        check(api().mem_alloc_node_get_params(nodes[i], &p), "cudaGraphMemAllocNodeGetParams", names[i]);
        const auto begin = reinterpret_cast<std::uintptr_t>(p.dptr);
        own_.emplace(i, allocation{begin, p.bytesize, names[i]});
        graph_allocations.push_back({i, begin, p.bytesize});
        enclosing_.all.push_back(allocation{begin, p.bytesize, names[i]});
      }
    order_.emplace(deps, std::move(graph_allocations));

    for (std::size_t i = 0; i < count; ++i)
      spec.nodes.push_back(node{names[i], read(i, nodes[i], types[i], names[i]), {}, {}});
    for (std::size_t i = 0; i < count; ++i) {
      node& n = spec.nodes[i];
      for (std::size_t d : deps[i]) n.deps.push_back(names[d]);
      const bool typed = std::any_of(kinds[i].begin(), kinds[i].end(),
                                     [](edge_kind k) { return k != edge_kind::full; });
      if (!typed) continue;  // kinds are kept only where one is not full
      n.dependency_kinds = std::move(kinds[i]);
      // CUDA already launches this kernel early, before its upstream kernel
      // completes: the graph's author took it to call
      // cudaGridDependencySynchronize() before reading the upstream's writes.
      // cudag cannot see the kernel's code to confirm it; it records the
      // graph as CUDA runs it, so that check() accepts the edge. (A node kept
      // opaque is a captured node: check() refuses the typed edge, naming it.)
      if (auto* k = std::get_if<kernel_node>(&n.params)) k->synchronizes_grid_dependencies = true;
    }
    return spec;
  }

 private:
  static std::string kind_of(cudaGraphNodeType type) {
    switch (type) {
      case cudaGraphNodeTypeKernel: return "kernel";
      case cudaGraphNodeTypeMemcpy: return "memcpy";
      case cudaGraphNodeTypeMemset: return "memset";
      case cudaGraphNodeTypeHost: return "host";
      case cudaGraphNodeTypeGraph: return "child";
      case cudaGraphNodeTypeEmpty: return "empty";
      case cudaGraphNodeTypeWaitEvent: return "event_wait";
      case cudaGraphNodeTypeEventRecord: return "event_record";
      case cudaGraphNodeTypeExtSemaphoreSignal: return "semaphore_signal";
      case cudaGraphNodeTypeExtSemaphoreWait: return "semaphore_wait";
      case cudaGraphNodeTypeMemAlloc: return "mem_alloc";
      case cudaGraphNodeTypeMemFree: return "mem_free";
      case cudaGraphNodeTypeConditional: return "conditional";
      default: return "node";
    }
  }

  // The allocation `address` points into as seen by node `user`: the live
  // one along its dependency path, else (a use CUDA does not order after
  // the allocation, which check() then reports) any that holds it.
  const allocation* allocation_at(std::size_t user, std::uintptr_t address) const {
    if (const import_detail::graph_allocation* a = order_->live_at(user, address))
      return &own_.at(a->node);
    for (auto it = enclosing_.before.rbegin(); it != enclosing_.before.rend(); ++it)
      if (it->holds(address)) return &*it;
    for (const allocation& a : enclosing_.all)
      if (a.holds(address)) return &a;
    return nullptr;
  }

  // A pointer value: a buffer reference when it points into an allocation.
  value pointer_value(std::size_t user, const void* pointer, const type_tag& type) const {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    if (const allocation* a = allocation_at(user, address))
      return value{type, buffer_ref{a->buffer, address - a->begin}};
    literal lit;
    lit.bytes.resize(sizeof pointer);
    std::memcpy(lit.bytes.data(), &pointer, sizeof pointer);
    return value{type, std::move(lit)};
  }

  /// Checks a call made for node `name` of this graph, naming it by its path.
  void check(cudaError_t code, const char* call, const std::string& name) const {
    if (code != cudaSuccess) [[unlikely]]
      throw_cuda_error(code, call, path_ + name);
  }

  node_params read(std::size_t i, cudaGraphNode_t n, cudaGraphNodeType type,
                   const std::string& name) {
    switch (type) {
      case cudaGraphNodeTypeKernel: return read_kernel(i, n, name);
      case cudaGraphNodeTypeMemcpy: {
        cudaMemcpy3DParms p{};
        check(api().memcpy_node_get_params(n, &p), "cudaGraphMemcpyNodeGetParams", name);
        const bool one_dimensional = p.srcArray == nullptr && p.dstArray == nullptr &&
                                     p.extent.height <= 1 && p.extent.depth <= 1 &&
                                     p.srcPos.x == 0 && p.srcPos.y == 0 && p.srcPos.z == 0 &&
                                     p.dstPos.x == 0 && p.dstPos.y == 0 && p.dstPos.z == 0;
        if (!one_dimensional) return opaque(n, name, "2-D/3-D or array copy");
        return memcpy_node{pointer_value(i, p.dstPtr.ptr, type_of<void*>()),
                           pointer_value(i, p.srcPtr.ptr, type_of<const void*>()),
                           p.extent.width, p.kind};
      }
      case cudaGraphNodeTypeMemset: {
        cudaMemsetParams p{};
        check(api().memset_node_get_params(n, &p), "cudaGraphMemsetNodeGetParams", name);
        return memset_node{pointer_value(i, p.dst, type_of<void*>()),
                           make_literal<unsigned>(p.value), p.elementSize, p.width,
                           p.height == 0 ? 1 : p.height, p.pitch};
      }
      case cudaGraphNodeTypeHost: {
        cudaHostNodeParams p{};
        check(api().host_node_get_params(n, &p), "cudaGraphHostNodeGetParams", name);
        host_node h;
        h.function = std::make_shared<const host_function>(
            [fn = p.fn, data = p.userData](std::span<const void* const>) { fn(data); });
        return h;
      }
      case cudaGraphNodeTypeGraph: {
        cudaGraph_t child = nullptr;
        check(api().child_graph_node_get_graph(n, &child), "cudaGraphChildGraphNodeGetGraph", name);
        enclosing_allocations inner{enclosing_.before, enclosing_.all};
        for (const import_detail::graph_allocation& a : order_->before(i))
          inner.before.push_back(own_.at(a.node));
        return child_node{
            std::make_shared<const graph_spec>(importer(child, std::move(inner), path_ + name + "/").run(name))};
      }
      case cudaGraphNodeTypeEmpty: return empty_node{};
      case cudaGraphNodeTypeEventRecord: {
        cudaEvent_t e = nullptr;
        check(api().event_record_node_get_event(n, &e), "cudaGraphEventRecordNodeGetEvent", name);
        return event_record_node{make_literal(e)};
      }
      case cudaGraphNodeTypeWaitEvent: {
        cudaEvent_t e = nullptr;
        check(api().event_wait_node_get_event(n, &e), "cudaGraphEventWaitNodeGetEvent", name);
        return event_wait_node{make_literal(e)};
      }
      case cudaGraphNodeTypeMemAlloc: {
        cudaMemAllocNodeParams p{};
        check(api().mem_alloc_node_get_params(n, &p), "cudaGraphMemAllocNodeGetParams", name);
        return mem_alloc_node{name, p.bytesize, p.poolProps.location.id};
      }
      case cudaGraphNodeTypeMemFree: {
        void* pointer = nullptr;
        check(api().mem_free_node_get_params(n, &pointer), "cudaGraphMemFreeNodeGetParams", name);
        const allocation* a = allocation_at(i, reinterpret_cast<std::uintptr_t>(pointer));
        if (a == nullptr || a->begin != reinterpret_cast<std::uintptr_t>(pointer))
          return opaque(n, name, "frees memory not allocated by a node of this graph");
        return mem_free_node{a->buffer};
      }
      default: return opaque(n, name, kind_of(type) + " nodes are not read back");
    }
  }

  /// The node's priority, cluster, cooperative flag, memory-sync domain and
  /// access-policy window as CUDA holds them; one CUDA does not tell keeps its default. A
  /// cluster of 1x1x1 reads as none (it launches alike). The shared-memory
  /// carveout is not read back: CUDA's value for a node that never set it
  /// is not specified.
  static void read_launch_attributes(cudaGraphNode_t n, kernel_node& k) {
    cudaLaunchAttributeValue v{};
    const auto get = [&](cudaLaunchAttributeID id) {
      v = cudaLaunchAttributeValue{};
      if (api().kernel_node_get_attribute(n, id, &v) == cudaSuccess) return true;
      (void)api().get_last_error();
      return false;
    };
    if (get(cudaLaunchAttributePriority)) k.priority = v.priority;
    if (get(cudaLaunchAttributeClusterDimension) &&
        !(v.clusterDim.x <= 1 && v.clusterDim.y <= 1 && v.clusterDim.z <= 1))
      k.cluster = dim3(v.clusterDim.x, v.clusterDim.y, v.clusterDim.z);
    if (get(cudaLaunchAttributeCooperative)) k.cooperative = v.cooperative != 0;
    if (get(cudaLaunchAttributeMemSyncDomain)) k.mem_sync_domain = v.memSyncDomain;
    if (get(cudaLaunchAttributeAccessPolicyWindow) && v.accessPolicyWindow.num_bytes != 0) {
      const cudaAccessPolicyWindow& w = v.accessPolicyWindow;
      k.access_policy = access_policy_window{w.base_ptr, w.num_bytes, w.hitRatio, w.hitProp, w.missProp};
    }
  }

  node_params read_kernel(std::size_t i, cudaGraphNode_t n, const std::string& name) {
    // The driver's view of the node tells the kernel's argument sizes. A
    // failure leaves the node opaque (kept by effect), saying why.
    CUDA_KERNEL_NODE_PARAMS_v2 dp{};
    const cudaError_t driver_code = api().kernel_node_get_driver_params(n, &dp);
    const bool have_driver_params = driver_code == cudaSuccess;
    if (!have_driver_params) (void)api().get_last_error();

    // The runtime knows host-stub kernels; a kernel from a loaded library
    // (NVRTC) is unknown to it (cudaErrorInvalidDeviceFunction): then the
    // driver's parameters stand in, with the library kernel as function.
    cudaKernelNodeParams p{};
    if (const cudaError_t code = api().kernel_node_get_params(n, &p); code != cudaSuccess) {
      (void)api().get_last_error();
      if (!have_driver_params) throw_cuda_error(code, "cudaGraphKernelNodeGetParams", path_ + name);
      p.func = dp.kern ? static_cast<void*>(dp.kern) : static_cast<void*>(dp.func);
      p.gridDim = dim3(dp.gridDimX, dp.gridDimY, dp.gridDimZ);
      p.blockDim = dim3(dp.blockDimX, dp.blockDimY, dp.blockDimZ);
      p.sharedMemBytes = dp.sharedMemBytes;
      p.kernelParams = dp.kernelParams;
      p.extra = dp.extra;
    }
    std::string function_name;
    const char* raw_name = nullptr;
    if (have_driver_params) {
      // A name is for people only: without it the node reads "kernel".
      if (dp.func && api().function_get_name(&raw_name, dp.func) == cudaSuccess)
        function_name = readable(raw_name);
      else if (dp.kern && api().kernel_get_name(&raw_name, dp.kern) == cudaSuccess)
        function_name = readable(raw_name);
      else
        (void)api().get_last_error();
    }
    const char* info_call = dp.func ? "cuFuncGetParamInfo" : "cuKernelGetParamInfo";
    auto param_info = [&](std::size_t index, std::size_t* size) -> cudaError_t {
      std::size_t offset = 0;
      if (dp.func) return api().function_get_param_info(dp.func, index, &offset, size);
      if (dp.kern) return api().kernel_get_param_info(dp.kern, index, &offset, size);
      return cudaErrorNotSupported;
    };

    const std::string label = function_name.empty() ? std::string("kernel") : function_name;
    if (p.func == nullptr) return opaque(n, name, label + ": the runtime gives no function");
    if (!have_driver_params)
      return opaque(n, name,
                    label + ": argument sizes unavailable (" +
                        failed("cuGraphKernelNodeGetParams", driver_code) + ")");
    if (p.kernelParams == nullptr && p.extra != nullptr)
      return opaque(n, name, label + ": launched with packed 'extra' arguments");

    kernel_node k;
    k.function = p.func;
    k.function_name = function_name;
    k.grid = p.gridDim;
    k.block = p.blockDim;
    k.shared_bytes = p.sharedMemBytes;
    read_launch_attributes(n, k);
    std::size_t size = 0;
    for (std::size_t arg = 0;; ++arg) {
      // An index past the last argument is refused with cudaErrorInvalidValue;
      // any other failure would cut the arguments short.
      if (const cudaError_t code = param_info(arg, &size); code != cudaSuccess) {
        (void)api().get_last_error();
        if (code == cudaErrorInvalidValue) break;
        return opaque(n, name,
                      label + ": argument sizes unavailable (" + failed(info_call, code) +
                          " for argument " + std::to_string(arg) + ")");
      }
      if (p.kernelParams == nullptr) return opaque(n, name, label + ": arguments unreadable");
      if (size == sizeof(void*)) {
        // A pointer-sized argument into a graph allocation becomes a buffer use.
        std::uintptr_t word = 0;
        std::memcpy(&word, p.kernelParams[arg], sizeof word);
        if (allocation_at(i, word)) {
          k.args.push_back(pointer_value(i, reinterpret_cast<const void*>(word), type_of<void*>()));
          continue;
        }
      }
      k.args.push_back(literal_of(p.kernelParams[arg], size));
    }
    return k;
  }

  // A node kept by effect: lowering inserts a one-node clone of it. The
  // clone is made now (the graph may be gone when the spec is lowered); a
  // graph CUDA cannot clone (alloc/free/conditional nodes) leaves a node
  // whose lowering fails, saying why.
  node_params opaque(cudaGraphNode_t n, const std::string& name, const std::string& why) {
    const std::string path = path_ + name;
    captured_node c;
    c.what = "opaque " + path + " (" + why + ")";
    std::shared_ptr<std::remove_pointer_t<cudaGraph_t>> single;
    std::string not_cloned;
    cudaGraph_t clone = nullptr;
    if (const cudaError_t code = api().graph_clone(&clone, graph_); code == cudaSuccess) {
      single.reset(clone, shared_graph_deleter{});
      cudaGraphNode_t kept = nullptr;
      check(api().node_find_in_clone(&kept, n, clone), "cudaGraphNodeFindInClone", name);
      for (cudaGraphNode_t other : nodes_of_clone(clone, name))
        if (other != kept) check(api().graph_destroy_node(other), "cudaGraphDestroyNode", name);
    } else {
      (void)api().get_last_error();
      not_cloned = failed("cudaGraphClone", code);
    }
    c.record = std::make_shared<const capture_function>(
        [single, path, why, not_cloned](cudaStream_t stream, std::span<const void* const>) {
          if (!single)
            throw error("imported node '" + path + "' is opaque (" + why +
                            ") and its graph cannot be cloned (" + not_cloned +
                            "), so it cannot be lowered",
                        cudaErrorNotSupported, "cudaGraphClone", path);
          (void)append_child_to_capture(stream, single.get());
        });
    return c;
  }

  std::vector<cudaGraphNode_t> nodes_of_clone(cudaGraph_t clone, const std::string& name) const {
    std::size_t count = 0;
    check(api().graph_get_nodes(clone, nullptr, &count), "cudaGraphGetNodes", name);
    std::vector<cudaGraphNode_t> all(count);
    if (count) check(api().graph_get_nodes(clone, all.data(), &count), "cudaGraphGetNodes", name);
    all.resize(count);
    return all;
  }

  cudaGraph_t graph_;
  enclosing_allocations enclosing_;
  std::string path_;
  std::map<std::size_t, allocation> own_;  // by alloc node index
  std::optional<import_detail::allocation_order> order_;
  std::unordered_map<cudaGraphNode_t, std::size_t> index_of_;
};

}  // namespace

graph_spec import_graph(cudaGraph_t graph, const import_options& options) {
  if (graph == nullptr) throw error("import_graph: the graph is null", cudaErrorInvalidValue);
  return importer(graph, {}).run(options.name);
}

}  // namespace cudag
