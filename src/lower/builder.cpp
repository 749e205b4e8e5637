#include "cudag/builder.hpp"

#include <algorithm>

#include "cudag/error.hpp"

namespace cudag {

const std::string& node_ref::name() const { return owner_->spec_.nodes[index_].name; }

builder::builder(std::string graph_name) { spec_.name = std::move(graph_name); }

void builder::declare_param(const std::string& name, const type_tag& type) {
  if (spec_.find_param(name))
    throw error("graph '" + spec_.name + "': parameter '" + name + "' declared twice");
  spec_.params.push_back({name, type});
}

condition_handle builder::condition(std::string name, unsigned default_value, bool assign_default) {
  const bool exists = std::any_of(spec_.conditions.begin(), spec_.conditions.end(),
                                  [&](const condition_decl& c) { return c.name == name; });
  if (exists) throw error("graph '" + spec_.name + "': condition '" + name + "' declared twice");
  spec_.conditions.push_back({name, default_value, assign_default});
  return {std::move(name)};
}

node_ref builder::add(std::string name, node_params params) {
  if (name.empty()) throw error("graph '" + spec_.name + "': a node needs a name");
  auto [it, inserted] = index_of_.try_emplace(name, spec_.nodes.size());
  if (!inserted)
    throw error("graph '" + spec_.name + "': duplicate node name '" + name + "'", cudaSuccess, {},
                name);
  spec_.nodes.push_back(cudag::node{std::move(name), std::move(params), {}});
  return node_ref(*this, it->second);
}

node_ref builder::add_kernel(std::string name, kernel_node n, const launch_config& config) {
  n.grid = config.grid;
  n.block = config.block;
  n.shared_bytes = config.shared_bytes;
  n.grid_from = config.grid_from;
  n.priority = config.priority;
  return add(std::move(name), std::move(n));
}

node_ref builder::child(std::string name, graph_spec graph) {
  return add(std::move(name), child_node{std::make_shared<const graph_spec>(std::move(graph))});
}

node_ref builder::empty(std::string name) { return add(std::move(name), empty_node{}); }

node_ref builder::add_conditional(std::string name, conditional_kind kind,
                                  const condition_handle& c, std::vector<graph_spec> bodies) {
  return add(std::move(name), conditional_node{kind, c.name, std::move(bodies)});
}

node_ref builder::if_then(std::string name, const condition_handle& c, graph_spec then_body) {
  std::vector<graph_spec> bodies;
  bodies.push_back(std::move(then_body));
  return add_conditional(std::move(name), conditional_kind::if_then, c, std::move(bodies));
}

node_ref builder::if_else(std::string name, const condition_handle& c, graph_spec then_body,
                          graph_spec else_body) {
  std::vector<graph_spec> bodies;
  bodies.push_back(std::move(then_body));
  bodies.push_back(std::move(else_body));
  return add_conditional(std::move(name), conditional_kind::if_else, c, std::move(bodies));
}

node_ref builder::while_loop(std::string name, const condition_handle& c, graph_spec body) {
  std::vector<graph_spec> bodies;
  bodies.push_back(std::move(body));
  return add_conditional(std::move(name), conditional_kind::while_loop, c, std::move(bodies));
}

node_ref builder::switch_case(std::string name, const condition_handle& c,
                              std::vector<graph_spec> cases) {
  return add_conditional(std::move(name), conditional_kind::switch_case, c, std::move(cases));
}

void builder::edge(const node_ref& from, const node_ref& to) {
  if (from.owner_ != this || to.owner_ != this)
    throw error("graph '" + spec_.name + "': edge " + from.name() + " -> " + to.name() +
                    " joins nodes of different graphs",
                cudaSuccess, {}, to.name());
  if (from.index_ == to.index_)
    throw error("graph '" + spec_.name + "': edge " + from.name() + " -> " + to.name() +
                    " is a cycle of one node",
                cudaSuccess, {}, to.name());
  auto& deps = spec_.nodes[to.index_].deps;
  const std::string& dep = spec_.nodes[from.index_].name;
  if (std::find(deps.begin(), deps.end(), dep) == deps.end()) deps.push_back(dep);
}

void builder::edge(std::string_view from, std::string_view to) {
  auto f = index_of_.find(std::string(from));
  auto t = index_of_.find(std::string(to));
  if (f == index_of_.end() || t == index_of_.end()) {
    const std::string_view unknown = f == index_of_.end() ? from : to;
    throw error("graph '" + spec_.name + "': edge " + std::string(from) + " -> " +
                    std::string(to) + " names unknown node '" + std::string(unknown) + "'",
                cudaSuccess, {}, std::string(unknown));
  }
  edge(node_ref(*this, f->second), node_ref(*this, t->second));
}

node_ref builder::node(std::string_view name) {
  auto it = index_of_.find(std::string(name));
  if (it == index_of_.end())
    throw error("graph '" + spec_.name + "': no node named '" + std::string(name) + "'");
  return node_ref(*this, it->second);
}

}  // namespace cudag
