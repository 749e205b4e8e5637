#include "cudag/spec_writer.hpp"

#include "../check/check_passes.hpp"
#include "../check/spec_tree.hpp"

#include "cudag/check.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cudag {

namespace {

value to_value(const value_view& v) {
  switch (v.source) {
    case value_view::source_kind::literal: {
      literal lit;
      lit.bytes.resize(v.type.size);
      std::memcpy(lit.bytes.data(), v.bytes ? v.bytes : v.inline_bytes, v.type.size);
      return value{v.type, std::move(lit)};
    }
    case value_view::source_kind::param: return value{v.type, param_ref{std::string(v.name)}};
    case value_view::source_kind::buffer:
      return value{v.type, buffer_ref{std::string(v.name), v.offset_bytes}};
    case value_view::source_kind::condition:
      return value{v.type, condition_ref{std::string(v.name)}};
  }
  return value{v.type, literal{}};
}

std::vector<value> to_values(std::span<const value_view> views) {
  std::vector<value> out;
  out.reserve(views.size());
  for (const value_view& v : views) out.push_back(to_value(v));
  return out;
}

}  // namespace

void spec_writer::set_name(std::string_view graph_name) { spec_->name = graph_name; }

void spec_writer::reserve(std::size_t nodes) { spec_->nodes.reserve(nodes); }

node& spec_writer::append(std::string_view name) {
  node& n = spec_->nodes.emplace_back();
  n.name = name;
  return n;
}

void spec_writer::kernel(std::string_view name, const kernel_view& k) {
  kernel_node p;
  p.function = k.function;
  p.function_name = k.function_name;
  p.keep_alive = k.keep_alive;
  p.grid = k.grid;
  if (!k.grid_param.empty()) p.grid_from = grid_rule{std::string(k.grid_param), k.items_per_block};
  p.block = k.block;
  p.shared_bytes = k.shared_bytes;
  p.shape_rules.reserve(k.shape_rules.size());
  for (const shape_rule_view& r : k.shape_rules)
    p.shape_rules.push_back(shape_rule{r.dim, std::string(r.param), r.multiplier, r.divisor});
  p.args = to_values(k.args);
  p.accesses.assign(k.accesses.begin(), k.accesses.end());
  p.synchronizes_grid_dependencies = k.synchronizes_grid_dependencies;
  p.priority = k.priority;
  set_launch_attributes(p, k.attributes);
  append(name).params = std::move(p);
}

void spec_writer::memcpy(std::string_view name, const value_view& dst, const value_view& src,
                         std::size_t bytes, cudaMemcpyKind kind) {
  append(name).params = memcpy_node{to_value(dst), to_value(src), bytes, kind};
}

void spec_writer::memset(std::string_view name, const value_view& dst, const value_view& fill,
                         unsigned element_size, std::size_t width, std::size_t height,
                         std::size_t pitch_bytes) {
  append(name).params =
      memset_node{to_value(dst), to_value(fill), element_size, width, height, pitch_bytes};
}

void spec_writer::host(std::string_view name, std::shared_ptr<const host_function> function,
                       std::span<const value_view> args,
                       std::span<const access_declaration> accesses) {
  append(name).params = host_node{std::move(function), to_values(args),
                                  access_declarations(accesses.begin(), accesses.end())};
}

void spec_writer::captured(std::string_view name, std::shared_ptr<const capture_function> record,
                           std::span<const value_view> args, std::string_view what,
                           std::span<const access_declaration> accesses) {
  append(name).params = captured_node{std::move(record), to_values(args), std::string(what),
                                      access_declarations(accesses.begin(), accesses.end())};
}

void spec_writer::empty(std::string_view name) { append(name).params = empty_node{}; }

void spec_writer::event_record(std::string_view name, const value_view& event) {
  append(name).params = event_record_node{to_value(event)};
}

void spec_writer::event_wait(std::string_view name, const value_view& event) {
  append(name).params = event_wait_node{to_value(event)};
}

void spec_writer::mem_alloc(std::string_view name, std::string_view buffer, std::size_t bytes,
                            int device) {
  append(name).params = mem_alloc_node{std::string(buffer), bytes, device};
}

void spec_writer::mem_free(std::string_view name, std::string_view buffer) {
  append(name).params = mem_free_node{std::string(buffer)};
}

spec_writer spec_writer::child(std::string_view name) {
  auto graph = std::make_shared<graph_spec>();
  graph->name = "child";
  graph_spec& target = *graph;
  append(name).params = child_node{std::move(graph)};
  return spec_writer(target);
}

void spec_writer::conditional(std::string_view name, conditional_kind kind,
                              std::string_view condition, std::size_t bodies) {
  conditional_node c;
  c.kind = kind;
  c.condition = condition;
  c.bodies.resize(bodies);
  for (graph_spec& b : c.bodies) b.name = "body";
  append(name).params = std::move(c);
}

spec_writer spec_writer::body(std::size_t index) {
  return spec_writer(std::get<conditional_node>(spec_->nodes.back().params).bodies.at(index));
}

void spec_writer::depend(std::size_t node, std::string_view on) {
  spec_->nodes.at(node).deps.emplace_back(on);
}

void spec_writer::depend(std::size_t node, std::string_view on, edge_kind kind) {
  cudag::node& n = spec_->nodes.at(node);
  if (kind != edge_kind::full || !n.dependency_kinds.empty()) {
    n.dependency_kinds.resize(n.deps.size(), edge_kind::full);
    n.dependency_kinds.push_back(kind);
  }
  n.deps.emplace_back(on);
}

void spec_writer::param(std::string_view name, type_tag type) {
  spec_->params.push_back({std::string(name), type});
}

void spec_writer::condition(std::string_view name, unsigned default_value, bool assign_default) {
  for (const condition_decl& d : spec_->conditions)
    if (d.name == name) return;
  spec_->conditions.push_back({std::string(name), default_value, assign_default});
}

void refuse_races_of_bound_values(const graph_spec& spec, std::span<const bound_value_view> values) {
  std::vector<binding> bound;
  bound.reserve(values.size());
  for (const bound_value_view& v : values)
    bound.push_back({std::string(v.name), v.type, std::vector<std::byte>(v.bytes.begin(), v.bytes.end())});
  // The builder's exec asks the same pass (the first race, check()'s message).
  check_detail::check_races(check_detail::spec_tree(spec), bound);
}

}  // namespace cudag
