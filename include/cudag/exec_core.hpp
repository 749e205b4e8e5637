#pragma once
// What every instantiated graph has, whichever front end built it: the
// template graph, the executable graph, the objects both point at, and the
// failures of host nodes waiting to be rethrown on the caller's thread.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "cudag/handles.hpp"
#include "cudag/host_failure_sink.hpp"
#include "cudag/lean_std.hpp"

namespace cudag {

struct instantiate_options {
  bool auto_free_on_launch = false;  ///< cudaGraphInstantiateFlagAutoFreeOnLaunch
  bool use_node_priority = false;    ///< cudaGraphInstantiateFlagUseNodePriority
  bool upload = false;               ///< upload on `upload_stream` while instantiating
  cudaStream_t upload_stream = nullptr;
  /// cudaGraphInstantiateFlagDeviceLaunch: launchable from device code too
  /// (exec::device_handle(), cudag/device_graph.hpp). The graph is checked
  /// first (check_device_launchable), and uploaded at instantiation and
  /// after every change a rebind or update sends (on `upload_stream`,
  /// waited for unless `upload` says the caller orders it), as CUDA requires
  /// before a device launch. Not with auto_free_on_launch (CUDA refuses).
  bool device_launch = false;
};

/// Throws where `options` ask for what CUDA refuses together (device launch
/// with auto-free on launch): before anything is lowered.
void check_instantiate_options(const instantiate_options& options);

struct graph_spec;
/// Throws check_error, naming the node (by path), where `spec` holds a node
/// CUDA refuses in a graph instantiated for device launch
/// (allowed_in_device_launchable_graph in cudag/spec.hpp).
void check_device_launchable(const graph_spec& spec);

/// How rebind() applied a change (for tests and benchmarks).
enum class rebind_path { none, node_setters, whole_graph_update };

/// A rebind that touches more than this fraction of the top-level nodes (and
/// at least whole_graph_update_minimum of them) goes through one
/// cudaGraphExecUpdate instead of one exec setter per node. On launched
/// executable graphs (an H100, bench/exec/bench_exec, docs/benchmarks.md)
/// the setters were faster at every count up to all 1000 nodes of a chain,
/// so 1.0: never, for nodes setters can reach. Nodes inside child graphs or
/// conditional bodies always take the whole-graph update.
inline constexpr double whole_graph_update_fraction = 1.0;
inline constexpr std::size_t whole_graph_update_minimum = 16;

/// automatic: the rule above; the others force one path (benchmarks, or a
/// caller who measured their own graph).
enum class rebind_policy { automatic, node_setters, whole_graph_update };

/// Whether a rebind touching `changed` of `top_level` nodes should go
/// through one whole-graph update (shared by the spec and DSL execs).
[[nodiscard]] constexpr bool prefer_whole_graph_update(std::size_t changed,
                                                       std::size_t top_level) noexcept {
  return changed >= whole_graph_update_minimum &&
         static_cast<double>(changed) > whole_graph_update_fraction * static_cast<double>(top_level);
}

/// Objects that something replaced while launches in flight may still use
/// them (a host node's earlier arguments, what an updated graph pointed at):
/// kept until the next synchronize() of the exec.
class retired_objects {
 public:
  void add(std::shared_ptr<const void> object) { objects_.push_back(std::move(object)); }
  void release() noexcept { objects_.clear(); }
  [[nodiscard]] std::size_t size() const noexcept { return objects_.size(); }
  /// Takes back what was retired from position `first` on (what a refused
  /// rebind replaced, which the exec may still use).
  [[nodiscard]] std::vector<std::shared_ptr<const void>> take_from(std::size_t first) {
    std::vector<std::shared_ptr<const void>> taken;
    if (first >= objects_.size()) return taken;
    taken.assign(std::make_move_iterator(objects_.begin() + static_cast<std::ptrdiff_t>(first)),
                 std::make_move_iterator(objects_.end()));
    objects_.resize(first);
    return taken;
  }

 private:
  std::vector<std::shared_ptr<const void>> objects_;
};

class exec_core {
 public:
  // Special members compiled in the library: a translation unit holding an
  // exec does not instantiate the shared and owned pointers' code.
  exec_core();
  /// Instantiates `graph`, keeping it as the template for whole-graph updates.
  exec_core(unique_graph graph, const instantiate_options& options);
  exec_core(exec_core&&) noexcept;
  exec_core& operator=(exec_core&&) noexcept;
  ~exec_core();

  /// Launches one replay. Rethrows a pending host-node failure first.
  void launch(cudaStream_t stream);
  void upload(cudaStream_t stream);
  /// Waits for `stream`, releases what was retired before, then rethrows a
  /// host-node failure of this graph.
  void synchronize(cudaStream_t stream);
  void rethrow_host_failure() { host_failures_->rethrow_if_failed(); }

  [[nodiscard]] std::uint64_t replay_count() const noexcept { return replays_; }
  /// The driver's own DOT picture (cudaGraphDebugDotPrint) of the template.
  [[nodiscard]] std::string driver_dot(unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

  [[nodiscard]] cudaGraphExec_t native_exec() const noexcept { return exec_.get(); }
  /// Instantiated with instantiate_options::device_launch.
  [[nodiscard]] bool device_launchable() const noexcept { return device_launch_; }
  /// Uploads a device-launchable exec again after a change (CUDA launches
  /// from the device what was uploaded last); nothing for another exec.
  void upload_after_change();
  [[nodiscard]] cudaGraph_t native_graph() const noexcept { return graph_.get(); }
  [[nodiscard]] explicit operator bool() const noexcept { return exec_ != nullptr; }

  /// Keeps an object alive as long as this executable graph.
  void keep_alive(std::shared_ptr<const void> object) { owned_.push_back(std::move(object)); }
  /// Replaces everything kept alive (after an update or re-instantiation);
  /// returns the old set, which launches still in flight may point into.
  [[nodiscard]] std::vector<std::shared_ptr<const void>> replace_kept(
      std::vector<std::shared_ptr<const void>> objects) noexcept {
    owned_.swap(objects);
    return objects;
  }
  [[nodiscard]] const std::shared_ptr<host_failure_sink>& host_failures() const noexcept {
    return host_failures_;
  }
  /// Where replaced objects wait for the next synchronize().
  [[nodiscard]] const std::shared_ptr<retired_objects>& retired() const noexcept { return retired_; }

  /// Replaces the executable graph (after a re-instantiation). `name_of`
  /// names the node CUDA reports when it refuses to instantiate.
  void reinstantiate(unique_graph graph, const instantiate_options& options,
                     const std::function<std::string(cudaGraphNode_t)>& name_of = {});
  /// Replaces the template after a successful cudaGraphExecUpdate from it.
  void replace_template(unique_graph graph);

  /// A core for another executable graph of this template: the template
  /// shared, what this core keeps alive kept by both, host-node failures
  /// and retired objects its own. No executable graph yet: set the
  /// template's nodes to the new exec's values, then instantiate_template().
  /// From now on the template is shared by both: see template_shared().
  [[nodiscard]] exec_core sharing_template();
  /// Instantiates the (shared) template into this core's executable graph.
  void instantiate_template(const instantiate_options& options,
                            const std::function<std::string(cudaGraphNode_t)>& name_of = {});
  /// The template is (or was) shared with another exec: it may hold that
  /// exec's values, so a whole-graph update must first send every node.
  [[nodiscard]] bool template_shared() const noexcept { return template_shared_; }
  /// The kernels this exec's rebinds have resolved (native::same_device_batch).
  [[nodiscard]] native::kernel_functions& kernel_functions() noexcept { return kernels_; }

 private:
  // Declaration order is destruction order reversed: the exec goes before
  // the graph, both before what they point at.
  std::shared_ptr<host_failure_sink> host_failures_;
  std::shared_ptr<retired_objects> retired_;
  std::vector<std::shared_ptr<const void>> owned_;
  std::shared_ptr<CUgraph_st> graph_;  ///< shared by the execs instantiated from it
  unique_graph_exec exec_;
  std::uint64_t replays_ = 0;
  bool template_shared_ = false;
  bool device_launch_ = false;
  bool upload_waited_ = true;  ///< the caller did not order uploads itself
  cudaStream_t upload_stream_ = nullptr;
  native::kernel_functions kernels_;
  void remember(const instantiate_options& options) noexcept;
};

/// Instantiates `graph` with `options` (no ownership taken). A refusal is
/// thrown naming the node CUDA reports, through `name_of` where given.
[[nodiscard]] unique_graph_exec instantiate_native(
    cudaGraph_t graph, const instantiate_options& options,
    const std::function<std::string(cudaGraphNode_t)>& name_of = {});

}  // namespace cudag
