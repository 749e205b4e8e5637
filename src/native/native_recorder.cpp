// The recorder's side of the native seam: each function writes one line and
// hands out fake handles; none reaches CUDA.
#include "cudag/native_recorder.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <cuda.h>  // CUDA_KERNEL_NODE_PARAMS_v2: the driver's view of a kernel node

#include "recorded_graphs.hpp"

namespace cudag::native {
namespace {
recorder* current = nullptr;

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}
std::string dims(const dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}
}  // namespace

/// The seam's functions: static, so that they fit api_table's pointers.
struct recorder::impl {
  static recorder& r() { return *current; }

  /// Counts a call; on an injected failure records it and returns the code.
  static cudaError_t enter(std::string_view function, const std::string& line) {
    const cudaError_t code = r().begin_call(function);
    if (code != cudaSuccess) r().record(line + " -> " + cudaGetErrorName(code));
    return code;
  }

  static std::string pointer(const void* p) { return r().label(p); }
  static recorded_graphs& graphs() { return *r().graphs_; }
  static std::uintptr_t id(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
  /// The top-level graph that graph `g` is nested in (itself if none).
  static std::uintptr_t root_of(cudaGraph_t g) {
    std::uintptr_t root = id(g);
    for (;;) {
      auto graph = r().handles_.find(root);
      if (graph == r().handles_.end() || graph->second.owner == 0) return root;
      auto owner = r().handles_.find(graph->second.owner);  // a body's or moved child's node
      if (owner == r().handles_.end() || owner->second.kind != handle_kind::node) return root;
      root = owner->second.owner;
    }
  }

  /// A kernel's name as named to the recorder, or "kernel@ADDRESS".
  static std::string kernel_label(const void* function) {
    auto it = r().kernels_.find(function);
    return it != r().kernels_.end() ? it->second.first
                                    : "kernel@" + hex(reinterpret_cast<std::uintptr_t>(function));
  }
  static std::string kernel(const cudaKernelNodeParams& p) {
    std::string s = kernel_label(p.func);
    auto it = r().kernels_.find(p.func);
    s += " grid=" + dims(p.gridDim) + " block=" + dims(p.blockDim) +
         " shared=" + std::to_string(p.sharedMemBytes) + " args=[";
    if (it != r().kernels_.end()) {
      const auto& sizes = it->second.second;
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        if (k) s += ", ";
        if (p.kernelParams == nullptr || p.kernelParams[k] == nullptr) {
          s += "null";
          continue;
        }
        std::uint64_t v = 0;
        std::memcpy(&v, p.kernelParams[k], std::min<std::size_t>(sizes[k], sizeof v));
        if (sizes[k] == sizeof(void*))
          s += pointer(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(v)));
        else
          s += hex(v);
      }
    } else {
      s += "?";
    }
    return s + "]";
  }
  static std::string memcpy(const cudaMemcpy3DParms& p) {
    return "dst=" + pointer(p.dstPtr.ptr) + " src=" + pointer(p.srcPtr.ptr) +
           " extent=" + std::to_string(p.extent.width) + "x" + std::to_string(p.extent.height) +
           "x" + std::to_string(p.extent.depth) + " pitch=" + std::to_string(p.dstPtr.pitch) + "/" +
           std::to_string(p.srcPtr.pitch) + " kind=" + std::to_string(int(p.kind));
  }
  static std::string memset(const cudaMemsetParams& p) {
    return "dst=" + pointer(p.dst) + " value=" + hex(p.value) +
           " element=" + std::to_string(p.elementSize) + " width=" + std::to_string(p.width) +
           " height=" + std::to_string(p.height) + " pitch=" + std::to_string(p.pitch);
  }

  /// A node's parameters as the state model keeps them: an address inside
  /// a graph allocation (hex in the call lines) reads "mem@n3+64", so that
  /// a second lowering of one spec, its allocations elsewhere, reads alike.
  static std::string state_text(std::string text) {
    const auto& allocations = r().graph_allocations_;
    if (allocations.empty()) return text;
    for (std::size_t at = text.find("0x"); at != std::string::npos; at = text.find("0x", at + 2)) {
      std::size_t end = at + 2;
      while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end == at + 2 || (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1])))) continue;
      const auto address = std::strtoull(text.substr(at + 2, end - at - 2).c_str(), nullptr, 16);
      auto it = allocations.upper_bound(reinterpret_cast<const void*>(address));
      if (it == allocations.begin()) continue;
      --it;
      const auto offset = address - reinterpret_cast<std::uintptr_t>(it->first);
      if (offset == 0 || offset >= it->second) continue;
      const std::string named = r().label(it->first) + "+" + std::to_string(offset);
      text.replace(at, end - at, named);
    }
    return text;
  }

  /// Common part of every add: checks the graph and the dependencies (with
  /// their edge data, if given: CUDA takes a programmatic edge only from a
  /// kernel node into a kernel node, `kernel` saying whether the new one is).
  static cudaError_t add(std::string_view function, cudaGraphNode_t* out, cudaGraph_t g,
                         const cudaGraphNode_t* deps, std::size_t count, const std::string& what,
                         const cudaGraphEdgeData* edges = nullptr, bool kernel = false) {
    std::string line(function);
    line += " " + pointer(g) + " deps=[";
    std::vector<cudaGraphEdgeData> edge_data;
    bool typed_edges = false;
    for (std::size_t k = 0; k < count; ++k) {
      line += (k ? "," : "") + pointer(deps[k]);
      if (edges == nullptr) continue;
      const std::string suffix = recorded_graphs::edge_suffix(edges[k]);
      line += suffix;
      typed_edges = typed_edges || !suffix.empty();
    }
    if (typed_edges) edge_data.assign(edges, edges + count);
    line += "] " + what;
    if (const cudaError_t code = enter(function, line)) return code;
    if (out == nullptr || !r().is(g, handle_kind::graph, false) ||
        r().handles_[reinterpret_cast<std::uintptr_t>(g)].state == handle_state::destroyed) {
      r().misuse(line + ": no output or not a live graph");
      return cudaErrorInvalidValue;
    }
    for (std::size_t k = 0; k < count; ++k) {
      auto it = r().handles_.find(reinterpret_cast<std::uintptr_t>(deps[k]));
      if (it == r().handles_.end() || it->second.kind != handle_kind::node ||
          it->second.state != handle_state::live ||
          it->second.owner != reinterpret_cast<std::uintptr_t>(g)) {
        r().misuse(line + ": dependency " + pointer(deps[k]) + " is not a live node of the graph");
        return cudaErrorInvalidValue;
      }
      if (edge_data.empty() || recorded_graphs::edge_suffix(edge_data[k]).empty()) continue;
      const typed_params* upstream = graphs().params_of(id(deps[k]));
      if (!kernel || upstream == nullptr || upstream->type != cudaGraphNodeTypeKernel ||
          edge_data[k].type != cudaGraphDependencyTypeProgrammatic || edge_data[k].to_port != 0) {
        r().misuse(line + ": edge data on dependency " + pointer(deps[k]) +
                   " that CUDA takes only between kernel nodes, of the programmatic type");
        return cudaErrorInvalidValue;
      }
    }
    *out = reinterpret_cast<cudaGraphNode_t>(
        r().make_handle(handle_kind::node, reinterpret_cast<std::uintptr_t>(g)));
    r().node_weights_[reinterpret_cast<std::uintptr_t>(*out)].function = std::string(function);
    graphs().node_added(id(*out), id(g), std::string(function),
                        std::vector<std::uintptr_t>(reinterpret_cast<const std::uintptr_t*>(deps),
                                                    reinterpret_cast<const std::uintptr_t*>(deps) + count),
                        state_text(what), pointer(*out), std::move(edge_data));
    const std::size_t space = line.find(' ');
    line.insert(space, " " + pointer(*out));
    r().record(std::move(line));
    return cudaSuccess;
  }

  static cudaError_t set(std::string_view function, cudaGraphExec_t x, cudaGraphNode_t n,
                         const std::string& what) {
    std::string line(function);
    if (x) line += " " + pointer(x);
    line += " " + pointer(n) + " " + what;
    if (const cudaError_t code = enter(function, line)) return code;
    if ((x && !r().is(x, handle_kind::exec)) || !r().is(n, handle_kind::node)) {
      r().misuse(line + ": not a live exec or node");
      return cudaErrorInvalidValue;
    }
    r().record(std::move(line));
    return cudaSuccess;
  }

  /// An exec setter: CUDA takes it only for a node of the exec's own graph.
  static cudaError_t exec_set(std::string_view function, cudaGraphExec_t x, cudaGraphNode_t n,
                              const std::string& what) {
    const cudaError_t code = set(function, x, n, what);
    if (code != cudaSuccess) return code;
    const std::string why = graphs().exec_node_set(id(x), id(n), state_text(what));
    if (why.empty()) return cudaSuccess;
    r().calls_.back() += " -> cudaErrorInvalidValue";
    // A node the exec setter cannot reach is the caller's mistake; a change
    // CUDA does not make in place is its refusal, to be handled.
    if (why.starts_with("not a node")) r().misuse(r().calls_.back() + ": " + why);
    return cudaErrorInvalidValue;
  }

  static cudaError_t simple(std::string_view function, const std::string& line) {
    if (const cudaError_t code = enter(function, line)) return code;
    r().record(line);
    return cudaSuccess;
  }

  static void destroy_graph_tree(std::uintptr_t g) {
    auto& h = r().handles_;
    h[g].state = handle_state::destroyed;
    for (auto& [id, info] : h) {
      if (info.kind != handle_kind::node || info.owner != g || info.state == handle_state::destroyed)
        continue;
      info.state = handle_state::destroyed;
      for (auto& [inner, inner_info] : h)
        if (inner_info.kind == handle_kind::graph && inner_info.owner == id &&
            inner_info.state == handle_state::owned_by_node)
          destroy_graph_tree(inner);
    }
  }

  // ----------------------------------------------------- memory model --
  /// Nodes per add function and mem_alloc bytes of graph `g`, nested
  /// graphs (bodies, moved children, cloned children) included.
  struct totals {
    std::map<std::string, std::size_t> functions;
    std::size_t alloc_bytes = 0;
  };
  static void add_totals(std::uintptr_t g, totals& t) {
    auto members = r().members_.find(g);
    if (members == r().members_.end()) return;
    for (std::uintptr_t m : members->second) {
      const handle_info& info = r().handles_[m];
      if (info.kind != handle_kind::node || info.state == handle_state::destroyed) continue;
      const node_weight& w = r().node_weights_[m];
      ++t.functions[w.function];
      t.alloc_bytes += w.alloc_bytes + w.clone_alloc_bytes;
      for (const auto& [f, count] : w.clone_functions) t.functions[f] += count;
      if (auto inner = r().members_.find(m); inner != r().members_.end())
        for (std::uintptr_t body : inner->second)
          if (r().handles_[body].kind == handle_kind::graph &&
              r().handles_[body].state == handle_state::owned_by_node)
            add_totals(body, t);
    }
  }
  static void exec_made(cudaGraphExec_t x, cudaGraph_t g) {
    totals t;
    add_totals(reinterpret_cast<std::uintptr_t>(g), t);
    exec_memory_state m;
    m.bytes = r().exec_fixed_;
    for (const auto& [f, count] : t.functions) {
      m.nodes += count;
      auto it = r().node_memory_.find(f);
      m.bytes += count * (it != r().node_memory_.end() ? it->second : r().exec_per_node_);
    }
    m.graph_bytes = t.alloc_bytes;
    r().exec_memory_[reinterpret_cast<std::uintptr_t>(x)] = m;
    r().lowest_free_ = std::min(r().lowest_free_, r().device_memory_free());
  }
  /// An upload or launch maps the exec's graph memory (once until a trim).
  static void map_graph_memory(cudaGraphExec_t x) {
    auto it = r().exec_memory_.find(reinterpret_cast<std::uintptr_t>(x));
    if (it == r().exec_memory_.end() || it->second.mapped) return;
    it->second.mapped = true;
    recorder& rec = r();
    rec.graph_used_ += it->second.graph_bytes;
    rec.graph_reserved_ = std::max(rec.graph_reserved_, rec.graph_used_);
    rec.graph_used_high_ = std::max(rec.graph_used_high_, rec.graph_used_);
    rec.graph_reserved_high_ = std::max(rec.graph_reserved_high_, rec.graph_reserved_);
    rec.lowest_free_ = std::min(rec.lowest_free_, rec.device_memory_free());
  }

  // ------------------------------------------------------------ the table --
  static cudaError_t graph_create(cudaGraph_t* g, unsigned flags) {
    if (const cudaError_t code = enter("graph_create", "graph_create")) return code;
    *g = reinterpret_cast<cudaGraph_t>(r().make_handle(handle_kind::graph));
    r().record("graph_create " + pointer(*g) + " flags=" + std::to_string(flags));
    return cudaSuccess;
  }
  static cudaError_t graph_destroy_node(cudaGraphNode_t n) {
    const std::string line = "graph_destroy_node " + pointer(n);
    if (const cudaError_t code = enter("graph_destroy_node", line)) return code;
    if (!r().is(n, handle_kind::node)) {
      r().misuse(line + ": not a live node");
      return cudaErrorInvalidValue;
    }
    r().handles_[reinterpret_cast<std::uintptr_t>(n)].state = handle_state::destroyed;
    graphs().node_destroyed(id(n));
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t graph_destroy(cudaGraph_t g) {
    const std::string line = "graph_destroy " + pointer(g);
    if (const cudaError_t code = enter("graph_destroy", line)) return code;
    if (!r().is(g, handle_kind::graph)) {
      r().misuse(line + ": not a live graph owned by the caller");
      return cudaErrorInvalidValue;
    }
    destroy_graph_tree(reinterpret_cast<std::uintptr_t>(g));
    r().record(line);
    release_retained(reinterpret_cast<std::uintptr_t>(g));
    return cudaSuccess;
  }
  // ------------------------------------------ typed parameters, clones --
  using typed_params = recorded_graphs::typed_params;
  static typed_params typed(cudaGraphNodeType type) {
    typed_params t;
    t.type = type;
    return t;
  }
  /// A kernel's parameters, its argument bytes copied where its argument
  /// sizes are known (a named kernel).
  static typed_params typed_kernel(const cudaKernelNodeParams& p) {
    typed_params t = typed(cudaGraphNodeTypeKernel);
    t.kernel = p;
    auto it = r().kernels_.find(p.func);
    if (it == r().kernels_.end() || p.kernelParams == nullptr) return t;
    for (std::size_t k = 0; k < it->second.second.size(); ++k) {
      if (p.kernelParams[k] == nullptr) return t;
      const auto* bytes = static_cast<const unsigned char*>(p.kernelParams[k]);
      t.arguments.emplace_back(bytes, bytes + it->second.second[k]);
    }
    t.arguments_known = true;
    return t;
  }
  /// Sets node `*o`'s typed parameters after a successful add.
  static cudaError_t with(cudaError_t code, cudaGraphNode_t* o, typed_params t) {
    if (code == cudaSuccess) graphs().node_params_set(id(*o), std::move(t));
    return code;
  }
  /// A copy of graph `from` (cudaGraphClone, or a child node's own copy):
  /// a caller's graph labelled as usual, or one CUDA makes unseen, owned by
  /// `owner_node` and labelled after it.
  static std::uintptr_t copy_graph(std::uintptr_t from, std::uintptr_t owner_node) {
    const bool unseen = owner_node != 0;
    const std::string prefix = unseen ? r().label(reinterpret_cast<const void*>(owner_node)) + "/" : "";
    const std::uintptr_t copy = r().make_handle(handle_kind::graph, 0, unseen ? prefix + "graph" : "");
    if (unseen) {  // not in members_: the memory model counts a clone through its node
      r().handles_[copy].owner = owner_node;
      r().handles_[copy].state = handle_state::owned_by_node;
    }
    std::map<std::uintptr_t, std::uintptr_t> copies;
    std::size_t index = 0;
    for (std::uintptr_t original : graphs().nodes_of(from)) {
      const std::uintptr_t node =
          r().make_handle(handle_kind::node, copy, unseen ? prefix + std::to_string(index++) : "");
      std::vector<std::uintptr_t> deps;
      std::vector<cudaGraphEdgeData> edge_data;
      bool typed_edges = false;
      for (const recorded_graphs::edge& e : graphs().edges_of(from))
        if (e.to == original) {
          deps.push_back(copies.at(e.from));
          edge_data.push_back(e.data);
          typed_edges = typed_edges || !recorded_graphs::edge_suffix(e.data).empty();
        }
      if (!typed_edges) edge_data.clear();
      graphs().node_copied(original, node, copy, deps, std::move(edge_data),
                           r().label(reinterpret_cast<const void*>(node)));
      copies[original] = node;
      r().clone_nodes_[{copy, original}] = node;
      r().node_weights_[node] = r().node_weights_[original];
      if (auto host = r().host_of_node_.find(original); host != r().host_of_node_.end())
        r().host_of_node_[node] = host->second;
      if (typed_params* t = graphs().params_of(node); t != nullptr && t->child != 0)
        t->child = copy_graph(t->child, node);
    }
    return copy;
  }

  static cudaError_t add_kernel_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                     std::size_t n, const cudaKernelNodeParams* p) {
    return with(add("add_kernel_node", o, g, d, n, kernel(*p)), o, typed_kernel(*p));
  }
  static cudaError_t add_memcpy_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                     std::size_t n, const cudaMemcpy3DParms* p) {
    typed_params t = typed(cudaGraphNodeTypeMemcpy);
    t.memcpy = *p;
    return with(add("add_memcpy_node", o, g, d, n, memcpy(*p)), o, std::move(t));
  }
  static cudaError_t add_memset_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                     std::size_t n, const cudaMemsetParams* p) {
    typed_params t = typed(cudaGraphNodeTypeMemset);
    t.memset = *p;
    return with(add("add_memset_node", o, g, d, n, memset(*p)), o, std::move(t));
  }
  static cudaError_t add_host_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                   std::size_t n, const cudaHostNodeParams* p) {
    const cudaError_t code = add("add_host_node", o, g, d, n, p->fn ? "callable" : "null callable");
    if (code == cudaSuccess) r().host_of_node_[reinterpret_cast<std::uintptr_t>(*o)] = *p;
    typed_params t = typed(cudaGraphNodeTypeHost);
    t.host = *p;
    return with(code, o, std::move(t));
  }
  static cudaError_t add_child_graph_node(cudaGraphNode_t* o, cudaGraph_t g,
                                          const cudaGraphNode_t* d, std::size_t n,
                                          cudaGraph_t child) {
    if (!r().is(child, handle_kind::graph)) r().misuse("add_child_graph_node: child is not a live graph");
    const cudaError_t code = add("add_child_graph_node", o, g, d, n, "clone of " + pointer(child));
    if (code == cudaSuccess) {
      graphs().node_text_set(id(*o), "clone");
      graphs().child_cloned(id(*o), id(child));
      typed_params t = typed(cudaGraphNodeTypeGraph);
      t.child = copy_graph(id(child), id(*o));  // the node's own copy, read back by import
      graphs().node_params_set(id(*o), std::move(t));
    }
    if (code == cudaSuccess) {  // the clone's nodes count as the exec's
      totals t;
      add_totals(reinterpret_cast<std::uintptr_t>(child), t);
      node_weight& w = r().node_weights_[reinterpret_cast<std::uintptr_t>(*o)];
      w.clone_functions = std::move(t.functions);
      w.clone_alloc_bytes = t.alloc_bytes;
    }
    return code;
  }
  static cudaError_t add_empty_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                    std::size_t n) {
    return with(add("add_empty_node", o, g, d, n, ""), o, typed(cudaGraphNodeTypeEmpty));
  }
  static typed_params typed_event(cudaGraphNodeType type, cudaEvent_t e) {
    typed_params t = typed(type);
    t.event = e;
    return t;
  }
  static cudaError_t add_event_record_node(cudaGraphNode_t* o, cudaGraph_t g,
                                           const cudaGraphNode_t* d, std::size_t n, cudaEvent_t e) {
    return with(add("add_event_record_node", o, g, d, n, "event=" + pointer(e)), o,
                typed_event(cudaGraphNodeTypeEventRecord, e));
  }
  static cudaError_t add_event_wait_node(cudaGraphNode_t* o, cudaGraph_t g,
                                         const cudaGraphNode_t* d, std::size_t n, cudaEvent_t e) {
    return with(add("add_event_wait_node", o, g, d, n, "event=" + pointer(e)), o,
                typed_event(cudaGraphNodeTypeWaitEvent, e));
  }
  static cudaError_t add_mem_alloc_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                        std::size_t n, cudaMemAllocNodeParams* p) {
    const cudaError_t code =
        add("add_mem_alloc_node", o, g, d, n,
            "bytes=" + std::to_string(p->bytesize) +
                " device=" + std::to_string(p->poolProps.location.id));
    if (code == cudaSuccess) {
      r().node_weights_[reinterpret_cast<std::uintptr_t>(*o)].alloc_bytes = p->bytesize;
      // A fake device address, named after the node so that users read well.
      p->dptr = reinterpret_cast<void*>(0xd0000000ull + 0x100000ull * r().allocations_++);
      r().pointer_names_[p->dptr] = "mem@" + pointer(*o);
      r().graph_allocations_[p->dptr] = p->bytesize;
      r().calls_.back() += " -> " + pointer(p->dptr);
      typed_params t = typed(cudaGraphNodeTypeMemAlloc);
      t.alloc = *p;
      graphs().node_params_set(id(*o), std::move(t));
    }
    return code;
  }
  static cudaError_t add_mem_free_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                                       std::size_t n, void* p) {
    typed_params t = typed(cudaGraphNodeTypeMemFree);
    t.freed = p;
    return with(add("add_mem_free_node", o, g, d, n, "pointer=" + pointer(p)), o, std::move(t));
  }
  static cudaError_t add_node(cudaGraphNode_t* o, cudaGraph_t g, const cudaGraphNode_t* d,
                              const cudaGraphEdgeData* e, std::size_t n, cudaGraphNodeParams* p) {
    if (p->type == cudaGraphNodeTypeKernel) {
      const auto& k = p->kernel;
      const cudaKernelNodeParams params{k.func, k.gridDim, k.blockDim, k.sharedMemBytes,
                                        k.kernelParams, k.extra};
      return with(add("add_node", o, g, d, n, kernel(params), e, true), o, typed_kernel(params));
    }
    if (p->type == cudaGraphNodeTypeGraph) {
      const bool moved = p->graph.ownership == cudaGraphChildGraphOwnershipMove;
      if (!r().is(p->graph.graph, handle_kind::graph))
        r().misuse("add_node: child is not a live graph");
      const cudaError_t code = add("add_node", o, g, d, n,
                                   std::string(moved ? "child moved " : "child clone of ") +
                                       pointer(p->graph.graph), e);
      if (code == cudaSuccess) {
        graphs().node_text_set(id(*o), moved ? "moved" : "clone");
        if (moved)
          graphs().graph_owned(id(*o), id(p->graph.graph));
        else
          graphs().child_cloned(id(*o), id(p->graph.graph));
        typed_params t = typed(cudaGraphNodeTypeGraph);
        t.child = moved ? id(p->graph.graph) : copy_graph(id(p->graph.graph), id(*o));
        graphs().node_params_set(id(*o), std::move(t));
      }
      if (code == cudaSuccess && moved) {
        auto& info = r().handles_[reinterpret_cast<std::uintptr_t>(p->graph.graph)];
        info.state = handle_state::owned_by_node;
        info.owner = reinterpret_cast<std::uintptr_t>(*o);
        r().members_[info.owner].push_back(reinterpret_cast<std::uintptr_t>(p->graph.graph));
      }
      return code;
    }
    if (p->type != cudaGraphNodeTypeConditional) return add("add_node", o, g, d, n, "type=?", e);
    static const char* const types[] = {"if", "while", "switch"};
    const auto& c = p->conditional;
    std::string what = std::string("conditional ") + types[int(c.type) % 3] +
                       " condition=" + std::to_string(c.handle) + " bodies=" + std::to_string(c.size);
    const cudaError_t code = add("add_node", o, g, d, n, what, e);
    if (code != cudaSuccess) return code;
    graphs().node_params_set(id(*o), typed(cudaGraphNodeTypeConditional));
    // The state holds what the handle was made with: a default is fixed then.
    if (auto it = r().condition_defaults_.find({root_of(g), c.handle}); it != r().condition_defaults_.end())
      graphs().node_text_set(id(*o), what + " " + it->second);
    std::string bodies = " ->";
    std::vector<cudaGraph_t>& bodies_out = r().body_graphs_;
    bodies_out.assign(c.size, nullptr);  // CUDA hands out an array it owns; so does the recorder
    for (unsigned k = 0; k < c.size; ++k) {
      bodies_out[k] = reinterpret_cast<cudaGraph_t>(
          r().make_handle(handle_kind::graph, reinterpret_cast<std::uintptr_t>(*o)));
      r().handles_[reinterpret_cast<std::uintptr_t>(bodies_out[k])].state =
          handle_state::owned_by_node;
      bodies += " " + pointer(bodies_out[k]);
      graphs().graph_owned(id(*o), id(bodies_out[k]));
    }
    p->conditional.phGraph_out = bodies_out.data();
    r().calls_.back() += bodies;
    return cudaSuccess;
  }
  static cudaError_t conditional_handle_create(cudaGraphConditionalHandle* h, cudaGraph_t g,
                                               unsigned def, unsigned flags) {
    const std::string line = "conditional_handle_create " + pointer(g) +
                             " default=" + std::to_string(def) + " flags=" + std::to_string(flags);
    if (const cudaError_t code = enter("conditional_handle_create", line)) return code;
    if (!r().is(g, handle_kind::graph)) r().misuse(line + ": not a live graph");
    // Numbered within the top-level graph, as two lowerings of one spec
    // number them alike.
    const std::uintptr_t root = root_of(g);
    ++r().condition_handles_;
    *h = static_cast<cudaGraphConditionalHandle>(++r().root_conditions_[root]);
    r().condition_defaults_[{root, *h}] = "default=" + std::to_string(def) + " flags=" + std::to_string(flags);
    r().record(line + " -> " + std::to_string(*h));
    return cudaSuccess;
  }
  /// A launch attribute's name and value as the recorder writes them
  /// ("cluster", "2,1,1"), or "attributeN" and "set" for one cudag never sends.
  static std::pair<std::string, std::string> attribute_text(cudaLaunchAttributeID attribute,
                                                            const cudaLaunchAttributeValue& v) {
    switch (attribute) {
      case cudaLaunchAttributePriority:
        return {"priority", std::to_string(v.priority)};
      case cudaLaunchAttributeClusterDimension:
        return {"cluster", std::to_string(v.clusterDim.x) + "," + std::to_string(v.clusterDim.y) +
                               "," + std::to_string(v.clusterDim.z)};
      case cudaLaunchAttributeCooperative:
        return {"cooperative", std::to_string(v.cooperative)};
      case cudaLaunchAttributeMemSyncDomain:
        return {"mem_sync_domain", std::to_string(int(v.memSyncDomain))};
      case cudaLaunchAttributePreferredSharedMemoryCarveout:
        return {"shared_carveout", std::to_string(v.sharedMemCarveout)};
      case cudaLaunchAttributeAccessPolicyWindow: {
        // base,bytes,hit ratio,hit property,miss property
        const cudaAccessPolicyWindow& w = v.accessPolicyWindow;
        char ratio[16];
        std::snprintf(ratio, sizeof ratio, "%g", double(w.hitRatio));
        return {"access_policy",
                std::to_string(reinterpret_cast<std::uintptr_t>(w.base_ptr)) + "," +
                    std::to_string(w.num_bytes) + "," + ratio + "," + std::to_string(int(w.hitProp)) +
                    "," + std::to_string(int(w.missProp))};
      }
      default:
        return {"attribute" + std::to_string(int(attribute)), "set"};
    }
  }
  static cudaError_t kernel_node_set_attribute(cudaGraphNode_t n, cudaLaunchAttributeID attribute,
                                               const cudaLaunchAttributeValue* v) {
    const auto [name, text] = attribute_text(attribute, *v);
    const bool known = text != "set";
    const cudaError_t code =
        set("kernel_node_set_attribute", nullptr, n,
            "attribute=" + std::to_string(int(attribute)) + (known ? " " + name + "=" + text : std::string()));
    if (code == cudaSuccess) graphs().node_attribute_set(id(n), name, text);
    return code;
  }
  /// A template setter: the node's parameters are now `what`.
  static cudaError_t template_set(std::string_view function, cudaGraphNode_t n, const std::string& what) {
    const cudaError_t code = set(function, nullptr, n, what);
    if (code == cudaSuccess) graphs().node_text_set(id(n), state_text(what));
    return code;
  }
  /// Sets node `n`'s typed parameters after a successful template setter.
  static cudaError_t with(cudaError_t code, cudaGraphNode_t n, typed_params t) {
    if (code == cudaSuccess) graphs().node_params_set(id(n), std::move(t));
    return code;
  }
  static cudaError_t kernel_node_set_params(cudaGraphNode_t n, const cudaKernelNodeParams* p) {
    return with(template_set("kernel_node_set_params", n, kernel(*p)), n, typed_kernel(*p));
  }
  static cudaError_t memcpy_node_set_params(cudaGraphNode_t n, const cudaMemcpy3DParms* p) {
    typed_params t = typed(cudaGraphNodeTypeMemcpy);
    t.memcpy = *p;
    return with(template_set("memcpy_node_set_params", n, memcpy(*p)), n, std::move(t));
  }
  static cudaError_t memset_node_set_params(cudaGraphNode_t n, const cudaMemsetParams* p) {
    typed_params t = typed(cudaGraphNodeTypeMemset);
    t.memset = *p;
    return with(template_set("memset_node_set_params", n, memset(*p)), n, std::move(t));
  }
  static cudaError_t host_node_set_params(cudaGraphNode_t n, const cudaHostNodeParams* p) {
    const cudaError_t code = template_set("host_node_set_params", n, "callable");
    if (code == cudaSuccess) r().host_of_node_[reinterpret_cast<std::uintptr_t>(n)] = *p;
    typed_params t = typed(cudaGraphNodeTypeHost);
    t.host = *p;
    return with(code, n, std::move(t));
  }
  static cudaError_t event_record_node_set_event(cudaGraphNode_t n, cudaEvent_t e) {
    return with(template_set("event_record_node_set_event", n, "event=" + pointer(e)), n,
                typed_event(cudaGraphNodeTypeEventRecord, e));
  }
  static cudaError_t event_wait_node_set_event(cudaGraphNode_t n, cudaEvent_t e) {
    return with(template_set("event_wait_node_set_event", n, "event=" + pointer(e)), n,
                typed_event(cudaGraphNodeTypeWaitEvent, e));
  }
  static cudaError_t exec_kernel_node_set_params(cudaGraphExec_t x, cudaGraphNode_t n,
                                                 const cudaKernelNodeParams* p) {
    return exec_set("exec_kernel_node_set_params", x, n, kernel(*p));
  }
  static cudaError_t exec_memcpy_node_set_params(cudaGraphExec_t x, cudaGraphNode_t n,
                                                 const cudaMemcpy3DParms* p) {
    return exec_set("exec_memcpy_node_set_params", x, n, memcpy(*p));
  }
  static cudaError_t exec_memset_node_set_params(cudaGraphExec_t x, cudaGraphNode_t n,
                                                 const cudaMemsetParams* p) {
    return exec_set("exec_memset_node_set_params", x, n, memset(*p));
  }
  static cudaError_t exec_host_node_set_params(cudaGraphExec_t x, cudaGraphNode_t n,
                                               const cudaHostNodeParams* p) {
    const cudaError_t code = exec_set("exec_host_node_set_params", x, n, "callable");
    if (code == cudaSuccess)
      r().host_of_exec_[{reinterpret_cast<std::uintptr_t>(x), reinterpret_cast<std::uintptr_t>(n)}] = *p;
    return code;
  }
  /// The exec takes the template's host callables (its top-level graph's).
  static void copy_host_callables(cudaGraphExec_t x, cudaGraph_t g) {
    const auto exec = reinterpret_cast<std::uintptr_t>(x);
    for (const auto& [node, params] : r().host_of_node_) {
      auto it = r().handles_.find(node);
      if (it != r().handles_.end() && it->second.owner == reinterpret_cast<std::uintptr_t>(g) &&
          it->second.state == handle_state::live)
        r().host_of_exec_[{exec, node}] = params;
    }
  }
  static cudaError_t exec_event_record_node_set_event(cudaGraphExec_t x, cudaGraphNode_t n,
                                                      cudaEvent_t e) {
    return exec_set("exec_event_record_node_set_event", x, n, "event=" + pointer(e));
  }
  static cudaError_t exec_event_wait_node_set_event(cudaGraphExec_t x, cudaGraphNode_t n,
                                                    cudaEvent_t e) {
    return exec_set("exec_event_wait_node_set_event", x, n, "event=" + pointer(e));
  }
  static cudaError_t exec_child_graph_node_set_params(cudaGraphExec_t x, cudaGraphNode_t n,
                                                      cudaGraph_t child) {
    if (!r().is(child, handle_kind::graph, false))
      r().misuse("exec_child_graph_node_set_params: child is not a graph");
    const cudaError_t code = set("exec_child_graph_node_set_params", x, n, "child=" + pointer(child));
    if (code != cudaSuccess) return code;
    const std::string why = graphs().exec_child_set(id(x), id(n), id(child));
    if (why.empty()) return cudaSuccess;
    r().calls_.back() += " -> cudaErrorInvalidValue";
    r().misuse(r().calls_.back() + ": " + why);
    return cudaErrorInvalidValue;
  }
  static cudaError_t node_set_enabled(cudaGraphExec_t x, cudaGraphNode_t n, unsigned on) {
    const cudaError_t code = set("node_set_enabled", x, n, on ? "on" : "off");
    if (code == cudaSuccess)
      r().enabled_[{reinterpret_cast<std::uintptr_t>(x), reinterpret_cast<std::uintptr_t>(n)}] = on;
    return code;
  }
  static cudaError_t node_get_enabled(cudaGraphExec_t x, cudaGraphNode_t n, unsigned* on) {
    const cudaError_t code = set("node_get_enabled", x, n, "");
    if (code == cudaSuccess) *on = r().node_enabled(x, n) ? 1 : 0;
    return code;
  }
  // ------------------------------------------------- reading graphs back --
  static const char* type_name(cudaGraphNodeType type) {
    switch (type) {
      case cudaGraphNodeTypeKernel: return "kernel";
      case cudaGraphNodeTypeMemcpy: return "memcpy";
      case cudaGraphNodeTypeMemset: return "memset";
      case cudaGraphNodeTypeHost: return "host";
      case cudaGraphNodeTypeGraph: return "graph";
      case cudaGraphNodeTypeEmpty: return "empty";
      case cudaGraphNodeTypeWaitEvent: return "wait_event";
      case cudaGraphNodeTypeEventRecord: return "event_record";
      case cudaGraphNodeTypeMemAlloc: return "mem_alloc";
      case cudaGraphNodeTypeMemFree: return "mem_free";
      case cudaGraphNodeTypeConditional: return "conditional";
      default: return "other";
    }
  }
  /// A graph CUDA would answer for: the caller's, or one a node owns.
  static bool readable_graph(cudaGraph_t g) {
    auto it = r().handles_.find(id(g));
    return it != r().handles_.end() && it->second.kind == handle_kind::graph &&
           it->second.state != handle_state::destroyed;
  }
  /// Fills `out` (room for `*count`) from `all`, as cudaGraphGetNodes does:
  /// null `out` asks for the count; spare room is nulled.
  template <class T>
  static void fill(const std::vector<T>& all, T* out, std::size_t* count) {
    if (out != nullptr) {
      for (std::size_t k = 0; k < *count; ++k) out[k] = k < all.size() ? all[k] : T{};
      *count = std::min(*count, all.size());
    } else {
      *count = all.size();
    }
  }
  static cudaError_t graph_get_nodes(cudaGraph_t g, cudaGraphNode_t* nodes, std::size_t* count) {
    std::string line = "graph_get_nodes " + pointer(g);
    if (const cudaError_t code = enter("graph_get_nodes", line)) return code;
    if (count == nullptr || !readable_graph(g)) {
      r().misuse(line + ": no count or not a live graph");
      return cudaErrorInvalidValue;
    }
    std::vector<cudaGraphNode_t> all;
    for (std::uintptr_t h : graphs().nodes_of(id(g)))
      // Captured stream work is in the state model only, not a node to read back.
      if (r().handles_.count(h)) all.push_back(reinterpret_cast<cudaGraphNode_t>(h));
    fill(all, nodes, count);
    if (nodes == nullptr) {
      line += " -> count=" + std::to_string(*count);
    } else {
      line += " -> [";
      for (std::size_t k = 0; k < *count; ++k) line += (k ? "," : "") + pointer(nodes[k]);
      line += "]";
    }
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t graph_get_edges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                     cudaGraphEdgeData* edge_data, std::size_t* count) {
    std::string line = "graph_get_edges " + pointer(g);
    if (const cudaError_t code = enter("graph_get_edges", line)) return code;
    if (count == nullptr || !readable_graph(g) || (from == nullptr) != (to == nullptr)) {
      r().misuse(line + ": no count, not a live graph, or only one of from and to");
      return cudaErrorInvalidValue;
    }
    std::vector<cudaGraphNode_t> all_from, all_to;
    std::vector<cudaGraphEdgeData> all_data;
    for (const recorded_graphs::edge& e : graphs().edges_of(id(g))) {
      if (!r().handles_.count(e.from) || !r().handles_.count(e.to)) continue;  // as graph_get_nodes
      all_from.push_back(reinterpret_cast<cudaGraphNode_t>(e.from));
      all_to.push_back(reinterpret_cast<cudaGraphNode_t>(e.to));
      all_data.push_back(e.data);
    }
    if (edge_data != nullptr && from == nullptr) {
      r().misuse(line + ": edge data asked for without from and to");
      return cudaErrorInvalidValue;
    }
    // As CUDA: listing edges without their data is refused once one of them
    // is not full, rather than losing what it is.
    if (from != nullptr && edge_data == nullptr)
      for (std::size_t k = 0; k < *count && k < all_data.size(); ++k)
        if (!recorded_graphs::edge_suffix(all_data[k]).empty()) {
          r().record(line + " -> cudaErrorLossyQuery");
          return cudaErrorLossyQuery;
        }
    const std::size_t room = *count;
    fill(all_to, to, count);
    std::size_t same = room;
    fill(all_from, from, &same);
    if (edge_data != nullptr)
      for (std::size_t k = 0; k < *count && k < all_data.size(); ++k) edge_data[k] = all_data[k];
    if (from == nullptr) {
      line += " -> count=" + std::to_string(*count);
    } else {
      line += " -> [";
      for (std::size_t k = 0; k < *count; ++k)
        line += (k ? "," : "") + pointer(from[k]) + "->" + pointer(to[k]);
      line += "]";
    }
    r().record(line);
    return cudaSuccess;
  }
  /// Common part of every node getter: the node's typed parameters, or
  /// null (and the code to return) when the node is not a live node of
  /// kind `type` (cudaGraphNodeTypeCount: any kind).
  static typed_params* get(std::string_view function, cudaGraphNode_t n, cudaGraphNodeType type,
                           const void* out, std::string& line, cudaError_t& code) {
    line = std::string(function) + " " + pointer(n);
    if ((code = enter(function, line)) != cudaSuccess) return nullptr;
    typed_params* t = r().is(n, handle_kind::node) ? graphs().params_of(id(n)) : nullptr;
    if (out == nullptr || t == nullptr || (type != cudaGraphNodeTypeCount && t->type != type)) {
      r().misuse(line + ": " + (out == nullptr ? "a null output" :
                                t == nullptr     ? "not a live node" :
                                                   std::string("a ") + type_name(t->type) + " node"));
      code = cudaErrorInvalidValue;
      return nullptr;
    }
    return t;
  }
  static cudaError_t node_get_type(cudaGraphNode_t n, cudaGraphNodeType* type) {
    std::string line;
    cudaError_t code = cudaSuccess;
    const typed_params* t = get("node_get_type", n, cudaGraphNodeTypeCount, type, line, code);
    if (t == nullptr) return code;
    *type = t->type;
    r().record(line + " -> " + type_name(t->type));
    return cudaSuccess;
  }
  /// One getter of the model: node `n`'s parameters of kind `type` written
  /// to `out` (read(t) gives them), and recorded as describe(*out) says.
  template <class Out, class Read, class Describe>
  static cudaError_t read_back(std::string_view function, cudaGraphNode_t n, cudaGraphNodeType type,
                               Out* out, Read&& read, Describe&& describe) {
    std::string line;
    cudaError_t code = cudaSuccess;
    const typed_params* t = get(function, n, type, out, line, code);
    if (t == nullptr) return code;
    *out = read(*t);
    r().record(line + " -> " + describe(*out));
    return cudaSuccess;
  }
  static cudaError_t kernel_node_get_params(cudaGraphNode_t n, cudaKernelNodeParams* p) {
    return read_back("kernel_node_get_params", n, cudaGraphNodeTypeKernel, p,
                     [](const typed_params& t) { return t.kernel; },
                     [](const cudaKernelNodeParams& k) { return kernel(k); });
  }
  /// A launch attribute as kernel_node_set_attribute left it; CUDA's
  /// default (zero) for one never set.
  static cudaError_t kernel_node_get_attribute(cudaGraphNode_t n, cudaLaunchAttributeID attribute,
                                               cudaLaunchAttributeValue* v) {
    std::string line;
    cudaError_t code = cudaSuccess;
    const typed_params* t = get("kernel_node_get_attribute", n, cudaGraphNodeTypeKernel, v, line, code);
    if (t == nullptr) return code;
    *v = cudaLaunchAttributeValue{};
    const auto [name, unset] = attribute_text(attribute, *v);
    const std::string text = graphs().attribute_of(id(n), name);
    const unsigned long number = text.empty() || text == "set" ? 0 : std::stoul(text);
    switch (attribute) {
      case cudaLaunchAttributePriority: v->priority = static_cast<int>(std::stol(text.empty() ? "0" : text)); break;
      case cudaLaunchAttributeClusterDimension:
        if (!text.empty()) {
          const std::size_t a = text.find(','), b = text.find(',', a + 1);
          v->clusterDim.x = static_cast<unsigned>(std::stoul(text.substr(0, a)));
          v->clusterDim.y = static_cast<unsigned>(std::stoul(text.substr(a + 1, b - a - 1)));
          v->clusterDim.z = static_cast<unsigned>(std::stoul(text.substr(b + 1)));
        }
        break;
      case cudaLaunchAttributeCooperative: v->cooperative = static_cast<int>(number); break;
      case cudaLaunchAttributeMemSyncDomain: v->memSyncDomain = static_cast<cudaLaunchMemSyncDomain>(number); break;
      case cudaLaunchAttributePreferredSharedMemoryCarveout: v->sharedMemCarveout = static_cast<unsigned>(number); break;
      case cudaLaunchAttributeAccessPolicyWindow:
        if (!text.empty()) {
          std::vector<std::string> part;
          for (std::size_t at = 0;;) {
            const std::size_t comma = text.find(',', at);
            part.push_back(text.substr(at, comma - at));
            if (comma == std::string::npos) break;
            at = comma + 1;
          }
          cudaAccessPolicyWindow& w = v->accessPolicyWindow;
          w.base_ptr = reinterpret_cast<void*>(std::uintptr_t{std::stoull(part.at(0))});
          w.num_bytes = std::stoull(part.at(1));
          w.hitRatio = std::stof(part.at(2));
          w.hitProp = static_cast<cudaAccessProperty>(std::stoi(part.at(3)));
          w.missProp = static_cast<cudaAccessProperty>(std::stoi(part.at(4)));
        }
        break;
      default: break;
    }
    r().record(line + " attribute=" + std::to_string(int(attribute)) + " -> " + attribute_text(attribute, *v).second);
    return cudaSuccess;
  }
  static cudaError_t memcpy_node_get_params(cudaGraphNode_t n, cudaMemcpy3DParms* p) {
    return read_back("memcpy_node_get_params", n, cudaGraphNodeTypeMemcpy, p,
                     [](const typed_params& t) { return t.memcpy; },
                     [](const cudaMemcpy3DParms& c) { return memcpy(c); });
  }
  static cudaError_t memset_node_get_params(cudaGraphNode_t n, cudaMemsetParams* p) {
    return read_back("memset_node_get_params", n, cudaGraphNodeTypeMemset, p,
                     [](const typed_params& t) { return t.memset; },
                     [](const cudaMemsetParams& m) { return memset(m); });
  }
  static cudaError_t host_node_get_params(cudaGraphNode_t n, cudaHostNodeParams* p) {
    return read_back("host_node_get_params", n, cudaGraphNodeTypeHost, p,
                     [](const typed_params& t) { return t.host; },
                     [](const cudaHostNodeParams& h) { return std::string(h.fn ? "callable" : "null callable"); });
  }
  static cudaError_t child_graph_node_get_graph(cudaGraphNode_t n, cudaGraph_t* g) {
    return read_back("child_graph_node_get_graph", n, cudaGraphNodeTypeGraph, g,
                     [](const typed_params& t) { return reinterpret_cast<cudaGraph_t>(t.child); },
                     [](cudaGraph_t child) { return pointer(child); });
  }
  static cudaError_t event_node_get(std::string_view function, cudaGraphNodeType type,
                                    cudaGraphNode_t n, cudaEvent_t* e) {
    return read_back(function, n, type, e, [](const typed_params& t) { return t.event; },
                     [](cudaEvent_t event) { return pointer(event); });
  }
  static cudaError_t event_record_node_get_event(cudaGraphNode_t n, cudaEvent_t* e) {
    return event_node_get("event_record_node_get_event", cudaGraphNodeTypeEventRecord, n, e);
  }
  static cudaError_t event_wait_node_get_event(cudaGraphNode_t n, cudaEvent_t* e) {
    return event_node_get("event_wait_node_get_event", cudaGraphNodeTypeWaitEvent, n, e);
  }
  static cudaError_t mem_alloc_node_get_params(cudaGraphNode_t n, cudaMemAllocNodeParams* p) {
    return read_back("mem_alloc_node_get_params", n, cudaGraphNodeTypeMemAlloc, p,
                     [](const typed_params& t) { return t.alloc; },
                     [](const cudaMemAllocNodeParams& a) {
                       return "bytes=" + std::to_string(a.bytesize) + " " + pointer(a.dptr);
                     });
  }
  static cudaError_t mem_free_node_get_params(cudaGraphNode_t n, void* pointer_out) {
    std::string line;
    cudaError_t code = cudaSuccess;
    const typed_params* t = get("mem_free_node_get_params", n, cudaGraphNodeTypeMemFree, pointer_out, line, code);
    if (t == nullptr) return code;
    std::memcpy(pointer_out, &t->freed, sizeof t->freed);
    r().record(line + " -> " + pointer(t->freed));
    return cudaSuccess;
  }
  static cudaError_t graph_clone(cudaGraph_t* out, cudaGraph_t g) {
    const std::string line = "graph_clone " + pointer(g);
    if (const cudaError_t code = enter("graph_clone", line)) return code;
    if (out == nullptr || !readable_graph(g)) {
      r().misuse(line + ": a null output or not a live graph");
      return cudaErrorInvalidValue;
    }
    if (const std::string why = graphs().unclonable(id(g)); !why.empty()) {
      r().record(line + " -> cudaErrorNotSupported (" + why + ")");
      return cudaErrorNotSupported;
    }
    *out = reinterpret_cast<cudaGraph_t>(copy_graph(id(g), 0));
    r().record(line + " -> " + pointer(*out));
    return cudaSuccess;
  }
  static cudaError_t node_find_in_clone(cudaGraphNode_t* out, cudaGraphNode_t original, cudaGraph_t clone) {
    const std::string line = "node_find_in_clone " + pointer(original) + " in " + pointer(clone);
    if (const cudaError_t code = enter("node_find_in_clone", line)) return code;
    auto it = r().clone_nodes_.find({id(clone), id(original)});
    if (out == nullptr || it == r().clone_nodes_.end()) {
      r().misuse(line + ": a null output, or not a node of the clone's original");
      return cudaErrorInvalidValue;
    }
    *out = reinterpret_cast<cudaGraphNode_t>(it->second);
    r().record(line + " -> " + pointer(*out));
    return cudaSuccess;
  }
  // The driver's view: a named kernel's function is its host stub (the
  // recorder hands out no driver functions or library kernels).
  static cudaError_t kernel_node_get_driver_params(cudaGraphNode_t n, CUDA_KERNEL_NODE_PARAMS_v2_st* p) {
    std::string line;
    cudaError_t code = cudaSuccess;
    const typed_params* t = get("kernel_node_get_driver_params", n, cudaGraphNodeTypeKernel, p, line, code);
    if (t == nullptr) return code;
    if (!t->arguments_known) {
      r().record(line + " -> cudaErrorNotSupported (a kernel not named: its argument sizes are unknown)");
      return cudaErrorNotSupported;
    }
    *p = CUDA_KERNEL_NODE_PARAMS_v2{};
    p->func = static_cast<CUfunction>(t->kernel.func);
    p->gridDimX = t->kernel.gridDim.x;
    p->gridDimY = t->kernel.gridDim.y;
    p->gridDimZ = t->kernel.gridDim.z;
    p->blockDimX = t->kernel.blockDim.x;
    p->blockDimY = t->kernel.blockDim.y;
    p->blockDimZ = t->kernel.blockDim.z;
    p->sharedMemBytes = t->kernel.sharedMemBytes;
    p->kernelParams = t->kernel.kernelParams;
    r().record(line + " -> " + kernel(t->kernel));
    return cudaSuccess;
  }
  static cudaError_t function_get_param_info(cudaFunction_t f, std::size_t index, std::size_t* offset,
                                             std::size_t* size) {
    const std::string line = "function_get_param_info " + pointer(f) + " index=" + std::to_string(index);
    if (const cudaError_t code = enter("function_get_param_info", line)) return code;
    auto it = r().kernels_.find(f);
    if (it == r().kernels_.end() || offset == nullptr || size == nullptr) {
      r().misuse(line + ": not a named kernel, or a null output");
      return cudaErrorInvalidValue;
    }
    const std::vector<std::size_t>& sizes = it->second.second;
    if (index >= sizes.size()) {  // how the driver says there are no more
      r().record(line + " -> cudaErrorInvalidValue (" + std::to_string(sizes.size()) + " arguments)");
      return cudaErrorInvalidValue;
    }
    *offset = 0;
    for (std::size_t k = 0; k < index; ++k) *offset += sizes[k];
    *size = sizes[index];
    r().record(line + " -> size=" + std::to_string(*size));
    return cudaSuccess;
  }
  static cudaError_t kernel_get_param_info(cudaKernel_t k, std::size_t index, std::size_t*, std::size_t*) {
    const std::string line = "kernel_get_param_info " + pointer(k) + " index=" + std::to_string(index);
    if (const cudaError_t code = enter("kernel_get_param_info", line)) return code;
    r().misuse(line + ": the recorder hands out no library kernels");
    return cudaErrorInvalidValue;
  }
  static cudaError_t function_get_name(const char** name, cudaFunction_t f) {
    const std::string line = "function_get_name " + pointer(f);
    if (const cudaError_t code = enter("function_get_name", line)) return code;
    auto it = r().kernels_.find(f);
    if (it == r().kernels_.end() || name == nullptr) {
      r().misuse(line + ": not a named kernel, or a null output");
      return cudaErrorInvalidValue;
    }
    *name = it->second.first.c_str();
    r().record(line + " -> " + it->second.first);
    return cudaSuccess;
  }
  static cudaError_t kernel_get_name(const char**, cudaKernel_t k) {
    const std::string line = "kernel_get_name " + pointer(k);
    if (const cudaError_t code = enter("kernel_get_name", line)) return code;
    r().misuse(line + ": the recorder hands out no library kernels");
    return cudaErrorInvalidValue;
  }

  static cudaError_t instantiate(cudaGraphExec_t* x, cudaGraph_t g, cudaGraphInstantiateParams* p) {
    const std::string line = "instantiate " + pointer(g) + " flags=" + std::to_string(p->flags);
    if (const cudaError_t code = enter("instantiate", line)) {
      p->result_out = cudaGraphInstantiateError;
      return code;
    }
    if (!r().is(g, handle_kind::graph)) {
      r().misuse(line + ": not a live graph");
      return cudaErrorInvalidValue;
    }
    if (const std::string why = graphs().second_instantiation(id(g)); !why.empty()) {
      r().record(line + " -> cudaErrorNotSupported (" + why + ")");
      p->result_out = cudaGraphInstantiateError;
      return cudaErrorNotSupported;
    }
    *x = reinterpret_cast<cudaGraphExec_t>(r().make_handle(handle_kind::exec));
    exec_made(*x, g);
    // The exec holds its own references to the graph's user objects.
    if (auto held = r().retained_.find(reinterpret_cast<std::uintptr_t>(g)); held != r().retained_.end()) {
      for (const auto& [object, count] : held->second) r().user_objects_[object].refs += count;
      r().retained_[reinterpret_cast<std::uintptr_t>(*x)] = held->second;
    }
    graphs().instantiated(id(*x), id(g));
    copy_host_callables(*x, g);
    p->result_out = cudaGraphInstantiateSuccess;
    p->errNode_out = nullptr;
    r().record(line + " -> " + pointer(*x));
    return cudaSuccess;
  }
  static cudaError_t exec_update(cudaGraphExec_t x, cudaGraph_t g,
                                 cudaGraphExecUpdateResultInfo* info) {
    const std::string line = "exec_update " + pointer(x) + " from " + pointer(g);
    if (r().refuse_node_ != nullptr) {
      (void)r().begin_call("exec_update");
      info->result = r().refuse_result_;
      info->errorNode = r().refuse_node_;
      info->errorFromNode = nullptr;
      r().refuse_node_ = nullptr;
      r().record(line + " -> refused at " + pointer(info->errorNode));
      return cudaErrorGraphExecUpdateFailure;
    }
    if (const cudaError_t code = enter("exec_update", line)) return code;
    if (!r().is(x, handle_kind::exec) || !r().is(g, handle_kind::graph))
      r().misuse(line + ": not a live exec or graph");
    std::uintptr_t at = 0;
    if (const std::string why = graphs().exec_updated(id(x), id(g), at); !why.empty()) {
      info->result = why.starts_with("topology") ? cudaGraphExecUpdateErrorTopologyChanged
                                                 : cudaGraphExecUpdateErrorNotSupported;
      info->errorNode = reinterpret_cast<cudaGraphNode_t>(at);
      info->errorFromNode = nullptr;
      r().record(line + " -> refused: " + why);
      return cudaErrorGraphExecUpdateFailure;
    }
    info->result = cudaGraphExecUpdateSuccess;
    copy_host_callables(x, g);
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t exec_destroy(cudaGraphExec_t x) {
    const std::string line = "exec_destroy " + pointer(x);
    if (const cudaError_t code = enter("exec_destroy", line)) return code;
    if (!r().is(x, handle_kind::exec)) {
      r().misuse(line + ": not a live exec");
      return cudaErrorInvalidValue;
    }
    r().handles_[reinterpret_cast<std::uintptr_t>(x)].state = handle_state::destroyed;
    graphs().exec_destroyed(id(x));
    release_retained(reinterpret_cast<std::uintptr_t>(x));
    if (auto it = r().exec_memory_.find(reinterpret_cast<std::uintptr_t>(x));
        it != r().exec_memory_.end()) {
      if (it->second.mapped) r().graph_used_ -= it->second.graph_bytes;  // stays reserved
      r().exec_memory_.erase(it);
    }
    r().record(line);
    return cudaSuccess;
  }
  /// Runs the exec's host callables (top-level graph), in creation order,
  /// as the launch's work: a test sees what a host node would see.
  static cudaError_t launch(cudaGraphExec_t x, cudaStream_t s) {
    if (!r().is(x, handle_kind::exec)) r().misuse("launch: not a live exec");
    const cudaError_t code = simple("launch", "launch " + pointer(x) + " stream=" + pointer(s));
    if (code != cudaSuccess) return code;
    map_graph_memory(x);
    const auto exec = reinterpret_cast<std::uintptr_t>(x);
    std::vector<cudaHostNodeParams> due;
    for (auto it = r().host_of_exec_.lower_bound({exec, 0});
         it != r().host_of_exec_.end() && it->first.first == exec; ++it)
      if (r().node_enabled(x, reinterpret_cast<cudaGraphNode_t>(it->first.second)))
        due.push_back(it->second);
    for (const cudaHostNodeParams& p : due)
      if (p.fn) p.fn(p.userData);
    return cudaSuccess;
  }
  static cudaError_t upload(cudaGraphExec_t x, cudaStream_t s) {
    if (!r().is(x, handle_kind::exec)) r().misuse("upload: not a live exec");
    const cudaError_t code = simple("upload", "upload " + pointer(x) + " stream=" + pointer(s));
    if (code == cudaSuccess) map_graph_memory(x);
    return code;
  }
  static cudaError_t stream_create(cudaStream_t* s, unsigned flags) {
    if (const cudaError_t code = enter("stream_create", "stream_create")) return code;
    *s = reinterpret_cast<cudaStream_t>(r().make_handle(handle_kind::stream));
    r().record("stream_create " + pointer(*s) + " flags=" + std::to_string(flags));
    return cudaSuccess;
  }
  static cudaError_t stream_destroy(cudaStream_t s) {
    const std::string line = "stream_destroy " + pointer(s);
    if (const cudaError_t code = enter("stream_destroy", line)) return code;
    if (!r().is(s, handle_kind::stream)) {
      r().misuse(line + ": not a live stream");
      return cudaErrorInvalidValue;
    }
    r().handles_[reinterpret_cast<std::uintptr_t>(s)].state = handle_state::destroyed;
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t stream_synchronize(cudaStream_t s) {
    return simple("stream_synchronize", "stream_synchronize " + pointer(s));
  }
  static cudaError_t stream_begin_capture(cudaStream_t s, cudaStreamCaptureMode mode) {
    const cudaError_t code = simple(
        "stream_begin_capture", "stream_begin_capture " + pointer(s) + " mode=" + std::to_string(int(mode)));
    if (code == cudaSuccess) {
      const auto stream = reinterpret_cast<std::uintptr_t>(s);
      if (r().captures_.count(stream)) r().misuse("stream_begin_capture: the stream is already capturing");
      // The graph the capture builds exists from the start (work can be
      // added to it while capturing); it is named when the capture ends.
      r().captures_[stream] = {reinterpret_cast<cudaGraph_t>(r().make_handle(handle_kind::graph)), {}};
    }
    return code;
  }
  static cudaError_t stream_end_capture(cudaStream_t s, cudaGraph_t* g) {
    const std::string line = "stream_end_capture " + pointer(s);
    auto it = r().captures_.find(reinterpret_cast<std::uintptr_t>(s));
    cudaGraph_t built = nullptr;
    bool into_existing = false;
    if (it != r().captures_.end()) {
      built = it->second.graph;
      into_existing = it->second.into_existing;
      r().captures_.erase(it);
    }
    if (const cudaError_t code = enter("stream_end_capture", line)) {
      // A graph of its own goes with a failed capture; the caller's stays.
      if (built && !into_existing) destroy_graph_tree(reinterpret_cast<std::uintptr_t>(built));
      *g = nullptr;
      return code;
    }
    if (!built) {
      r().misuse(line + ": the stream is not capturing");
      *g = nullptr;
      return cudaErrorIllegalState;
    }
    *g = built;
    r().record(line + " -> " + pointer(*g));
    return cudaSuccess;
  }
  static cudaError_t stream_get_capture_info(cudaStream_t s, cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph,
                                             const cudaGraphNode_t** deps,
                                             const cudaGraphEdgeData** edge_data,
                                             std::size_t* count) {
    std::string line = "stream_get_capture_info " + pointer(s);
    if (const cudaError_t code = enter("stream_get_capture_info", line)) return code;
    auto it = r().captures_.find(reinterpret_cast<std::uintptr_t>(s));
    if (status) *status = it == r().captures_.end() ? cudaStreamCaptureStatusNone : cudaStreamCaptureStatusActive;
    if (id) *id = it == r().captures_.end() ? 0 : reinterpret_cast<std::uintptr_t>(s);
    if (graph) *graph = it == r().captures_.end() ? nullptr : it->second.graph;
    // As CUDA 13: dependencies of a non-default edge type are not listed
    // to a caller that takes no edge data.
    if (it != r().captures_.end() && edge_data == nullptr &&
        std::any_of(it->second.edges.begin(), it->second.edges.end(),
                    [](const cudaGraphEdgeData& e) { return e.type != cudaGraphDependencyTypeDefault || e.from_port != 0; })) {
      r().record(line + " -> cudaErrorLossyQuery");
      return cudaErrorLossyQuery;
    }
    if (deps) *deps = it == r().captures_.end() ? nullptr : it->second.dependencies.data();
    if (edge_data) {
      if (it != r().captures_.end()) it->second.edges.resize(it->second.dependencies.size());
      *edge_data = it == r().captures_.end() ? nullptr : it->second.edges.data();
    }
    if (count) *count = it == r().captures_.end() ? 0 : it->second.dependencies.size();
    if (it == r().captures_.end()) {
      r().record(line + " -> not capturing");
    } else {
      line += " -> " + pointer(it->second.graph) + " deps=[";
      for (std::size_t k = 0; k < it->second.dependencies.size(); ++k) {
        line += (k ? "," : "") + pointer(it->second.dependencies[k]);
        if (k < it->second.edges.size()) line += recorded_graphs::edge_suffix(it->second.edges[k]);
      }
      r().record(line + "]");
    }
    return cudaSuccess;
  }
  static cudaError_t stream_update_capture_dependencies(cudaStream_t s, cudaGraphNode_t* nodes,
                                                        const cudaGraphEdgeData* edges, std::size_t count,
                                                        unsigned flags) {
    std::string line = "stream_update_capture_dependencies " + pointer(s) +
                       (flags == cudaStreamSetCaptureDependencies ? " set [" : " add [");
    for (std::size_t k = 0; k < count; ++k) line += (k ? "," : "") + pointer(nodes[k]);
    line += "]";
    if (const cudaError_t code = enter("stream_update_capture_dependencies", line)) return code;
    auto it = r().captures_.find(reinterpret_cast<std::uintptr_t>(s));
    if (it == r().captures_.end()) {
      r().misuse(line + ": the stream is not capturing");
      return cudaErrorIllegalState;
    }
    capture_state& c = it->second;
    if (flags == cudaStreamSetCaptureDependencies) {
      c.dependencies.clear();
      c.edges.clear();
    }
    c.edges.resize(c.dependencies.size());
    c.dependencies.insert(c.dependencies.end(), nodes, nodes + count);
    for (std::size_t k = 0; k < count; ++k) c.edges.push_back(edges ? edges[k] : cudaGraphEdgeData{});
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t stream_begin_capture_to_graph(cudaStream_t s, cudaGraph_t g,
                                                   const cudaGraphNode_t* deps,
                                                   const cudaGraphEdgeData* edges, std::size_t count,
                                                   cudaStreamCaptureMode mode) {
    std::string line = "stream_begin_capture_to_graph " + pointer(s) + " " + pointer(g) + " deps=[";
    for (std::size_t k = 0; k < count; ++k) line += (k ? "," : "") + pointer(deps[k]);
    line += "] mode=" + std::to_string(int(mode));
    if (const cudaError_t code = enter("stream_begin_capture_to_graph", line)) return code;
    const auto stream = id(s);
    if (!r().is(g, handle_kind::graph) || r().captures_.count(stream)) {
      r().misuse(line + ": not a live graph, or the stream is already capturing");
      return cudaErrorInvalidValue;
    }
    r().captures_[stream] = {g, std::vector<cudaGraphNode_t>(deps, deps + count), true,
                             edges ? std::vector<cudaGraphEdgeData>(edges, edges + count)
                                   : std::vector<cudaGraphEdgeData>{}};
    r().record(line);
    return cudaSuccess;
  }
  static cudaError_t stream_is_capturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
    const std::string line = "stream_is_capturing " + pointer(s);
    if (const cudaError_t code = enter("stream_is_capturing", line)) return code;
    const bool capturing = r().captures_.count(id(s)) != 0;
    *status = capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    r().record(line + (capturing ? " -> active" : " -> none"));
    return cudaSuccess;
  }
  static cudaError_t thread_exchange_stream_capture_mode(cudaStreamCaptureMode* mode) {
    static const char* const names[] = {"global", "thread_local", "relaxed"};
    const std::string line = "thread_exchange_stream_capture_mode " + std::string(names[int(*mode) % 3]);
    if (const cudaError_t code = enter("thread_exchange_stream_capture_mode", line)) return code;
    std::swap(*mode, r().thread_capture_mode_);
    r().record(line + " -> " + names[int(*mode) % 3]);
    return cudaSuccess;
  }
  static cudaError_t get_device(int* device) {
    if (const cudaError_t code = enter("get_device", "get_device")) return code;
    *device = 0;
    r().record("get_device -> 0");
    return cudaSuccess;
  }
  static cudaError_t device_get_attribute(int* value, cudaDeviceAttr attribute, int device) {
    const std::string line = "device_get_attribute attribute=" + std::to_string(int(attribute)) +
                             " device=" + std::to_string(device);
    if (const cudaError_t code = enter("device_get_attribute", line)) return code;
    if (attribute != cudaDevAttrMultiProcessorCount) {
      r().misuse(line + ": an attribute the recorder does not model");
      return cudaErrorInvalidValue;
    }
    *value = r().multiprocessors_;
    r().record(line + " -> " + std::to_string(*value));
    return cudaSuccess;
  }
  static cudaError_t occupancy_max_active_blocks(int* blocks, const void* function, int block_threads,
                                                 std::size_t shared_bytes) {
    const std::string line = "occupancy_max_active_blocks " + kernel_label(function) +
                             " threads=" + std::to_string(block_threads) +
                             " shared=" + std::to_string(shared_bytes);
    if (const cudaError_t code = enter("occupancy_max_active_blocks", line)) return code;
    *blocks = r().blocks_per_multiprocessor_;
    r().record(line + " -> " + std::to_string(*blocks));
    return cudaSuccess;
  }
  static cudaError_t get_last_error() { return cudaSuccess; }
  static cudaError_t mem_get_info(std::size_t* free, std::size_t* total) {
    if (const cudaError_t code = enter("mem_get_info", "mem_get_info")) return code;
    if (free == nullptr || total == nullptr) {
      r().misuse("mem_get_info: a null output");
      return cudaErrorInvalidValue;
    }
    *total = r().device_total_;
    *free = r().device_memory_free();
    r().record("mem_get_info -> free=" + std::to_string(*free) + " total=" + std::to_string(*total));
    return cudaSuccess;
  }
  static cudaError_t device_graph_mem_trim(int device) {
    const std::string line = "device_graph_mem_trim device=" + std::to_string(device);
    if (const cudaError_t code = enter("device_graph_mem_trim", line)) return code;
    const std::uint64_t released = r().graph_reserved_;
    r().graph_reserved_ = 0;
    r().graph_used_ = 0;
    for (auto& [x, m] : r().exec_memory_) m.mapped = false;
    r().record(line + " -> released=" + std::to_string(released));
    return cudaSuccess;
  }
  static cudaError_t device_get_graph_mem_attribute(int device, cudaGraphMemAttributeType attr,
                                                    void* value) {
    const char* name = "?";
    std::uint64_t v = 0;
    switch (attr) {
      case cudaGraphMemAttrUsedMemCurrent: name = "used_current", v = r().graph_used_; break;
      case cudaGraphMemAttrUsedMemHigh: name = "used_high", v = r().graph_used_high_; break;
      case cudaGraphMemAttrReservedMemCurrent:
        name = "reserved_current", v = r().graph_reserved_;
        break;
      case cudaGraphMemAttrReservedMemHigh:
        name = "reserved_high", v = r().graph_reserved_high_;
        break;
    }
    const std::string line = "device_get_graph_mem_attribute device=" + std::to_string(device) + " " + name;
    if (const cudaError_t code = enter("device_get_graph_mem_attribute", line)) return code;
    if (value == nullptr) {
      r().misuse(line + ": a null output");
      return cudaErrorInvalidValue;
    }
    std::memcpy(value, &v, sizeof v);
    r().record(line + " -> " + std::to_string(v));
    return cudaSuccess;
  }
  static cudaError_t event_create(cudaEvent_t* e, unsigned flags) {
    if (const cudaError_t code = enter("event_create", "event_create")) return code;
    *e = reinterpret_cast<cudaEvent_t>(r().make_handle(handle_kind::event));
    r().record("event_create " + pointer(*e) + " flags=" + std::to_string(flags));
    return cudaSuccess;
  }
  static cudaError_t event_destroy(cudaEvent_t e) {
    const std::string line = "event_destroy " + pointer(e);
    if (const cudaError_t code = enter("event_destroy", line)) return code;
    if (!r().is(e, handle_kind::event)) {
      r().misuse(line + ": not a live event");
      return cudaErrorInvalidValue;
    }
    r().handles_[reinterpret_cast<std::uintptr_t>(e)].state = handle_state::destroyed;
    r().record(line);
    return cudaSuccess;
  }

  // User objects: references counted as CUDA counts them; the last one
  // released calls the destructor (CUDA calls it later, on its own thread).
  static cudaError_t user_object_create(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy,
                                        unsigned refs, unsigned flags) {
    const std::string line = "user_object_create refs=" + std::to_string(refs) + " flags=" + std::to_string(flags);
    if (const cudaError_t code = enter("user_object_create", line)) return code;
    if (object == nullptr || destroy == nullptr || refs == 0 || flags != cudaUserObjectNoDestructorSync) {
      r().misuse(line + ": CUDA takes an output, a destructor, at least one reference and "
                        "cudaUserObjectNoDestructorSync");
      return cudaErrorInvalidValue;
    }
    *object = reinterpret_cast<cudaUserObject_t>(r().make_handle(handle_kind::user_object));
    r().user_objects_[reinterpret_cast<std::uintptr_t>(*object)] = {ptr, destroy, refs};
    r().record(line + " -> " + pointer(*object));
    return cudaSuccess;
  }
  /// Drops `count` references of `object`; the last calls its destructor.
  static void drop_references(std::uintptr_t object, unsigned count) {
    auto it = r().user_objects_.find(object);
    if (it == r().user_objects_.end() || it->second.refs < count) {
      r().misuse("user object " + pointer(reinterpret_cast<void*>(object)) + ": more references released than held");
      return;
    }
    if ((it->second.refs -= count) != 0) return;
    const auto [ptr, destroy, refs] = it->second;
    r().user_objects_.erase(it);
    r().handles_[object].state = handle_state::destroyed;
    destroy(ptr);
  }
  static cudaError_t user_object_release(cudaUserObject_t object, unsigned count) {
    const std::string line = "user_object_release " + pointer(object) + " count=" + std::to_string(count);
    if (const cudaError_t code = enter("user_object_release", line)) return code;
    r().record(line);
    drop_references(reinterpret_cast<std::uintptr_t>(object), count);
    return cudaSuccess;
  }
  static cudaError_t graph_retain_user_object(cudaGraph_t g, cudaUserObject_t object, unsigned count,
                                              unsigned flags) {
    const std::string line = "graph_retain_user_object " + pointer(g) + " " + pointer(object) +
                             " count=" + std::to_string(count) +
                             ((flags & cudaGraphUserObjectMove) ? " move" : "");
    if (const cudaError_t code = enter("graph_retain_user_object", line)) return code;
    if (!r().is(g, handle_kind::graph) || !r().is(object, handle_kind::user_object)) {
      r().misuse(line + ": not a live graph and user object");
      return cudaErrorInvalidValue;
    }
    // Moved: the caller's references become the graph's.
    if (!(flags & cudaGraphUserObjectMove))
      r().user_objects_[reinterpret_cast<std::uintptr_t>(object)].refs += count;
    r().retained_[reinterpret_cast<std::uintptr_t>(g)].push_back({reinterpret_cast<std::uintptr_t>(object), count});
    r().record(line);
    return cudaSuccess;
  }
  /// What graph or exec `owner` retains, released (it is destroyed).
  static void release_retained(std::uintptr_t owner) {
    auto it = r().retained_.find(owner);
    if (it == r().retained_.end()) return;
    const auto held = std::move(it->second);
    r().retained_.erase(it);
    for (const auto& [object, count] : held) drop_references(object, count);
  }

  // Stream work of a spec run without a graph: recorded, host functions
  // run at once (the recorder's stream is always idle).
  /// Work enqueued on stream `s`: while `s` is capturing, it also becomes
  /// a node of the graph the capture builds, after the work before it (in
  /// the state model only: the capture's dependencies stay the caller's).
  static cudaError_t stream_work(std::string_view function, cudaStream_t s, const std::string& what) {
    const cudaError_t code = simple(function, std::string(function) + " stream=" + pointer(s) + " " + what);
    auto capture = r().captures_.find(id(s));
    if (code != cudaSuccess || capture == r().captures_.end()) return code;
    const std::uintptr_t graph = id(capture->second.graph);
    std::uintptr_t& last = r().captured_work_[graph];
    const std::uintptr_t node = ++r().captured_work_count_;  // not a handle: never handed out
    std::vector<std::uintptr_t> deps;
    if (last) deps.push_back(last);
    graphs().node_added(node, graph, "captured " + std::string(function), deps, what,
                        "captured" + std::to_string(node));
    last = node;
    return code;
  }
  static cudaError_t launch_kernel(const void* f, dim3 grid, dim3 block, void** args,
                                   std::size_t shared, cudaStream_t s) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(f);
    p.gridDim = grid;
    p.blockDim = block;
    p.kernelParams = args;
    p.sharedMemBytes = static_cast<unsigned>(shared);
    return stream_work("launch_kernel", s, kernel(p));
  }
  static cudaError_t memcpy_3d_async(const cudaMemcpy3DParms* p, cudaStream_t s) {
    return stream_work("memcpy_3d_async", s, memcpy(*p));
  }
  static cudaError_t memset_2d_async(void* dst, std::size_t pitch, unsigned value, unsigned element,
                                     std::size_t width, std::size_t height, cudaStream_t s) {
    cudaMemsetParams p{};
    p.dst = dst;
    p.pitch = pitch;
    p.value = value;
    p.elementSize = element;
    p.width = width;
    p.height = height;
    return stream_work("memset_2d_async", s, memset(p));
  }
  static cudaError_t launch_host_func(cudaStream_t s, cudaHostFn_t fn, void* data) {
    const cudaError_t code = simple("launch_host_func", "launch_host_func stream=" + pointer(s));
    if (code == cudaSuccess && fn) fn(data);
    return code;
  }
  static cudaError_t event_record(cudaEvent_t e, cudaStream_t s) {
    return simple("event_record", "event_record " + pointer(e) + " stream=" + pointer(s));
  }
  static cudaError_t stream_wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags) {
    return simple("stream_wait_event", "stream_wait_event stream=" + pointer(s) + " " + pointer(e) +
                                           " flags=" + std::to_string(flags));
  }
  static cudaError_t malloc_async(void** out, std::size_t bytes, cudaStream_t s) {
    const std::string line = "malloc_async bytes=" + std::to_string(bytes) + " stream=" + pointer(s);
    if (const cudaError_t code = enter("malloc_async", line)) return code;
    *out = reinterpret_cast<void*>(0xa0000000ull + 0x100000ull * r().allocations_++);
    r().pointer_names_[*out] = "stream_mem" + std::to_string(r().allocations_);
    r().stream_allocations_.insert(*out);
    r().record(line + " -> " + pointer(*out));
    return cudaSuccess;
  }
  static cudaError_t free_async(void* p, cudaStream_t s) {
    const std::string line = "free_async " + pointer(p) + " stream=" + pointer(s);
    if (const cudaError_t code = enter("free_async", line)) return code;
    if (r().stream_allocations_.erase(p) == 0) {
      r().misuse(line + ": not a live stream-ordered allocation");
      return cudaErrorInvalidValue;
    }
    r().record(line);
    return cudaSuccess;
  }

  static const api_table table;
};

const api_table recorder::impl::table{
    &impl::graph_create,
    &impl::graph_destroy,
    &impl::graph_destroy_node,
    &impl::add_kernel_node,
    &impl::add_memcpy_node,
    &impl::add_memset_node,
    &impl::add_host_node,
    &impl::add_child_graph_node,
    &impl::add_empty_node,
    &impl::add_event_record_node,
    &impl::add_event_wait_node,
    &impl::add_mem_alloc_node,
    &impl::add_mem_free_node,
    &impl::add_node,
    &impl::conditional_handle_create,
    &impl::kernel_node_set_attribute,
    &impl::kernel_node_set_params,
    &impl::memcpy_node_set_params,
    &impl::memset_node_set_params,
    &impl::host_node_set_params,
    &impl::event_record_node_set_event,
    &impl::event_wait_node_set_event,
    &impl::exec_kernel_node_set_params,
    &impl::exec_memcpy_node_set_params,
    &impl::exec_memset_node_set_params,
    &impl::exec_host_node_set_params,
    &impl::exec_event_record_node_set_event,
    &impl::exec_event_wait_node_set_event,
    &impl::exec_child_graph_node_set_params,
    &impl::node_set_enabled,
    &impl::node_get_enabled,
    &impl::graph_get_nodes,
    &impl::graph_get_edges,
    &impl::node_get_type,
    &impl::kernel_node_get_params,
    &impl::kernel_node_get_attribute,
    &impl::memcpy_node_get_params,
    &impl::memset_node_get_params,
    &impl::host_node_get_params,
    &impl::child_graph_node_get_graph,
    &impl::event_record_node_get_event,
    &impl::event_wait_node_get_event,
    &impl::mem_alloc_node_get_params,
    &impl::mem_free_node_get_params,
    &impl::graph_clone,
    &impl::node_find_in_clone,
    &impl::kernel_node_get_driver_params,
    &impl::function_get_param_info,
    &impl::kernel_get_param_info,
    &impl::function_get_name,
    &impl::kernel_get_name,
    &impl::instantiate,
    &impl::exec_update,
    &impl::exec_destroy,
    &impl::launch,
    &impl::upload,
    &impl::stream_create,
    &impl::stream_destroy,
    &impl::stream_synchronize,
    &impl::stream_begin_capture,
    &impl::stream_end_capture,
    &impl::stream_get_capture_info,
    &impl::stream_update_capture_dependencies,
    &impl::stream_begin_capture_to_graph,
    &impl::stream_is_capturing,
    &impl::thread_exchange_stream_capture_mode,
    &impl::get_device,
    &impl::device_get_attribute,
    &impl::occupancy_max_active_blocks,
    &impl::get_last_error,
    &impl::mem_get_info,
    &impl::device_graph_mem_trim,
    &impl::device_get_graph_mem_attribute,
    &impl::event_create,
    &impl::event_destroy,
    &impl::user_object_create,
    &impl::user_object_release,
    &impl::graph_retain_user_object,
    &impl::launch_kernel,
    &impl::memcpy_3d_async,
    &impl::memset_2d_async,
    &impl::launch_host_func,
    &impl::event_record,
    &impl::stream_wait_event,
    &impl::malloc_async,
    &impl::free_async,
};

recorder::recorder() : graphs_(std::make_unique<recorded_graphs>()) {
  if (current != nullptr) throw std::logic_error("cudag::native::recorder: one recorder at a time");
  current = this;
  previous_ = install_api(&impl::table);
}

recorder::~recorder() {
  install_api(previous_);
  current = nullptr;
}

void recorder::name_kernel(const void* function, std::string name,
                           std::vector<std::size_t> param_sizes) {
  kernels_[function] = {std::move(name), std::move(param_sizes)};
}

void recorder::name_pointer(const void* pointer, std::string name) {
  pointer_names_[pointer] = std::move(name);
}

std::string recorder::exec_state(cudaGraphExec_t x) const {
  return graphs_->exec_text(reinterpret_cast<std::uintptr_t>(x));
}
std::string recorder::graph_state(cudaGraph_t g) const {
  return graphs_->graph_text(reinterpret_cast<std::uintptr_t>(g));
}

std::vector<std::string> recorder::calls_starting(std::string_view function) const {
  std::vector<std::string> out;
  for (const std::string& c : calls_)
    if (std::string_view(c).substr(0, function.size()) == function) out.push_back(c);
  return out;
}

std::string recorder::transcript() const {
  std::string out;
  for (const std::string& c : calls_) out += c + "\n";
  return out;
}

void recorder::fail_call(std::size_t index, cudaError_t code) noexcept {
  fail_at_ = call_count_ + index;
  fail_code_ = code;
}

void recorder::fail_next(std::string_view function, cudaError_t code) {
  fail_function_ = function;
  fail_function_code_ = code;
}

void recorder::refuse_next_update(cudaGraphNode_t node, cudaGraphExecUpdateResult result) noexcept {
  refuse_node_ = node;
  refuse_result_ = result;
}

cudaError_t recorder::begin_call(std::string_view function) {
  const std::size_t index = call_count_++;
  if (index == fail_at_) {
    fail_at_ = static_cast<std::size_t>(-1);
    return fail_code_;
  }
  if (!fail_function_.empty() && function == fail_function_) {
    fail_function_.clear();
    return fail_function_code_;
  }
  return cudaSuccess;
}

void recorder::misuse(std::string what) { misuse_.push_back(std::move(what)); }

std::uintptr_t recorder::make_handle(handle_kind kind, std::uintptr_t owner, std::string label) {
  static const char* const prefix[] = {"g", "n", "x", "s", "c", "e", "u"};
  const std::uintptr_t id = next_handle_;
  next_handle_ += 0x10;
  const auto k = static_cast<std::size_t>(kind);
  if (label.empty()) label = prefix[k] + std::to_string(++counters_[k]);
  handles_[id] = handle_info{kind, handle_state::live, std::move(label), owner};
  if (owner != 0) members_[owner].push_back(id);
  return id;
}

std::string recorder::label(const void* handle) const {
  if (handle == nullptr) return "null";
  if (auto it = handles_.find(reinterpret_cast<std::uintptr_t>(handle)); it != handles_.end())
    return it->second.label;
  if (auto it = pointer_names_.find(handle); it != pointer_names_.end()) return it->second;
  return hex(reinterpret_cast<std::uintptr_t>(handle));
}

bool recorder::is(const void* handle, handle_kind kind, bool must_be_live) const {
  auto it = handles_.find(reinterpret_cast<std::uintptr_t>(handle));
  if (it == handles_.end() || it->second.kind != kind) return false;
  return !must_be_live || it->second.state == handle_state::live;
}

cudaHostNodeParams recorder::host_call_of(cudaGraphExec_t exec, cudaGraphNode_t node) const {
  const auto it = host_of_exec_.find(
      {reinterpret_cast<std::uintptr_t>(exec), reinterpret_cast<std::uintptr_t>(node)});
  return it == host_of_exec_.end() ? cudaHostNodeParams{} : it->second;
}

std::size_t recorder::live_user_objects() const noexcept { return user_objects_.size(); }

std::size_t recorder::live_graphs() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, h] : handles_) n += h.kind == handle_kind::graph && h.state == handle_state::live;
  return n;
}
std::size_t recorder::live_execs() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, h] : handles_) n += h.kind == handle_kind::exec && h.state == handle_state::live;
  return n;
}
std::size_t recorder::live_streams() const noexcept {
  std::size_t n = 0;
  for (const auto& [id, h] : handles_) n += h.kind == handle_kind::stream && h.state == handle_state::live;
  return n;
}

bool recorder::node_enabled(cudaGraphExec_t x, cudaGraphNode_t n) const {
  auto it = enabled_.find({reinterpret_cast<std::uintptr_t>(x), reinterpret_cast<std::uintptr_t>(n)});
  return it == enabled_.end() || it->second;
}

}  // namespace cudag::native

namespace cudag::native {

void recorder::set_device_memory(std::size_t total, std::size_t taken_by_others) noexcept {
  device_total_ = total;
  device_taken_ = taken_by_others;
  lowest_free_ = device_memory_free();
}

void recorder::set_occupancy(int blocks_per_multiprocessor, int multiprocessors) noexcept {
  blocks_per_multiprocessor_ = blocks_per_multiprocessor;
  multiprocessors_ = multiprocessors;
}

void recorder::set_exec_memory(std::size_t fixed, std::size_t per_node) noexcept {
  exec_fixed_ = fixed;
  exec_per_node_ = per_node;
}

void recorder::set_node_memory(std::string_view function, std::size_t per_node) {
  node_memory_[std::string(function)] = per_node;
}

std::size_t recorder::exec_memory_in_use() const noexcept {
  std::size_t sum = 0;
  for (const auto& [x, m] : exec_memory_) sum += m.bytes;
  return sum;
}

std::size_t recorder::device_memory_free() const noexcept {
  const std::uint64_t taken = std::uint64_t{device_taken_} + exec_memory_in_use() + graph_reserved_;
  return taken >= device_total_ ? 0 : static_cast<std::size_t>(device_total_ - taken);
}

std::size_t recorder::exec_memory(cudaGraphExec_t x) const noexcept {
  auto it = exec_memory_.find(reinterpret_cast<std::uintptr_t>(x));
  return it == exec_memory_.end() ? 0 : it->second.bytes;
}

std::size_t recorder::exec_nodes(cudaGraphExec_t x) const noexcept {
  auto it = exec_memory_.find(reinterpret_cast<std::uintptr_t>(x));
  return it == exec_memory_.end() ? 0 : it->second.nodes;
}

}  // namespace cudag::native
