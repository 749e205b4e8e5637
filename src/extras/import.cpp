#include "cudag/import.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "cudag/capture.hpp"
#include "cudag/error.hpp"
#include "cudag/handles.hpp"

namespace cudag {
namespace {

// ------------------------------------------------- driver entry points --
// Argument sizes of a kernel are known only to the driver. Its functions are
// reached through the runtime (cudaGetDriverEntryPointByVersion), so nothing
// links libcuda; where the driver is too old they stay null and kernels are
// imported opaque.
struct driver_functions {
  PFN_cuGraphKernelNodeGetParams_v12000 kernel_node_params = nullptr;
  PFN_cuFuncGetParamInfo_v12040 func_param_info = nullptr;
  PFN_cuKernelGetParamInfo_v12040 kernel_param_info = nullptr;
  PFN_cuFuncGetName_v12030 func_name = nullptr;
  PFN_cuKernelGetName_v12030 kernel_name = nullptr;

  static const driver_functions& get() {
    static const driver_functions loaded = [] {
      driver_functions d;
      load("cuGraphKernelNodeGetParams", 12000, d.kernel_node_params);
      load("cuFuncGetParamInfo", 12040, d.func_param_info);
      load("cuKernelGetParamInfo", 12040, d.kernel_param_info);
      load("cuFuncGetName", 12030, d.func_name);
      load("cuKernelGetName", 12030, d.kernel_name);
      return d;
    }();
    return loaded;
  }

 private:
  template <class F>
  static void load(const char* symbol, unsigned version, F& out) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status) ==
            cudaSuccess &&
        status == cudaDriverEntryPointSuccess)
      out = reinterpret_cast<F>(fn);
    else
      (void)cudaGetLastError();
  }
};

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

value literal_bytes(const void* bytes, std::size_t size) {
  literal lit;
  lit.bytes.resize(size);
  std::memcpy(lit.bytes.data(), bytes, size);
  return value{bytes_tag(size), std::move(lit)};
}

// Allocations made by mem-alloc nodes of this graph or an enclosing one.
struct allocation {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
  std::string buffer;
};
using allocation_map = std::map<std::uintptr_t, allocation>;

const allocation* allocation_holding(const allocation_map& allocations, std::uintptr_t address) {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin()) return nullptr;
  --it;
  const allocation& a = it->second;
  return address - a.begin < a.bytes ? &a : nullptr;
}

// A pointer value: a buffer reference when it points into an allocation.
value pointer_value(const void* pointer, const type_tag& type, const allocation_map& allocations) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (const allocation* a = allocation_holding(allocations, address))
    return value{type, buffer_ref{a->buffer, address - a->begin}};
  literal lit;
  lit.bytes.resize(sizeof pointer);
  std::memcpy(lit.bytes.data(), &pointer, sizeof pointer);
  return value{type, std::move(lit)};
}

struct shared_graph_deleter {
  void operator()(cudaGraph_t g) const noexcept { (void)cudaGraphDestroy(g); }
};

class importer {
 public:
  importer(cudaGraph_t graph, allocation_map allocations)
      : graph_(graph), allocations_(std::move(allocations)) {}

  graph_spec run(std::string name) {
    graph_spec spec;
    spec.name = std::move(name);
    std::size_t count = 0;
    CUDAG_CUDA(cudaGraphGetNodes(graph_, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    if (count) CUDAG_CUDA(cudaGraphGetNodes(graph_, nodes.data(), &count));
    nodes.resize(count);

    std::vector<cudaGraphNodeType> types(count);
    std::map<std::string, std::size_t> per_kind;
    std::vector<std::string> names(count);
    for (std::size_t i = 0; i < count; ++i) {
      CUDAG_CUDA(cudaGraphNodeGetType(nodes[i], &types[i]));
      const std::string kind = kind_of(types[i]);
      names[i] = kind + "_" + std::to_string(per_kind[kind]++);
      index_of_[nodes[i]] = i;
    }
    // Allocations first, so that every user of a buffer can refer to it.
    for (std::size_t i = 0; i < count; ++i)
      if (types[i] == cudaGraphNodeTypeMemAlloc) {
        cudaMemAllocNodeParams p{};
        CUDAG_CUDA_NODE(cudaGraphMemAllocNodeGetParams(nodes[i], &p), names[i]);
        const auto begin = reinterpret_cast<std::uintptr_t>(p.dptr);
        allocations_[begin] = allocation{begin, p.bytesize, names[i]};
      }

    for (std::size_t i = 0; i < count; ++i)
      spec.nodes.push_back(node{names[i], read(nodes[i], types[i], names[i]), {}});

    std::size_t edge_count = 0;
    CUDAG_CUDA(cudaGraphGetEdges(graph_, nullptr, nullptr, nullptr, &edge_count));
    std::vector<cudaGraphNode_t> from(edge_count), to(edge_count);
    if (edge_count)
      CUDAG_CUDA(cudaGraphGetEdges(graph_, from.data(), to.data(), nullptr, &edge_count));
    for (std::size_t e = 0; e < edge_count; ++e) {
      node& dependent = spec.nodes[index_of_.at(to[e])];
      const std::string& dependency = names[index_of_.at(from[e])];
      if (std::find(dependent.deps.begin(), dependent.deps.end(), dependency) == dependent.deps.end())
        dependent.deps.push_back(dependency);
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

  node_params read(cudaGraphNode_t n, cudaGraphNodeType type, const std::string& name) {
    switch (type) {
      case cudaGraphNodeTypeKernel: return read_kernel(n, name);
      case cudaGraphNodeTypeMemcpy: {
        cudaMemcpy3DParms p{};
        CUDAG_CUDA_NODE(cudaGraphMemcpyNodeGetParams(n, &p), name);
        const bool one_dimensional = p.srcArray == nullptr && p.dstArray == nullptr &&
                                     p.extent.height <= 1 && p.extent.depth <= 1 &&
                                     p.srcPos.x == 0 && p.srcPos.y == 0 && p.srcPos.z == 0 &&
                                     p.dstPos.x == 0 && p.dstPos.y == 0 && p.dstPos.z == 0;
        if (!one_dimensional) return opaque(n, name, "2-D/3-D or array copy");
        return memcpy_node{pointer_value(p.dstPtr.ptr, type_of<void*>(), allocations_),
                           pointer_value(p.srcPtr.ptr, type_of<const void*>(), allocations_),
                           p.extent.width, p.kind};
      }
      case cudaGraphNodeTypeMemset: {
        cudaMemsetParams p{};
        CUDAG_CUDA_NODE(cudaGraphMemsetNodeGetParams(n, &p), name);
        return memset_node{pointer_value(p.dst, type_of<void*>(), allocations_),
                           make_literal<unsigned>(p.value), p.elementSize, p.width,
                           p.height == 0 ? 1 : p.height, p.pitch};
      }
      case cudaGraphNodeTypeHost: {
        cudaHostNodeParams p{};
        CUDAG_CUDA_NODE(cudaGraphHostNodeGetParams(n, &p), name);
        host_node h;
        h.function = std::make_shared<const host_function>(
            [fn = p.fn, data = p.userData](std::span<const void* const>) { fn(data); });
        return h;
      }
      case cudaGraphNodeTypeGraph: {
        cudaGraph_t child = nullptr;
        CUDAG_CUDA_NODE(cudaGraphChildGraphNodeGetGraph(n, &child), name);
        return child_node{std::make_shared<const graph_spec>(importer(child, allocations_).run(name))};
      }
      case cudaGraphNodeTypeEmpty: return empty_node{};
      case cudaGraphNodeTypeEventRecord: {
        cudaEvent_t e = nullptr;
        CUDAG_CUDA_NODE(cudaGraphEventRecordNodeGetEvent(n, &e), name);
        return event_record_node{make_literal(e)};
      }
      case cudaGraphNodeTypeWaitEvent: {
        cudaEvent_t e = nullptr;
        CUDAG_CUDA_NODE(cudaGraphEventWaitNodeGetEvent(n, &e), name);
        return event_wait_node{make_literal(e)};
      }
      case cudaGraphNodeTypeMemAlloc: {
        cudaMemAllocNodeParams p{};
        CUDAG_CUDA_NODE(cudaGraphMemAllocNodeGetParams(n, &p), name);
        return mem_alloc_node{name, p.bytesize, p.poolProps.location.id};
      }
      case cudaGraphNodeTypeMemFree: {
        void* pointer = nullptr;
        CUDAG_CUDA_NODE(cudaGraphMemFreeNodeGetParams(n, &pointer), name);
        const allocation* a =
            allocation_holding(allocations_, reinterpret_cast<std::uintptr_t>(pointer));
        if (a == nullptr || a->begin != reinterpret_cast<std::uintptr_t>(pointer))
          return opaque(n, name, "frees memory not allocated by a node of this graph");
        return mem_free_node{a->buffer};
      }
      default: return opaque(n, name, kind_of(type) + " nodes are not read back");
    }
  }

  node_params read_kernel(cudaGraphNode_t n, const std::string& name) {
    const driver_functions& driver = driver_functions::get();
    // The driver's view of the node tells the kernel's argument sizes.
    CUDA_KERNEL_NODE_PARAMS_v2 dp{};
    const bool have_driver_params =
        driver.kernel_node_params &&
        driver.kernel_node_params(reinterpret_cast<CUgraphNode>(n), &dp) == CUDA_SUCCESS;

    // The runtime knows host-stub kernels; a kernel from a loaded library
    // (NVRTC) is unknown to it (cudaErrorInvalidDeviceFunction): then the
    // driver's parameters stand in, with the library kernel as function.
    cudaKernelNodeParams p{};
    if (const cudaError_t code = cudaGraphKernelNodeGetParams(n, &p); code != cudaSuccess) {
      (void)cudaGetLastError();
      if (!have_driver_params) throw_cuda_error(code, "cudaGraphKernelNodeGetParams", name);
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
      if (dp.func && driver.func_name && driver.func_name(&raw_name, dp.func) == CUDA_SUCCESS)
        function_name = readable(raw_name);
      else if (dp.kern && driver.kernel_name && driver.kernel_name(&raw_name, dp.kern) == CUDA_SUCCESS)
        function_name = readable(raw_name);
    }
    auto param_info = [&](std::size_t index, std::size_t* size) -> bool {
      std::size_t offset = 0;
      if (dp.func && driver.func_param_info)
        return driver.func_param_info(dp.func, index, &offset, size) == CUDA_SUCCESS;
      if (dp.kern && driver.kernel_param_info)
        return driver.kernel_param_info(dp.kern, index, &offset, size) == CUDA_SUCCESS;
      return false;
    };

    const std::string label = function_name.empty() ? std::string("kernel") : function_name;
    if (p.func == nullptr) return opaque(n, name, label + ": the runtime gives no function");
    const bool sizes_known = have_driver_params && ((dp.func && driver.func_param_info) ||
                                                    (dp.kern && driver.kernel_param_info));
    if (!sizes_known) return opaque(n, name, label + ": argument sizes unavailable");
    if (p.kernelParams == nullptr && p.extra != nullptr)
      return opaque(n, name, label + ": launched with packed 'extra' arguments");

    kernel_node k;
    k.function = p.func;
    k.function_name = function_name;
    k.grid = p.gridDim;
    k.block = p.blockDim;
    k.shared_bytes = p.sharedMemBytes;
    std::size_t size = 0;
    for (std::size_t i = 0; param_info(i, &size); ++i) {
      if (p.kernelParams == nullptr) return opaque(n, name, label + ": arguments unreadable");
      if (size == sizeof(void*)) {
        // A pointer-sized argument into a graph allocation becomes a buffer use.
        std::uintptr_t word = 0;
        std::memcpy(&word, p.kernelParams[i], sizeof word);
        if (allocation_holding(allocations_, word)) {
          k.args.push_back(pointer_value(reinterpret_cast<const void*>(word), type_of<void*>(),
                                         allocations_));
          continue;
        }
      }
      k.args.push_back(literal_bytes(p.kernelParams[i], size));
    }
    (void)cudaGetLastError();  // the failed query that ended the loop
    return k;
  }

  // A node kept by effect: lowering inserts a one-node clone of it.
  node_params opaque(cudaGraphNode_t n, const std::string& name, const std::string& why) {
    captured_node c;
    c.what = "opaque " + name + " (" + why + ")";
    std::shared_ptr<std::remove_pointer_t<cudaGraph_t>> single;
    cudaGraph_t clone = nullptr;
    if (cudaGraphClone(&clone, graph_) == cudaSuccess) {
      single.reset(clone, shared_graph_deleter{});
      cudaGraphNode_t kept = nullptr;
      CUDAG_CUDA_NODE(cudaGraphNodeFindInClone(&kept, n, clone), name);
      std::size_t count = 0;
      CUDAG_CUDA(cudaGraphGetNodes(clone, nullptr, &count));
      std::vector<cudaGraphNode_t> all(count);
      CUDAG_CUDA(cudaGraphGetNodes(clone, all.data(), &count));
      for (cudaGraphNode_t other : all)
        if (other != kept) CUDAG_CUDA_NODE(cudaGraphDestroyNode(other), name);
    } else {
      (void)cudaGetLastError();  // graphs with alloc/free/conditional nodes cannot be cloned
    }
    c.record = std::make_shared<const capture_function>(
        [single, name, why](cudaStream_t stream, std::span<const void* const>) {
          if (!single)
            throw error("imported node '" + name + "' is opaque (" + why +
                            ") and its graph cannot be cloned, so it cannot be lowered",
                        cudaErrorNotSupported, {}, name);
          (void)append_child_to_capture(stream, single.get());
        });
    return c;
  }

  cudaGraph_t graph_;
  allocation_map allocations_;
  std::unordered_map<cudaGraphNode_t, std::size_t> index_of_;
};

}  // namespace

graph_spec import_graph(cudaGraph_t graph, const import_options& options) {
  if (graph == nullptr) throw error("import_graph: the graph is null", cudaErrorInvalidValue);
  return importer(graph, {}).run(options.name);
}

}  // namespace cudag
