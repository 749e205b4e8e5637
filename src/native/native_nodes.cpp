// The per-kind table of native graph operations (native_nodes.hpp) and the
// CUDA runtime's side of the seam (native_api.hpp): the one file that names
// the runtime's graph-building functions.
#include "cudag/native_nodes.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cudag/native_api.hpp"
#include "cudag/retained.hpp"

namespace cudag::native {

// -------------------------------------------------------------- the seam --
namespace {

cudaError_t get_last_error() { return cudaGetLastError(); }
// The runtime's template overloads take a typed function: one signature here.
cudaError_t occupancy_max_active_blocks(int* blocks, const void* function, int block_threads,
                                        std::size_t shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function, block_threads, shared_bytes);
}

/// A driver function reached through the runtime, or null where the driver lacks it.
void* driver_entry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return fn;
}

/// The runtime sets memory in bytes only; the driver in 1, 2 or 4-byte
/// elements, reached through the runtime so that nothing links libcuda.
/// One row goes through the 1-D functions, several through the 2-D ones.
cudaError_t memset_2d_async(void* dst, std::size_t pitch, unsigned value, unsigned element_size,
                            std::size_t width, std::size_t height, cudaStream_t stream) {
  using row8 = CUresult (*)(CUdeviceptr, unsigned char, std::size_t, CUstream);
  using row16 = CUresult (*)(CUdeviceptr, unsigned short, std::size_t, CUstream);
  using row32 = CUresult (*)(CUdeviceptr, unsigned int, std::size_t, CUstream);
  using rows8 = CUresult (*)(CUdeviceptr, std::size_t, unsigned char, std::size_t, std::size_t, CUstream);
  using rows16 = CUresult (*)(CUdeviceptr, std::size_t, unsigned short, std::size_t, std::size_t, CUstream);
  using rows32 = CUresult (*)(CUdeviceptr, std::size_t, unsigned int, std::size_t, std::size_t, CUstream);
  static void* const one_row[3] = {driver_entry("cuMemsetD8Async"), driver_entry("cuMemsetD16Async"),
                                   driver_entry("cuMemsetD32Async")};
  static void* const rows[3] = {driver_entry("cuMemsetD2D8Async"), driver_entry("cuMemsetD2D16Async"),
                                driver_entry("cuMemsetD2D32Async")};
  const std::size_t k = element_size == 1 ? 0 : element_size == 2 ? 1 : element_size == 4 ? 2 : 3;
  if (k == 3) return cudaErrorInvalidValue;
  // Every byte alike (zeros, all ones, any 1-byte fill): the runtime's own
  // memset, which tools such as compute-sanitizer follow; the driver's
  // entry points they cannot see.
  const unsigned low = value & 0xFFu;
  const bool bytes_alike = element_size == 1 || (element_size == 2 && (value & 0xFFFFu) == low * 0x0101u) ||
                           (element_size == 4 && value == low * 0x01010101u);
  if (bytes_alike)
    return cudaMemset2DAsync(dst, height > 1 ? pitch : width * element_size, static_cast<int>(low),
                             width * element_size, height, stream);
  const auto at = reinterpret_cast<CUdeviceptr>(dst);
  void* const fn = height == 1 ? one_row[k] : rows[k];
  if (!fn) return cudaErrorNotSupported;
  CUresult r = CUDA_SUCCESS;
  if (height == 1) {
    switch (k) {
      case 0: r = reinterpret_cast<row8>(fn)(at, static_cast<unsigned char>(value), width, stream); break;
      case 1: r = reinterpret_cast<row16>(fn)(at, static_cast<unsigned short>(value), width, stream); break;
      default: r = reinterpret_cast<row32>(fn)(at, value, width, stream); break;
    }
  } else {
    switch (k) {
      case 0:
        r = reinterpret_cast<rows8>(fn)(at, pitch, static_cast<unsigned char>(value), width, height, stream);
        break;
      case 1:
        r = reinterpret_cast<rows16>(fn)(at, pitch, static_cast<unsigned short>(value), width, height,
                                         stream);
        break;
      default: r = reinterpret_cast<rows32>(fn)(at, pitch, value, width, height, stream); break;
    }
  }
  // The driver's and the runtime's codes share their values for these.
  return r == CUDA_SUCCESS ? cudaSuccess : static_cast<cudaError_t>(r);
}

cudaError_t launch_kernel(const void* f, dim3 grid, dim3 block, void** args, std::size_t shared,
                          cudaStream_t stream) {
  return cudaLaunchKernel(f, grid, block, args, shared, stream);
}

// ------------------------------------------ kernel nodes through the driver --
// The runtime's kernel-node calls resolve the kernel's function from its host
// stub on every call: about 40 % of what cudaGraphAddKernelNode costs
// (docs/benchmarks.md, "Native paths"). Within a same_device_batch the
// function is resolved once and the node goes to the driver's own entry
// point. Whatever the driver refuses is asked of the runtime again, so that
// an error has the runtime's code, message and sticky state.

struct driver_calls {
  decltype(&cuGraphAddKernelNode) add_kernel_node = nullptr;
  decltype(&cuGraphKernelNodeSetParams) kernel_node_set_params = nullptr;
  decltype(&cuGraphExecKernelNodeSetParams) exec_kernel_node_set_params = nullptr;
  decltype(&cuGraphAddEmptyNode) add_empty_node = nullptr;
  decltype(&cuKernelGetFunction) kernel_get_function = nullptr;
};

const driver_calls& driver() {
  static const driver_calls calls{
      reinterpret_cast<decltype(&cuGraphAddKernelNode)>(driver_entry("cuGraphAddKernelNode")),
      reinterpret_cast<decltype(&cuGraphKernelNodeSetParams)>(driver_entry("cuGraphKernelNodeSetParams")),
      reinterpret_cast<decltype(&cuGraphExecKernelNodeSetParams)>(
          driver_entry("cuGraphExecKernelNodeSetParams")),
      reinterpret_cast<decltype(&cuGraphAddEmptyNode)>(driver_entry("cuGraphAddEmptyNode")),
      reinterpret_cast<decltype(&cuKernelGetFunction)>(driver_entry("cuKernelGetFunction")),
  };
  return calls;
}

/// What this thread's innermost open batch remembers (an exec's memory, or
/// the outermost batch's own); null while no batch is open. A kernel is
/// resolved the second time a batch asks for it: resolving costs about what
/// the runtime's call saves, so a lone call (a rebind of one reader, the
/// first time) keeps the runtime's.
struct batch_state {
  kernel_functions* memory = nullptr;
  std::uint64_t driver_calls = 0;
};
thread_local batch_state batch;

/// The function of `kernel` in the current context: a host stub (code of a
/// loaded image) is looked up by the runtime, a cudaKernel_t of a loaded
/// library (heap memory) by the driver, the two ways the runtime's own call
/// takes, so that neither is asked about what it does not know (an API
/// error that tools such as compute-sanitizer would report).
CUfunction resolve(kernel_functions::entry& entry) {
  entry.asked_again = true;
  Dl_info image{};
  if (dladdr(entry.kernel, &image) != 0) {
    cudaFunction_t function = nullptr;
    // Not a kernel after all: the runtime's call then fails, and reports it.
    if (cudaGetFuncBySymbol(&function, entry.kernel) == cudaSuccess)
      entry.function = function;
    else
      (void)cudaGetLastError();
  } else if (const auto kernel_function = driver().kernel_get_function) {
    CUfunction function = nullptr;
    if (kernel_function(&function, static_cast<CUkernel>(const_cast<void*>(entry.kernel))) == CUDA_SUCCESS)
      entry.function = function;
  }
  return static_cast<CUfunction>(entry.function);
}

/// The driver's function for `kernel` in the current context, or null
/// where the runtime's own call should be made.
CUfunction function_in_batch(const void* kernel) {
  if (batch.memory == nullptr || kernel == nullptr) return nullptr;
  kernel_functions& m = *batch.memory;
  kernel_functions::entry* found = nullptr;
  if (m.count != 0 && m.entries[m.last].kernel == kernel) {
    found = &m.entries[m.last];
  } else {
    for (unsigned i = 0; i < m.count && !found; ++i)
      if (m.entries[i].kernel == kernel) {
        m.last = i;
        found = &m.entries[i];
      }
  }
  if (!found) {
    const unsigned slot = m.count < kernel_functions::capacity ? m.count++ : (m.last + 1) % kernel_functions::capacity;
    m.entries[slot] = {kernel, nullptr, false};
    m.last = slot;
    return nullptr;
  }
  if (found->function || found->asked_again) return static_cast<CUfunction>(found->function);
  return resolve(*found);
}

CUDA_KERNEL_NODE_PARAMS driver_params(CUfunction function, const cudaKernelNodeParams& p) noexcept {
  CUDA_KERNEL_NODE_PARAMS d{};
  d.func = function;
  d.gridDimX = p.gridDim.x;
  d.gridDimY = p.gridDim.y;
  d.gridDimZ = p.gridDim.z;
  d.blockDimX = p.blockDim.x;
  d.blockDimY = p.blockDim.y;
  d.blockDimZ = p.blockDim.z;
  d.sharedMemBytes = p.sharedMemBytes;
  d.kernelParams = p.kernelParams;
  d.extra = p.extra;
  return d;
}

/// Sends `p` through `driver_call` (given the driver's parameters) where
/// the batch has the kernel's function and the driver accepts it; false
/// where the runtime's own call must be made.
template <class DriverCall>
bool sent_through_driver(DriverCall* driver_call, const cudaKernelNodeParams& p,
                         const auto& call) {
  if (driver_call == nullptr) return false;
  const CUfunction function = function_in_batch(p.func);
  if (function == nullptr) return false;
  const CUDA_KERNEL_NODE_PARAMS d = driver_params(function, p);
  if (call(driver_call, d) != CUDA_SUCCESS) return false;
  ++batch.driver_calls;
  return true;
}

cudaError_t add_kernel_node(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps,
                            std::size_t count, const cudaKernelNodeParams* p) {
  if (sent_through_driver(driver().add_kernel_node, *p, [&](auto add, const CUDA_KERNEL_NODE_PARAMS& d) {
        return add(reinterpret_cast<CUgraphNode*>(out), reinterpret_cast<CUgraph>(g),
                   reinterpret_cast<const CUgraphNode*>(deps), count, &d);
      }))
    return cudaSuccess;
  return cudaGraphAddKernelNode(out, g, deps, count, p);
}

cudaError_t kernel_node_set_params(cudaGraphNode_t n, const cudaKernelNodeParams* p) {
  if (sent_through_driver(driver().kernel_node_set_params, *p, [&](auto set, const CUDA_KERNEL_NODE_PARAMS& d) {
        return set(reinterpret_cast<CUgraphNode>(n), &d);
      }))
    return cudaSuccess;
  return cudaGraphKernelNodeSetParams(n, p);
}

cudaError_t exec_kernel_node_set_params(cudaGraphExec_t e, cudaGraphNode_t n,
                                        const cudaKernelNodeParams* p) {
  if (sent_through_driver(driver().exec_kernel_node_set_params, *p,
                          [&](auto set, const CUDA_KERNEL_NODE_PARAMS& d) {
                            return set(reinterpret_cast<CUgraphExec>(e), reinterpret_cast<CUgraphNode>(n), &d);
                          }))
    return cudaSuccess;
  return cudaGraphExecKernelNodeSetParams(e, n, p);
}

/// An empty node has no function to resolve: the driver's call whenever a
/// batch is open.
cudaError_t add_empty_node(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps,
                           std::size_t count) {
  if (batch.memory != nullptr)
    if (const auto add = driver().add_empty_node)
      if (add(reinterpret_cast<CUgraphNode*>(out), reinterpret_cast<CUgraph>(g),
              reinterpret_cast<const CUgraphNode*>(deps), count) == CUDA_SUCCESS) {
        ++batch.driver_calls;
        return cudaSuccess;
      }
  return cudaGraphAddEmptyNode(out, g, deps, count);
}

// ------------------------------------------- kernel nodes read back (import) --
// Argument sizes and names of a kernel are known only to the driver.
struct driver_readers {
  PFN_cuGraphKernelNodeGetParams_v12000 kernel_node_params = nullptr;
  PFN_cuFuncGetParamInfo_v12040 func_param_info = nullptr;
  PFN_cuKernelGetParamInfo_v12040 kernel_param_info = nullptr;
  PFN_cuFuncGetName_v12030 func_name = nullptr;
  PFN_cuKernelGetName_v12030 kernel_name = nullptr;
};

template <class F>
void load_driver(const char* symbol, unsigned version, F& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status) == cudaSuccess &&
      status == cudaDriverEntryPointSuccess)
    out = reinterpret_cast<F>(fn);
  else
    (void)cudaGetLastError();
}

const driver_readers& readers() {
  static const driver_readers loaded = [] {
    driver_readers d;
    load_driver("cuGraphKernelNodeGetParams", 12000, d.kernel_node_params);
    load_driver("cuFuncGetParamInfo", 12040, d.func_param_info);
    load_driver("cuKernelGetParamInfo", 12040, d.kernel_param_info);
    load_driver("cuFuncGetName", 12030, d.func_name);
    load_driver("cuKernelGetName", 12030, d.kernel_name);
    return d;
  }();
  return loaded;
}

/// The runtime's code for a driver's result, for the few these calls give.
cudaError_t from_driver(CUresult r) noexcept {
  switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    default: return cudaErrorUnknown;
  }
}

cudaError_t kernel_node_get_driver_params(cudaGraphNode_t n, CUDA_KERNEL_NODE_PARAMS_v2_st* p) {
  const auto get = readers().kernel_node_params;
  return get ? from_driver(get(reinterpret_cast<CUgraphNode>(n), p)) : cudaErrorNotSupported;
}
cudaError_t function_get_param_info(cudaFunction_t f, std::size_t index, std::size_t* offset,
                                    std::size_t* size) {
  const auto get = readers().func_param_info;
  return get ? from_driver(get(f, index, offset, size)) : cudaErrorNotSupported;
}
cudaError_t kernel_get_param_info(cudaKernel_t k, std::size_t index, std::size_t* offset,
                                  std::size_t* size) {
  const auto get = readers().kernel_param_info;
  return get ? from_driver(get(k, index, offset, size)) : cudaErrorNotSupported;
}
cudaError_t function_get_name(const char** name, cudaFunction_t f) {
  const auto get = readers().func_name;
  return get ? from_driver(get(name, f)) : cudaErrorNotSupported;
}
cudaError_t kernel_get_name(const char** name, cudaKernel_t k) {
  const auto get = readers().kernel_name;
  return get ? from_driver(get(name, k)) : cudaErrorNotSupported;
}

const api_table runtime_table{
    &cudaGraphCreate,
    &cudaGraphDestroy,
    &cudaGraphDestroyNode,
    &add_kernel_node,
    &cudaGraphAddMemcpyNode,
    &cudaGraphAddMemsetNode,
    &cudaGraphAddHostNode,
    &cudaGraphAddChildGraphNode,
    &add_empty_node,
    &cudaGraphAddEventRecordNode,
    &cudaGraphAddEventWaitNode,
    &cudaGraphAddMemAllocNode,
    &cudaGraphAddMemFreeNode,
    &cudaGraphAddNode,
    &cudaGraphConditionalHandleCreate,
    &cudaGraphKernelNodeSetAttribute,
    &kernel_node_set_params,
    &cudaGraphMemcpyNodeSetParams,
    &cudaGraphMemsetNodeSetParams,
    &cudaGraphHostNodeSetParams,
    &cudaGraphEventRecordNodeSetEvent,
    &cudaGraphEventWaitNodeSetEvent,
    &exec_kernel_node_set_params,
    &cudaGraphExecMemcpyNodeSetParams,
    &cudaGraphExecMemsetNodeSetParams,
    &cudaGraphExecHostNodeSetParams,
    &cudaGraphExecEventRecordNodeSetEvent,
    &cudaGraphExecEventWaitNodeSetEvent,
    &cudaGraphExecChildGraphNodeSetParams,
    &cudaGraphNodeSetEnabled,
    &cudaGraphNodeGetEnabled,
    &cudaGraphGetNodes,
    &cudaGraphGetEdges,
    &cudaGraphNodeGetType,
    &cudaGraphKernelNodeGetParams,
    &cudaGraphKernelNodeGetAttribute,
    &cudaGraphMemcpyNodeGetParams,
    &cudaGraphMemsetNodeGetParams,
    &cudaGraphHostNodeGetParams,
    &cudaGraphChildGraphNodeGetGraph,
    &cudaGraphEventRecordNodeGetEvent,
    &cudaGraphEventWaitNodeGetEvent,
    &cudaGraphMemAllocNodeGetParams,
    &cudaGraphMemFreeNodeGetParams,
    &cudaGraphClone,
    &cudaGraphNodeFindInClone,
    &kernel_node_get_driver_params,
    &function_get_param_info,
    &kernel_get_param_info,
    &function_get_name,
    &kernel_get_name,
    &cudaGraphInstantiateWithParams,
    &cudaGraphExecUpdate,
    &cudaGraphExecDestroy,
    &cudaGraphLaunch,
    &cudaGraphUpload,
    &cudaStreamCreateWithFlags,
    &cudaStreamDestroy,
    &cudaStreamSynchronize,
    &cudaStreamBeginCapture,
    &cudaStreamEndCapture,
    &cudaStreamGetCaptureInfo,
    &cudaStreamUpdateCaptureDependencies,
    &cudaStreamBeginCaptureToGraph,
    &cudaStreamIsCapturing,
    &cudaThreadExchangeStreamCaptureMode,
    &cudaGetDevice,
    &cudaDeviceGetAttribute,
    &occupancy_max_active_blocks,
    &get_last_error,
    &cudaMemGetInfo,
    &cudaDeviceGraphMemTrim,
    &cudaDeviceGetGraphMemAttribute,
    &cudaEventCreateWithFlags,
    &cudaEventDestroy,
    &cudaUserObjectCreate,
    &cudaUserObjectRelease,
    &cudaGraphRetainUserObject,
    &launch_kernel,
    &cudaMemcpy3DAsync,
    &memset_2d_async,
    &cudaLaunchHostFunc,
    &cudaEventRecord,
    &cudaStreamWaitEvent,
    &cudaMallocAsync,
    &cudaFreeAsync,
};

}  // namespace

const api_table* active_api = &runtime_table;

same_device_batch::same_device_batch() noexcept {
  if (batch.memory) return;  // within another batch: its memory
  batch.memory = &own_;
  swapped_ = true;
}

same_device_batch::same_device_batch(kernel_functions& memory) noexcept
    : previous_(batch.memory), swapped_(true) {
  batch.memory = &memory;
}

same_device_batch::~same_device_batch() {
  if (swapped_) batch.memory = previous_;
}


batch_pause::batch_pause() noexcept : paused_(std::exchange(batch.memory, nullptr)) {}

batch_pause::~batch_pause() {
  batch.memory = paused_;
  // The user's code may have changed the device: what was resolved is forgotten.
  if (batch.memory) batch.memory->count = batch.memory->last = 0;
}

std::uint64_t same_device_batch::driver_calls() noexcept { return batch.driver_calls; }

const api_table& cuda_runtime_api() noexcept { return runtime_table; }

const api_table* install_api(const api_table* table) noexcept {
  const api_table* previous = active_api;
  active_api = table ? table : &runtime_table;
  return previous;
}

// ------------------------------------------------------------ the table --
namespace {

/// Checks one native call made for node `name`; `call` names the CUDA function.
inline void check(cudaError_t code, const char* call, std::string_view name) {
  if (code != cudaSuccess) [[unlikely]] throw_cuda_error(code, call, name);
}

[[noreturn]] void refuse(std::string_view name, const std::string& why, const char* call) {
  throw error("node '" + std::string(name) + "': " + why, cudaErrorNotSupported, call,
              std::string(name));
}

}  // namespace

void run_kernel(cudaStream_t stream, const cudaKernelNodeParams& p, std::string_view name) {
  check(api().launch_kernel(p.func, p.gridDim, p.blockDim, p.kernelParams, p.sharedMemBytes, stream),
        "cudaLaunchKernel", name);
}
void run_memcpy(cudaStream_t stream, const cudaMemcpy3DParms& p, std::string_view name) {
  check(api().memcpy_3d_async(&p, stream), "cudaMemcpy3DAsync", name);
}
void run_memset(cudaStream_t stream, const cudaMemsetParams& p, std::string_view name) {
  check(api().memset_2d_async(p.dst, p.pitch, p.value, p.elementSize, p.width, p.height, stream),
        "cuMemsetD2DAsync", name);
}
void run_host(cudaStream_t stream, const cudaHostNodeParams& p, std::string_view name) {
  check(api().launch_host_func(stream, p.fn, p.userData), "cudaLaunchHostFunc", name);
}
void run_event_record(cudaStream_t stream, cudaEvent_t e, std::string_view name) {
  check(api().event_record(e, stream), "cudaEventRecord", name);
}
void run_event_wait(cudaStream_t stream, cudaEvent_t e, std::string_view name) {
  check(api().stream_wait_event(stream, e, 0), "cudaStreamWaitEvent", name);
}
void* run_mem_alloc(cudaStream_t stream, std::size_t bytes, std::string_view name) {
  void* p = nullptr;
  check(api().malloc_async(&p, bytes, stream), "cudaMallocAsync", name);
  return p;
}
void run_mem_free(cudaStream_t stream, void* pointer, std::string_view name) {
  check(api().free_async(pointer, stream), "cudaFreeAsync", name);
}

cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, const cudaKernelNodeParams& p,
                           std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_kernel_node(&n, g, deps.data(), deps.size(), &p), "cudaGraphAddKernelNode", name);
  return n;
}

cudaGraphEdgeData edge_data_of(edge_kind kind) noexcept {
  cudaGraphEdgeData data{};
  if (kind == edge_kind::full) return data;
  data.type = cudaGraphDependencyTypeProgrammatic;
  data.from_port = kind == edge_kind::programmatic ? cudaGraphKernelNodePortProgrammatic
                                                   : cudaGraphKernelNodePortLaunchCompletion;
  return data;
}

std::optional<edge_kind> edge_kind_of(const cudaGraphEdgeData& data) noexcept {
  if (data.to_port != 0) return std::nullopt;
  if (data.type == cudaGraphDependencyTypeDefault && data.from_port == cudaGraphKernelNodePortDefault)
    return edge_kind::full;
  if (data.type != cudaGraphDependencyTypeProgrammatic) return std::nullopt;
  if (data.from_port == cudaGraphKernelNodePortProgrammatic) return edge_kind::programmatic;
  if (data.from_port == cudaGraphKernelNodePortLaunchCompletion) return edge_kind::launch_completion;
  return std::nullopt;
}

cudaGraphNode_t add_kernel(cudaGraph_t g, deps_span deps, std::span<const cudaGraphEdgeData> edges,
                           const cudaKernelNodeParams& p, std::string_view name) {
  if (edges.size() != deps.size())
    throw error("internal error: kernel node '" + std::string(name) + "' has " +
                    std::to_string(edges.size()) + " edge kinds for " + std::to_string(deps.size()) +
                    " dependencies",
                cudaErrorInvalidValue, "cudaGraphAddNode", std::string(name));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeKernel;
  params.kernel.func = p.func;
  params.kernel.gridDim = p.gridDim;
  params.kernel.blockDim = p.blockDim;
  params.kernel.sharedMemBytes = p.sharedMemBytes;
  params.kernel.kernelParams = p.kernelParams;
  params.kernel.extra = p.extra;
  cudaGraphNode_t n = nullptr;
  check(api().add_node(&n, g, deps.data(), edges.data(), deps.size(), &params), "cudaGraphAddNode",
        name);
  return n;
}

void set_kernel(param_target to, cudaGraphNode_t n, const cudaKernelNodeParams& p,
                std::string_view name) {
  if (to.exec)
    check(api().exec_kernel_node_set_params(to.exec, n, &p), "cudaGraphExecKernelNodeSetParams",
          name);
  else
    check(api().kernel_node_set_params(n, &p), "cudaGraphKernelNodeSetParams", name);
}

void set_kernel_attribute(cudaGraphNode_t n, cudaLaunchAttributeID id,
                          const cudaLaunchAttributeValue& value, std::string_view name) {
  check(api().kernel_node_set_attribute(n, id, &value), "cudaGraphKernelNodeSetAttribute", name);
}

namespace {
/// The sets of objects whose user objects CUDA destroyed, waiting for a
/// thread that may release them. Never destroyed: a destructor CUDA calls
/// while the program exits still finds it.
struct release_queue {
  std::mutex mutex;
  std::vector<std::vector<std::shared_ptr<const void>>*> pending;
};
release_queue& retained_queue() {
  static auto* queue = new release_queue;
  return *queue;
}
void CUDART_CB queue_for_release(void* objects) noexcept {
  release_queue& q = retained_queue();
  const std::lock_guard lock(q.mutex);
  q.pending.push_back(static_cast<std::vector<std::shared_ptr<const void>>*>(objects));
}
}  // namespace

void retain_in_graph(cudaGraph_t g, std::vector<std::shared_ptr<const void>> objects,
                     std::string_view graph_name) {
  (void)release_retained_objects();
  if (objects.empty()) return;
  auto held = std::make_unique<std::vector<std::shared_ptr<const void>>>(std::move(objects));
  cudaUserObject_t object = nullptr;
  check(api().user_object_create(&object, held.get(), &queue_for_release, 1,
                                 cudaUserObjectNoDestructorSync),
        "cudaUserObjectCreate", graph_name);
  (void)held.release();  // the user object's now: its destructor queues it
  if (const cudaError_t code = api().graph_retain_user_object(g, object, 1, cudaGraphUserObjectMove);
      code != cudaSuccess) {
    (void)api().user_object_release(object, 1);
    (void)release_retained_objects();
    check(code, "cudaGraphRetainUserObject", graph_name);
  }
}

void send_launch_attributes(cudaGraphNode_t h, int priority, const launch_attributes& a,
                            std::string_view name) {
  cudaLaunchAttributeValue v{};
  if (priority != 0) {
    v.priority = priority;
    set_kernel_attribute(h, cudaLaunchAttributePriority, v, name);
  }
  if (has_cluster(a)) {
    v = {};
    v.clusterDim.x = a.cluster.x;
    v.clusterDim.y = a.cluster.y;
    v.clusterDim.z = a.cluster.z;
    set_kernel_attribute(h, cudaLaunchAttributeClusterDimension, v, name);
  }
  if (a.cooperative) {
    v = {};
    v.cooperative = 1;
    set_kernel_attribute(h, cudaLaunchAttributeCooperative, v, name);
  }
  if (a.mem_sync_domain != cudaLaunchMemSyncDomainDefault) {
    v = {};
    v.memSyncDomain = a.mem_sync_domain;
    set_kernel_attribute(h, cudaLaunchAttributeMemSyncDomain, v, name);
  }
  if (a.shared_carveout >= 0) {
    v = {};
    v.sharedMemCarveout = static_cast<unsigned>(a.shared_carveout);
    set_kernel_attribute(h, cudaLaunchAttributePreferredSharedMemoryCarveout, v, name);
  }
  if (const access_policy_window& w = a.access_policy; w.bytes != 0) {
    v = {};
    v.accessPolicyWindow =
        cudaAccessPolicyWindow{const_cast<void*>(w.base), w.bytes, w.hit_ratio, w.hit, w.miss};
    set_kernel_attribute(h, cudaLaunchAttributeAccessPolicyWindow, v, name);
  }
}

void check_cooperative_grid(const void* function, dim3 grid, dim3 block, unsigned shared_bytes,
                            std::string_view name) {
  int device = 0, multiprocessors = 0, per_multiprocessor = 0;
  check(api().get_device(&device), "cudaGetDevice", name);
  check(api().device_get_attribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute", name);
  const unsigned threads = block.x * block.y * block.z;
  check(api().occupancy_max_active_blocks(&per_multiprocessor, function, static_cast<int>(threads),
                                          shared_bytes),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor", name);
  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  const std::uint64_t resident = std::uint64_t(per_multiprocessor) * std::uint64_t(multiprocessors);
  if (blocks <= resident) return;
  throw error("kernel node '" + std::string(name) + "' is a cooperative launch of " +
                  std::to_string(blocks) + " blocks, but at most " + std::to_string(resident) +
                  " can be resident at once on device " + std::to_string(device) + " (" +
                  std::to_string(per_multiprocessor) + " a multiprocessor x " +
                  std::to_string(multiprocessors) + " multiprocessors, at " + std::to_string(threads) +
                  " threads and " + std::to_string(shared_bytes) + " shared bytes a block)",
              cudaErrorCooperativeLaunchTooLarge, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
              std::string(name));
}

cudaMemcpy3DParms memcpy_1d_params(void* dst, const void* src, std::size_t bytes,
                                   cudaMemcpyKind kind) noexcept {
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), bytes, bytes, 1};
  p.dstPtr = cudaPitchedPtr{dst, bytes, bytes, 1};
  p.extent = cudaExtent{bytes, 1, 1};
  p.kind = kind;
  return p;
}

cudaGraphNode_t add_memcpy(cudaGraph_t g, deps_span deps, const cudaMemcpy3DParms& p,
                           std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_memcpy_node(&n, g, deps.data(), deps.size(), &p), "cudaGraphAddMemcpyNode", name);
  return n;
}

void set_memcpy(param_target to, cudaGraphNode_t n, const cudaMemcpy3DParms& p,
                std::string_view name) {
  if (to.exec)
    check(api().exec_memcpy_node_set_params(to.exec, n, &p), "cudaGraphExecMemcpyNodeSetParams",
          name);
  else
    check(api().memcpy_node_set_params(n, &p), "cudaGraphMemcpyNodeSetParams", name);
}

cudaMemsetParams memset_params(void* dst, unsigned bits, unsigned element_size, std::size_t width,
                               std::size_t height, std::size_t pitch_bytes) noexcept {
  cudaMemsetParams p{};
  p.dst = dst;
  p.value = bits;
  p.elementSize = element_size;
  p.width = width;
  p.height = height;
  p.pitch = height > 1 ? pitch_bytes : width * element_size;
  return p;
}

cudaGraphNode_t add_memset(cudaGraph_t g, deps_span deps, const cudaMemsetParams& p,
                           std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_memset_node(&n, g, deps.data(), deps.size(), &p), "cudaGraphAddMemsetNode", name);
  return n;
}

void set_memset(param_target to, cudaGraphNode_t n, const cudaMemsetParams& p,
                std::string_view name) {
  if (to.exec)
    check(api().exec_memset_node_set_params(to.exec, n, &p), "cudaGraphExecMemsetNodeSetParams",
          name);
  else
    check(api().memset_node_set_params(n, &p), "cudaGraphMemsetNodeSetParams", name);
}

cudaGraphNode_t add_host(cudaGraph_t g, deps_span deps, const cudaHostNodeParams& p,
                         std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_host_node(&n, g, deps.data(), deps.size(), &p), "cudaGraphAddHostNode", name);
  return n;
}

void set_host(param_target to, cudaGraphNode_t n, const cudaHostNodeParams& p,
              std::string_view name) {
  if (to.exec)
    check(api().exec_host_node_set_params(to.exec, n, &p), "cudaGraphExecHostNodeSetParams", name);
  else
    check(api().host_node_set_params(n, &p), "cudaGraphHostNodeSetParams", name);
}

cudaGraphNode_t add_child(cudaGraph_t g, deps_span deps, cudaGraph_t child, child_ownership own,
                          std::string_view name) {
  cudaGraphNode_t n = nullptr;
  if (own == child_ownership::clone) {
    check(api().add_child_graph_node(&n, g, deps.data(), deps.size(), child),
          "cudaGraphAddChildGraphNode", name);
    return n;
  }
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeGraph;
  p.graph.graph = child;
  p.graph.ownership = cudaGraphChildGraphOwnershipMove;
  check(api().add_node(&n, g, deps.data(), nullptr, deps.size(), &p), "cudaGraphAddNode", name);
  return n;
}

void set_child(param_target to, cudaGraphNode_t n, cudaGraph_t child, std::string_view name) {
  if (!to.exec)
    refuse(name,
           "a child graph node of the template graph cannot take a new graph (CUDA has no such "
           "setter); set it on the executable graph",
           "cudaGraphExecChildGraphNodeSetParams");
  check(api().exec_child_graph_node_set_params(to.exec, n, child),
        "cudaGraphExecChildGraphNodeSetParams", name);
}

cudaGraphNode_t add_empty(cudaGraph_t g, deps_span deps, std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_empty_node(&n, g, deps.data(), deps.size()), "cudaGraphAddEmptyNode", name);
  return n;
}

cudaGraphNode_t add_event_record(cudaGraph_t g, deps_span deps, cudaEvent_t e,
                                 std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_event_record_node(&n, g, deps.data(), deps.size(), e),
        "cudaGraphAddEventRecordNode", name);
  return n;
}

void set_event_record(param_target to, cudaGraphNode_t n, cudaEvent_t e, std::string_view name) {
  if (to.exec)
    check(api().exec_event_record_node_set_event(to.exec, n, e),
          "cudaGraphExecEventRecordNodeSetEvent", name);
  else
    check(api().event_record_node_set_event(n, e), "cudaGraphEventRecordNodeSetEvent", name);
}

cudaGraphNode_t add_event_wait(cudaGraph_t g, deps_span deps, cudaEvent_t e,
                               std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_event_wait_node(&n, g, deps.data(), deps.size(), e), "cudaGraphAddEventWaitNode",
        name);
  return n;
}

void set_event_wait(param_target to, cudaGraphNode_t n, cudaEvent_t e, std::string_view name) {
  if (to.exec)
    check(api().exec_event_wait_node_set_event(to.exec, n, e), "cudaGraphExecEventWaitNodeSetEvent",
          name);
  else
    check(api().event_wait_node_set_event(n, e), "cudaGraphEventWaitNodeSetEvent", name);
}

allocation add_mem_alloc(cudaGraph_t g, deps_span deps, std::size_t bytes, int device,
                         std::string_view name) {
  if (device < 0) check(api().get_device(&device), "cudaGetDevice", name);
  cudaMemAllocNodeParams p{};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = device;
  p.bytesize = bytes;
  allocation a;
  check(api().add_mem_alloc_node(&a.node, g, deps.data(), deps.size(), &p),
        "cudaGraphAddMemAllocNode", name);
  a.pointer = p.dptr;
  return a;
}

cudaGraphNode_t add_mem_free(cudaGraph_t g, deps_span deps, void* pointer, std::string_view name) {
  cudaGraphNode_t n = nullptr;
  check(api().add_mem_free_node(&n, g, deps.data(), deps.size(), pointer), "cudaGraphAddMemFreeNode",
        name);
  return n;
}

cudaGraphConditionalHandle create_condition(cudaGraph_t g, unsigned default_value,
                                            bool assign_default, std::string_view name) {
  cudaGraphConditionalHandle h{};
  check(api().conditional_handle_create(&h, g, default_value,
                                        assign_default ? cudaGraphCondAssignDefault : 0),
        "cudaGraphConditionalHandleCreate", name);
  return h;
}

namespace {
cudaGraphConditionalNodeType conditional_type(conditional_kind kind) noexcept {
  switch (kind) {
    case conditional_kind::while_loop: return cudaGraphCondTypeWhile;
    case conditional_kind::switch_case: return cudaGraphCondTypeSwitch;
    case conditional_kind::if_then:
    case conditional_kind::if_else: break;
  }
  return cudaGraphCondTypeIf;
}
}  // namespace

cudaGraphNode_t add_conditional(cudaGraph_t g, deps_span deps, cudaGraphConditionalHandle h,
                                conditional_kind kind, unsigned body_count,
                                std::span<cudaGraph_t> bodies_out, std::string_view name) {
  if (bodies_out.size() < body_count)
    throw error("conditional node '" + std::string(name) + "': room for " +
                    std::to_string(bodies_out.size()) + " bodies, " + std::to_string(body_count) +
                    " needed",
                cudaErrorInvalidValue, "cudaGraphAddNode", std::string(name));
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = h;
  p.conditional.type = conditional_type(kind);
  p.conditional.size = body_count;
  cudaGraphNode_t n = nullptr;
  check(api().add_node(&n, g, deps.data(), nullptr, deps.size(), &p), "cudaGraphAddNode", name);
  for (unsigned i = 0; i < body_count; ++i) bodies_out[i] = p.conditional.phGraph_out[i];
  return n;
}

// ------------------------------------------------------- executable graph --
namespace {
std::string_view update_reason(cudaGraphExecUpdateResult r) noexcept {
  switch (r) {
    case cudaGraphExecUpdateErrorTopologyChanged: return "the graph's topology changed";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "the node's type changed";
    case cudaGraphExecUpdateErrorFunctionChanged: return "the kernel function changed";
    case cudaGraphExecUpdateErrorParametersChanged:
      return "its parameters changed in a way CUDA cannot update";
    case cudaGraphExecUpdateErrorNotSupported:
      return "CUDA does not support updating this node (alloc/free nodes, or a conditional's own "
             "parameters)";
    case cudaGraphExecUpdateErrorUnsupportedFunctionChange:
      return "the kernel function changed in an unsupported way";
    case cudaGraphExecUpdateErrorAttributesChanged: return "the node's attributes changed";
    default: return "the update was refused";
  }
}
}  // namespace

void update_exec(cudaGraphExec_t exec, cudaGraph_t from, const node_namer& name_of) {
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t code = api().exec_update(exec, from, &info);
  if (code == cudaSuccess) return;
  (void)api().get_last_error();
  std::string node;
  if (name_of) {
    if (info.errorNode) node = name_of(info.errorNode);
    if (node.empty() && info.errorFromNode) node = name_of(info.errorFromNode);
  }
  std::string message = "cudaGraphExecUpdate refused the update";
  if (!node.empty()) message += " at node '" + node + "'";
  message += ": " + std::string(update_reason(info.result)) + " (" + cudaGetErrorName(code) + ")";
  throw error(message, code, "cudaGraphExecUpdate", node);
}

void set_enabled(cudaGraphExec_t exec, cudaGraphNode_t n, bool on, std::string_view name) {
  check(api().node_set_enabled(exec, n, on ? 1u : 0u), "cudaGraphNodeSetEnabled", name);
}

bool enabled(cudaGraphExec_t exec, cudaGraphNode_t n, std::string_view name) {
  unsigned on = 0;
  check(api().node_get_enabled(exec, n, &on), "cudaGraphNodeGetEnabled", name);
  return on != 0;
}

// ---------------------------------------------------------------- capture --
void begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode, std::string_view name) {
  check(api().stream_begin_capture(stream, mode), "cudaStreamBeginCapture", name);
}

unique_graph end_capture(cudaStream_t stream, std::string_view name) {
  cudaGraph_t graph = nullptr;
  const cudaError_t code = api().stream_end_capture(stream, &graph);
  unique_graph owned(graph);  // a partial graph of a failed capture is destroyed on the throw
  check(code, "cudaStreamEndCapture", name);
  return owned;
}

capture_point capture_in_progress(cudaStream_t stream, std::string_view name) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  capture_point point;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  std::size_t count = 0;
  check(api().stream_get_capture_info(stream, &status, nullptr, &point.graph, &deps, &edges, &count),
        "cudaStreamGetCaptureInfo", name);
  if (status != cudaStreamCaptureStatusActive)
    throw error("graph '" + std::string(name) + "': the stream is not capturing" +
                    (status == cudaStreamCaptureStatusInvalidated
                         ? " (its capture was invalidated by an earlier error)"
                         : " (begin a capture on it first)"),
                cudaErrorIllegalState, "cudaStreamGetCaptureInfo");
  point.dependencies.assign(deps, deps + count);
  return point;
}

void set_capture_dependencies(cudaStream_t stream, std::span<const cudaGraphNode_t> nodes,
                              std::string_view name) {
  std::vector<cudaGraphNode_t> copy(nodes.begin(), nodes.end());
  check(api().stream_update_capture_dependencies(stream, copy.data(), nullptr, copy.size(),
                                                 cudaStreamSetCaptureDependencies),
        "cudaStreamUpdateCaptureDependencies", name);
}

void destroy_node(cudaGraphNode_t node) noexcept { (void)api().graph_destroy_node(node); }

void abandon_capture(cudaStream_t stream) noexcept {
  cudaGraph_t graph = nullptr;
  (void)api().stream_end_capture(stream, &graph);
  if (graph) (void)api().graph_destroy(graph);
  (void)api().get_last_error();  // an invalidated capture must not fail the thread's next call
}

}  // namespace cudag::native

namespace cudag {

std::size_t release_retained_objects() noexcept {
  std::vector<std::vector<std::shared_ptr<const void>>*> taken;
  {
    native::release_queue& q = native::retained_queue();
    const std::lock_guard lock(q.mutex);
    taken.swap(q.pending);
  }
  for (auto* objects : taken) delete objects;
  return taken.size();
}

}  // namespace cudag
