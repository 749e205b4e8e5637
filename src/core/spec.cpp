#include "cudag/spec.hpp"

#include <algorithm>

namespace cudag {

std::string_view kind_name(node_kind kind) noexcept {
  switch (kind) {
    case node_kind::kernel: return "kernel";
    case node_kind::memcpy: return "memcpy";
    case node_kind::memset: return "memset";
    case node_kind::host: return "host";
    case node_kind::child: return "child";
    case node_kind::captured: return "captured";
    case node_kind::empty: return "empty";
    case node_kind::event_record: return "event_record";
    case node_kind::event_wait: return "event_wait";
    case node_kind::mem_alloc: return "mem_alloc";
    case node_kind::mem_free: return "mem_free";
    case node_kind::conditional: return "conditional";
  }
  return "unknown";
}

std::string_view kind_name(conditional_kind kind) noexcept {
  switch (kind) {
    case conditional_kind::if_then: return "if";
    case conditional_kind::if_else: return "if_else";
    case conditional_kind::while_loop: return "while";
    case conditional_kind::switch_case: return "switch";
  }
  return "unknown";
}

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

}  // namespace cudag
