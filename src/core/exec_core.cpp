#include "cudag/exec_core.hpp"

#include "cudag/native_api.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include <unistd.h>

namespace cudag {

namespace {
std::shared_ptr<CUgraph_st> share(unique_graph graph) {
  if (!graph) return {};
  return std::shared_ptr<CUgraph_st>(graph.release(), graph_deleter{});
}
}  // namespace

struct host_failure_sink::state {
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string node;
  std::exception_ptr failure;
};

host_failure_sink::host_failure_sink() : state_(std::make_unique<state>()) {}
host_failure_sink::~host_failure_sink() = default;

bool host_failure_sink::failed() const noexcept {
  return state_->failed.load(std::memory_order_acquire);
}

void host_failure_sink::record(std::string_view node, std::exception_ptr failure) noexcept {
  state& s = *state_;
  std::lock_guard lock(s.mutex);
  if (s.failed.load(std::memory_order_relaxed)) return;  // keep the first
  try {
    s.node.assign(node);
  } catch (...) {
  }
  s.failure = std::move(failure);
  s.failed.store(true, std::memory_order_release);
}

void host_failure_sink::rethrow_if_failed() {
  if (!failed()) return;
  state& s = *state_;
  std::string node;
  std::exception_ptr failure;
  {
    std::lock_guard lock(s.mutex);
    node.swap(s.node);
    std::swap(failure, s.failure);  // exception_ptr::swap is libstdc++'s own
    s.failed.store(false, std::memory_order_release);
  }
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  throw error("host node '" + node + "' threw: " + what, cudaSuccess, {}, node);
}

void check_instantiate_options(const instantiate_options& options) {
  if (options.device_launch && options.auto_free_on_launch)
    throw error("instantiate options ask for device launch and auto-free on launch together, "
                "which CUDA refuses",
                cudaErrorInvalidValue);
}

unique_graph_exec instantiate_native(cudaGraph_t graph, const instantiate_options& options,
                                     const std::function<std::string(cudaGraphNode_t)>& name_of) {
  check_instantiate_options(options);
  cudaGraphInstantiateParams params{};
  params.flags = 0;
  if (options.auto_free_on_launch) params.flags |= cudaGraphInstantiateFlagAutoFreeOnLaunch;
  if (options.device_launch) params.flags |= cudaGraphInstantiateFlagDeviceLaunch;
  if (options.use_node_priority) params.flags |= cudaGraphInstantiateFlagUseNodePriority;
  if (options.upload) {
    params.flags |= cudaGraphInstantiateFlagUpload;
    params.uploadStream = options.upload_stream;
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t code = native::api().instantiate(&exec, graph, &params);
  if (code == cudaSuccess && params.result_out != cudaGraphInstantiateSuccess)
    code = cudaErrorInvalidValue;
  if (code != cudaSuccess) {
    std::string node;
    if (params.errNode_out && name_of) node = name_of(params.errNode_out);
    if (params.errNode_out && node.empty()) {
      std::ostringstream id;
      id << "node@" << static_cast<const void*>(params.errNode_out);
      node = id.str();
    }
    throw_cuda_error(code, "cudaGraphInstantiateWithParams", node);
  }
  unique_graph_exec out(exec);
  // A device launch runs what was uploaded: uploaded here unless the
  // caller asked for (and orders) the upload itself.
  if (options.device_launch && !options.upload) {
    cuda_check(native::api().upload(exec, options.upload_stream), "cudaGraphUpload");
    cuda_check(native::api().stream_synchronize(options.upload_stream), "cudaStreamSynchronize");
  }
  return out;
}

exec_core::exec_core()
    : host_failures_(std::make_shared<host_failure_sink>()),
      retired_(std::make_shared<retired_objects>()) {}

exec_core::exec_core(unique_graph graph, const instantiate_options& options)
    : host_failures_(std::make_shared<host_failure_sink>()),
      retired_(std::make_shared<retired_objects>()),
      graph_(share(std::move(graph))),
      exec_(instantiate_native(graph_.get(), options)) {
  remember(options);
}

void exec_core::remember(const instantiate_options& options) noexcept {
  device_launch_ = options.device_launch;
  upload_waited_ = !options.upload;
  upload_stream_ = options.upload_stream;
}

void exec_core::upload_after_change() {
  if (!device_launch_) return;
  cuda_check(native::api().upload(exec_.get(), upload_stream_), "cudaGraphUpload");
  if (upload_waited_)
    cuda_check(native::api().stream_synchronize(upload_stream_), "cudaStreamSynchronize");
}

exec_core::exec_core(exec_core&&) noexcept = default;
exec_core& exec_core::operator=(exec_core&&) noexcept = default;
exec_core::~exec_core() = default;

void exec_core::reinstantiate(unique_graph graph, const instantiate_options& options,
                              const std::function<std::string(cudaGraphNode_t)>& name_of) {
  unique_graph_exec fresh = instantiate_native(graph.get(), options, name_of);
  exec_ = std::move(fresh);
  remember(options);
  graph_ = share(std::move(graph));
  template_shared_ = false;
}

void exec_core::replace_template(unique_graph graph) {
  graph_ = share(std::move(graph));
  template_shared_ = false;
}

exec_core exec_core::sharing_template() {
  exec_core other;
  other.graph_ = graph_;
  other.owned_ = owned_;
  other.template_shared_ = true;
  template_shared_ = true;
  return other;
}

void exec_core::instantiate_template(const instantiate_options& options,
                                     const std::function<std::string(cudaGraphNode_t)>& name_of) {
  exec_ = instantiate_native(graph_.get(), options, name_of);
  remember(options);
}

void exec_core::launch(cudaStream_t stream) {
  host_failures_->rethrow_if_failed();
  cuda_check(native::api().launch(exec_.get(), stream), "cudaGraphLaunch");
  ++replays_;
}

void exec_core::upload(cudaStream_t stream) {
  cuda_check(native::api().upload(exec_.get(), stream), "cudaGraphUpload");
}

void exec_core::synchronize(cudaStream_t stream) {
  cuda_check(native::api().stream_synchronize(stream), "cudaStreamSynchronize");
  retired_->release();  // launches before this point have finished with them
  host_failures_->rethrow_if_failed();
}

std::string exec_core::driver_dot(unsigned flags) const {
  char path[] = "/tmp/cudag-dot-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw error("driver_dot: cannot create a temporary file");
  close(fd);
  const cudaError_t code = cudaGraphDebugDotPrint(graph_.get(), path, flags);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  cuda_check(code, "cudaGraphDebugDotPrint");
  return text.str();
}

}  // namespace cudag
