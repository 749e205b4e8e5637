// The recorder's model of template and executable graph state.
#include "recorded_graphs.hpp"

#include "cudag/native_nodes.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace cudag::native {

namespace {
/// The value of `key=` in a parameter text ("" when absent).
std::string field(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(" " + key + "=");
  const std::size_t from = at == std::string::npos ? (text.starts_with(key + "=") ? key.size() + 1 : std::string::npos)
                                                   : at + key.size() + 2;
  if (from == std::string::npos) return {};
  return text.substr(from, text.find(' ', from) - from);
}
}  // namespace

std::string recorded_graphs::unchangeable(const std::string& shape, const std::string& was,
                                          const std::string& now) {
  if (was == now) return {};
  // CUDA changes no memory node and no conditional node of an exec.
  if (shape.starts_with("add_mem_alloc_node") || shape.starts_with("add_mem_free_node") ||
      (shape.starts_with("add_node") && now.starts_with("conditional")))
    return "its kind of node cannot be updated";
  // Memsets and copies: 1-D operands only, at instantiation and after
  // (cudaGraphExecMemsetNodeSetParams); a copy keeps its kind (an H200
  // refused default <-> device-to-device).
  if (shape.starts_with("add_memset_node") && (field(was, "height") != "1" || field(now, "height") != "1"))
    return "a 2-D memset cannot be changed in an executable graph";
  if (shape.starts_with("add_memcpy_node") && field(was, "kind") != field(now, "kind"))
    return "a copy's kind cannot be changed in an executable graph";
  return {};
}

std::string recorded_graphs::edge_suffix(const cudaGraphEdgeData& data) {
  // The engine's own reading of edge data, so that the recorder names a
  // kind exactly where cudag would import it as one.
  if (const std::optional<edge_kind> kind = edge_kind_of(data)) {
    if (*kind == edge_kind::full) return {};
    return ":" + std::string(edge_kind_name(*kind));
  }
  return ":edge(type=" + std::to_string(data.type) + ",from=" + std::to_string(data.from_port) +
         ",to=" + std::to_string(data.to_port) + ")";
}

void recorded_graphs::node_added(handle node, handle graph, std::string function,
                                 const std::vector<handle>& deps, std::string text,
                                 std::string label, std::vector<cudaGraphEdgeData> edge_data) {
  node_info& n = nodes_[node];
  n.graph = graph;
  n.function = std::move(function);
  n.deps = deps;
  n.edge_data = std::move(edge_data);
  n.text = std::move(text);
  n.label = std::move(label);
  graph_nodes_[graph].push_back(node);
}

void recorded_graphs::node_params_set(handle node, typed_params params) {
  node_info& n = nodes_[node];
  n.has_params = true;
  n.params = std::move(params);
  // kernelParams points at the node's own copy of the argument bytes.
  typed_params& p = n.params;
  p.argument_pointers.clear();
  for (auto& bytes : p.arguments) p.argument_pointers.push_back(bytes.data());
  p.kernel.kernelParams = p.arguments_known ? p.argument_pointers.data() : nullptr;
  p.kernel.extra = nullptr;
}

recorded_graphs::typed_params* recorded_graphs::params_of(handle node) {
  auto it = nodes_.find(node);
  return it == nodes_.end() || !it->second.has_params ? nullptr : &it->second.params;
}

recorded_graphs::handle recorded_graphs::graph_of(handle node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? 0 : it->second.graph;
}

std::vector<recorded_graphs::handle> recorded_graphs::nodes_of(handle graph) const {
  std::vector<handle> out;
  if (auto members = graph_nodes_.find(graph); members != graph_nodes_.end())
    for (handle h : members->second)
      if (!nodes_.at(h).destroyed) out.push_back(h);
  return out;
}

std::vector<recorded_graphs::edge> recorded_graphs::edges_of(handle graph) const {
  std::vector<edge> out;
  for (handle h : nodes_of(graph)) {
    const node_info& n = nodes_.at(h);
    for (std::size_t k = 0; k < n.deps.size(); ++k)
      if (auto dep = nodes_.find(n.deps[k]); dep != nodes_.end() && !dep->second.destroyed)
        out.push_back({n.deps[k], h, k < n.edge_data.size() ? n.edge_data[k] : cudaGraphEdgeData{}});
  }
  return out;
}

void recorded_graphs::node_copied(handle original, handle copy, handle graph,
                                  const std::vector<handle>& deps,
                                  std::vector<cudaGraphEdgeData> edge_data, std::string label) {
  node_info n = nodes_.at(original);
  n.graph = graph;
  n.deps = deps;
  n.edge_data = std::move(edge_data);
  n.label = std::move(label);
  n.bodies.clear();
  const bool had_params = n.has_params;
  typed_params params = n.params;
  nodes_[copy] = std::move(n);
  graph_nodes_[graph].push_back(copy);
  if (had_params) node_params_set(copy, std::move(params));  // its own argument pointers
}

std::string recorded_graphs::unclonable(handle graph) const {
  for (handle h : nodes_of(graph)) {
    const node_info& n = nodes_.at(h);
    if (n.function == "add_mem_alloc_node" || n.function == "add_mem_free_node")
      return "the graph holds memory allocation or free nodes";
    if (n.function == "add_node" && n.text.starts_with("conditional"))
      return "the graph holds conditional nodes";
    if (n.has_params && n.params.child != 0)
      if (std::string why = unclonable(n.params.child); !why.empty()) return why;
  }
  return {};
}

void recorded_graphs::child_cloned(handle node, handle child) {
  node_info& n = nodes_[node];
  n.has_clone = true;
  n.clone.clear();
  for (const auto& [path, e] : render_root(child, nullptr, nullptr))
    n.clone[path] = e;
}

void recorded_graphs::graph_owned(handle node, handle body) { nodes_[node].bodies.push_back(body); }

void recorded_graphs::node_destroyed(handle node) {
  if (auto it = nodes_.find(node); it != nodes_.end()) it->second.destroyed = true;
}

void recorded_graphs::node_text_set(handle node, std::string text) {
  if (auto it = nodes_.find(node); it != nodes_.end()) it->second.text = std::move(text);
}

void recorded_graphs::node_attribute_set(handle node, std::string attribute, std::string value) {
  if (auto it = nodes_.find(node); it != nodes_.end())
    it->second.attributes[std::move(attribute)] = std::move(value);
}

std::string recorded_graphs::attribute_of(handle node, const std::string& attribute) const {
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return {};
  const auto a = it->second.attributes.find(attribute);
  return a == it->second.attributes.end() ? std::string() : a->second;
}

std::string recorded_graphs::attributes_of(const node_info& n) {
  std::string s;
  for (const auto& [name, value] : n.attributes) s += " " + name + "=" + value;
  return s;
}

void recorded_graphs::render(handle graph, const std::string& prefix, rendering& out,
                             std::map<std::string, std::string>& labels) const {
  auto members = graph_nodes_.find(graph);
  if (members == graph_nodes_.end()) return;
  std::map<handle, std::string> local;
  std::size_t index = 0;
  for (handle h : members->second) {
    const node_info& n = nodes_.at(h);
    if (n.destroyed) continue;
    const std::string path = prefix + std::to_string(index++);
    local[h] = path;
    labels[n.label] = path;
    std::string shape = n.function + " deps=[";
    bool first = true;
    for (std::size_t k = 0; k < n.deps.size(); ++k) {
      const handle dep = n.deps[k];
      // A destroyed node's edges went with it.
      if (auto gone = nodes_.find(dep); gone != nodes_.end() && gone->second.destroyed) continue;
      auto d = local.find(dep);
      shape += (first ? "" : ",") + (d != local.end() ? d->second : std::string("?"));
      if (k < n.edge_data.size()) shape += edge_suffix(n.edge_data[k]);
      first = false;
    }
    shape += "]";
    out[path] = entry{std::move(shape), n.text, attributes_of(n)};
    for (std::size_t b = 0; b < n.bodies.size(); ++b)
      render(n.bodies[b], path + "/b" + std::to_string(b) + "/", out, labels);
    for (const auto& [inner, e] : n.clone) out[path + "/c/" + inner] = e;
  }
}

std::string recorded_graphs::normalized(std::string text,
                                        const std::map<std::string, std::string>& labels) {
  // A graph-owned buffer reads "mem@<node label>": name it by the node's
  // position, which a second lowering of the same spec repeats.
  static constexpr std::string_view tag = "mem@";
  for (std::size_t at = text.find(tag); at != std::string::npos; at = text.find(tag, at + 1)) {
    std::size_t end = at + tag.size();
    while (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) ++end;
    auto it = labels.find(text.substr(at + tag.size(), end - at - tag.size()));
    if (it != labels.end()) text.replace(at + tag.size(), end - at - tag.size(), it->second);
  }
  return text;
}

recorded_graphs::rendering recorded_graphs::render_root(
    handle graph, std::map<std::string, std::string>* labels_out,
    std::map<handle, std::string>* top_paths) const {
  rendering out;
  std::map<std::string, std::string> labels;
  render(graph, "", out, labels);
  for (auto& [path, e] : out) e.params = normalized(std::move(e.params), labels);
  if (top_paths != nullptr) {
    std::size_t index = 0;
    if (auto members = graph_nodes_.find(graph); members != graph_nodes_.end())
      for (handle h : members->second)
        if (!nodes_.at(h).destroyed) (*top_paths)[h] = std::to_string(index++);
  }
  if (labels_out != nullptr) *labels_out = std::move(labels);
  return out;
}

void recorded_graphs::instantiated(handle exec, handle graph) {
  exec_info& x = execs_[exec];
  x.graph = graph;
  x.top_paths.clear();
  x.state = render_root(graph, &x.labels, &x.top_paths);
}

void recorded_graphs::exec_destroyed(handle exec) { execs_.erase(exec); }

bool recorded_graphs::holds_single_instance_nodes(handle graph) const {
  auto members = graph_nodes_.find(graph);
  if (members == graph_nodes_.end()) return false;
  for (handle h : members->second) {
    const node_info& n = nodes_.at(h);
    if (n.destroyed) continue;
    if (n.function == "add_mem_alloc_node" || n.function == "add_mem_free_node" ||
        (n.function == "add_node" && n.text.starts_with("conditional")))
      return true;
    for (handle body : n.bodies)
      if (holds_single_instance_nodes(body)) return true;
  }
  return false;
}

std::string recorded_graphs::second_instantiation(handle graph) const {
  for (const auto& [exec, x] : execs_)
    if (x.graph == graph && holds_single_instance_nodes(graph))
      return "a graph holding memory or conditional nodes has a live executable graph already";
  return {};
}

std::string recorded_graphs::exec_node_set(handle exec, handle node, std::string text) {
  auto x = execs_.find(exec);
  if (x == execs_.end()) return "not a live exec";
  auto path = x->second.top_paths.find(node);
  if (path == x->second.top_paths.end())
    return "not a node of the exec's own graph (nodes of bodies and children are reached only "
           "through a whole-graph update or their child node)";
  entry& e = x->second.state[path->second];
  std::string now = normalized(std::move(text), x->second.labels);
  if (std::string why = unchangeable(e.shape, e.params, now); !why.empty()) return why;
  e.params = std::move(now);  // launch attributes stay
  return {};
}

std::string recorded_graphs::exec_child_set(handle exec, handle node, handle child) {
  auto x = execs_.find(exec);
  if (x == execs_.end()) return "not a live exec";
  auto path = x->second.top_paths.find(node);
  if (path == x->second.top_paths.end()) return "not a node of the exec's own graph";
  const std::string prefix = path->second + "/c/";
  rendering& state = x->second.state;
  const rendering fresh = render_root(child, nullptr, nullptr);
  std::size_t held = 0;
  for (auto it = state.lower_bound(prefix); it != state.end() && it->first.starts_with(prefix); ++it)
    ++held;
  if (held != fresh.size()) return "the child graph's topology differs from the one instantiated";
  for (const auto& [inner, e] : fresh) {
    auto it = state.find(prefix + inner);
    if (it == state.end() || it->second.shape != e.shape)
      return "the child graph's topology differs at " + inner;
  }
  for (const auto& [inner, e] : fresh) state[prefix + inner] = e;
  return {};
}

std::string recorded_graphs::exec_updated(handle exec, handle graph, handle& at) {
  at = 0;
  auto x = execs_.find(exec);
  if (x == execs_.end()) return "not a live exec";
  std::map<handle, std::string> top_paths;
  const rendering fresh = render_root(graph, nullptr, &top_paths);
  auto node_at = [&](const std::string& path) {
    for (const auto& [h, p] : top_paths)
      if (p == path) return h;
    return handle{0};
  };
  rendering& state = x->second.state;
  if (state.size() != fresh.size()) return "topology changed: a node was added or removed";
  for (const auto& [path, e] : fresh) {
    auto it = state.find(path);
    if (it == state.end() || it->second.shape != e.shape) {
      at = node_at(path);
      return "topology changed at node " + path;
    }
    if (std::string why = unchangeable(e.shape, it->second.params, e.params); !why.empty()) {
      at = node_at(path);
      return "node " + path + " (" + e.shape.substr(0, e.shape.find(' ')) + "): " + why;
    }
  }
  state = fresh;
  return {};
}

std::string recorded_graphs::text_of(const rendering& r) {
  // Paths in creation order, depth first: "10" after "9", "2/b0/1" after "2".
  std::vector<std::pair<std::vector<std::string>, const std::pair<const std::string, entry>*>> rows;
  for (const auto& row : r) {
    std::vector<std::string> key;
    std::string part;
    for (char c : row.first) {
      if (c == '/') {
        key.push_back(part);
        part.clear();
      } else {
        part += c;
      }
    }
    key.push_back(part);
    for (auto& k : key)
      if (!k.empty() && std::isdigit(static_cast<unsigned char>(k[0])))
        k = std::string(12 - std::min<std::size_t>(12, k.size()), '0') + k;
    rows.emplace_back(std::move(key), &row);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [key, row] : rows)
    out += row->first + " " + row->second.shape + " " + row->second.params +
           row->second.attributes + "\n";
  return out;
}

std::string recorded_graphs::exec_text(handle exec) const {
  auto x = execs_.find(exec);
  return x == execs_.end() ? std::string("(not a live exec)\n") : text_of(x->second.state);
}

std::string recorded_graphs::graph_text(handle graph) const {
  return text_of(render_root(graph, nullptr, nullptr));
}

}  // namespace cudag::native
