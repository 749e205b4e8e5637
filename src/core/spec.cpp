#include "cudag/spec.hpp"

#include <algorithm>
#include <cstdio>

namespace cudag {

std::string_view kind_name(conditional_kind kind) noexcept {
  switch (kind) {
    case conditional_kind::if_then: return "if";
    case conditional_kind::if_else: return "if_else";
    case conditional_kind::while_loop: return "while";
    case conditional_kind::switch_case: return "switch";
  }
  return "unknown";
}

std::string_view launch_dim_name(launch_dim dim) noexcept {
  switch (dim) {
    case launch_dim::grid_x: return "grid.x";
    case launch_dim::grid_y: return "grid.y";
    case launch_dim::grid_z: return "grid.z";
    case launch_dim::block_x: return "block.x";
    case launch_dim::block_y: return "block.y";
    case launch_dim::block_z: return "block.z";
    case launch_dim::shared_bytes: return "shared_bytes";
  }
  return "unknown";
}

graph_spec::graph_spec() = default;
graph_spec::graph_spec(const graph_spec&) = default;
graph_spec::graph_spec(graph_spec&&) noexcept = default;
graph_spec& graph_spec::operator=(const graph_spec&) = default;
graph_spec& graph_spec::operator=(graph_spec&&) noexcept = default;
graph_spec::~graph_spec() = default;

const node* graph_spec::find(std::string_view node_name) const noexcept {
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&](const node& n) { return n.name == node_name; });
  return it == nodes.end() ? nullptr : &*it;
}

const param_decl* graph_spec::find_param(std::string_view param_name) const noexcept {
  auto it = std::find_if(params.begin(), params.end(),
                         [&](const param_decl& p) { return p.name == param_name; });
  return it == params.end() ? nullptr : &*it;
}

std::size_t graph_spec::total_nodes() const noexcept {
  std::size_t count = nodes.size();
  for (const node& n : nodes) {
    if (auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      count += c->graph->total_nodes();
    if (auto* c = std::get_if<conditional_node>(&n.params))
      for (const graph_spec& body : c->bodies) count += body.total_nodes();
  }
  return count;
}

namespace {
std::string dims_text(dim3 d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}
std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

std::string describe_launch_attribute_fault(launch_attribute_fault fault, std::string_view node,
                                            dim3 grid, grid_follows follows, const launch_attributes& a) {
  const std::string head = "kernel node '" + std::string(node) + "' ";
  const std::string cluster = "has a cluster of " + dims_text(a.cluster) + " blocks";
  switch (fault) {
    case launch_attribute_fault::none: break;
    case launch_attribute_fault::cluster_partly_zero:
      return head + cluster + "; every dimension must be at least 1 (0x0x0: no cluster)";
    case launch_attribute_fault::cluster_over_8_blocks:
      return head + "has a cluster of " + dims_text(a.cluster) + " = " +
             std::to_string(std::uint64_t{a.cluster.x} * a.cluster.y * a.cluster.z) +
             " blocks; the portable limit is 8 blocks a cluster";
    case launch_attribute_fault::cluster_over_a_following_dimension: {
      const char axis = a.cluster.x > 1 && follows.x ? 'x' : a.cluster.y > 1 && follows.y ? 'y' : 'z';
      return head + cluster + ", and its grid's " + std::string(1, axis) +
             " follows a parameter: whether the cluster divides it is known only at lowering, so a "
             "cluster must be 1 in a dimension that follows a parameter";
    }
    case launch_attribute_fault::cluster_does_not_divide_grid:
      return head + cluster + ", which does not divide its grid of " + dims_text(grid) + " blocks";
    case launch_attribute_fault::carveout_out_of_range:
      return head + "prefers a shared-memory carveout of " + std::to_string(a.shared_carveout) +
             "%; a carveout is 0 to 100 percent";
    case launch_attribute_fault::window_at_null:
      return head + "has an access-policy window of " + std::to_string(a.access_policy.bytes) +
             " bytes at a null address";
    case launch_attribute_fault::window_ratio_out_of_range:
      return head + "has an access-policy window whose hit ratio " +
             number_text(a.access_policy.hit_ratio) + " is not between 0 and 1";
  }
  return head + "has launch attributes CUDA refuses";
}

std::string describe_access_policy(const access_policy_window& w) {
  if (w.bytes == 0) return "none";
  const auto property = [](cudaAccessProperty p) -> std::string {
    switch (p) {
      case cudaAccessPropertyNormal: return "normal";
      case cudaAccessPropertyStreaming: return "streaming";
      case cudaAccessPropertyPersisting: return "persisting";
    }
    return std::to_string(int(p));
  };
  char base[32];
  std::snprintf(base, sizeof base, "%p", w.base);
  return std::to_string(w.bytes) + " bytes at " + base + ", " + property(w.hit) + " for " +
         number_text(w.hit_ratio) +
         " of it, else " + property(w.miss);
}

std::string describe_access_declarations(const access_declarations& declared) {
  std::string out;
  for (const access_declaration& d : declared) {
    out += (out.empty() ? "argument " : "; argument ") + std::to_string(d.argument) + " " +
           std::string(access_mode_name(d.mode));
    if (d.extent_bytes != to_the_end) out += ", " + std::to_string(d.extent_bytes) + " bytes";
  }
  return out.empty() ? "none" : out;
}

std::string describe_launch_attributes(const kernel_node& k) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (has_cluster(k)) add("cluster " + dims_text(k.cluster));
  if (k.cooperative) add("cooperative");
  if (k.mem_sync_domain == cudaLaunchMemSyncDomainRemote)
    add("memory-sync domain remote");
  else if (k.mem_sync_domain != cudaLaunchMemSyncDomainDefault)
    add("memory-sync domain " + std::to_string(int(k.mem_sync_domain)));
  if (k.shared_carveout >= 0) add("shared carveout " + std::to_string(k.shared_carveout) + "%");
  if (k.access_policy.bytes != 0) add("access-policy window " + describe_access_policy(k.access_policy));
  return out.empty() ? "none" : out;
}

std::string nested_prefix(std::string_view node_path, const node& n, std::size_t body) {
  std::string prefix(node_path);
  if (const auto* c = std::get_if<conditional_node>(&n.params);
      c && (c->kind == conditional_kind::if_else || c->kind == conditional_kind::switch_case))
  {
    prefix += '[';
    prefix += std::to_string(body);
    prefix += ']';
  }
  prefix += '/';
  return prefix;
}

namespace {
bool declares_external_buffer(const graph_spec& g, std::string_view name) {
  for (const param_decl& d : g.params)
    if (d.name == name && d.external_buffer) return true;
  for (const node& n : g.nodes) {
    if (const auto* c = std::get_if<child_node>(&n.params);
        c && c->graph && declares_external_buffer(*c->graph, name))
      return true;
    if (const auto* c = std::get_if<conditional_node>(&n.params))
      for (const graph_spec& b : c->bodies)
        if (declares_external_buffer(b, name)) return true;
  }
  return false;
}

void collect_readers(const graph_spec& g, std::string_view param, bool external,
                     const std::string& prefix, std::vector<std::string>& out) {
  for (const node& n : g.nodes) {
    const std::string path = prefix + n.name;
    bool reads = false;
    for_each_value(n, [&](const value& v) {
      if (const auto* p = std::get_if<param_ref>(&v.source); p && p->name == param) reads = true;
      // An external buffer is a parameter read as a buffer.
      if (const auto* b = std::get_if<buffer_ref>(&v.source); external && b && b->name == param)
        reads = true;
    });
    if (const auto* f = std::get_if<mem_free_node>(&n.params); external && f && f->buffer == param)
      reads = true;
    if (const auto* k = std::get_if<kernel_node>(&n.params)) {
      if (k->grid_from) reads |= k->grid_from->param == param;
      for (const shape_rule& r : k->shape_rules) reads |= r.param == param;
    }
    if (reads) out.push_back(path);
    if (const auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      collect_readers(*c->graph, param, external, nested_prefix(path, n), out);
    if (const auto* c = std::get_if<conditional_node>(&n.params))
      for (std::size_t b = 0; b < c->bodies.size(); ++b)
        collect_readers(c->bodies[b], param, external, nested_prefix(path, n, b), out);
  }
}
}  // namespace

std::vector<std::string> parameter_readers(const graph_spec& spec, std::string_view param) {
  std::vector<std::string> out;
  collect_readers(spec, param, declares_external_buffer(spec, param), "", out);
  return out;
}

}  // namespace cudag
