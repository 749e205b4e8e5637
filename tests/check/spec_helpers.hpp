#pragma once
// Small builders of spec structs for the check-layer tests, and an assertion
// that a call is refused with a given message and node list.
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cudag/check.hpp"
#include "cudag/spec.hpp"

namespace cudag::check_test {

inline void some_host_function() {}

inline node make_node(std::string name, node_params params, std::vector<std::string> deps = {}) {
  node n;
  n.name = std::move(name);
  n.params = std::move(params);
  n.deps = std::move(deps);
  return n;
}

inline node empty(std::string name, std::vector<std::string> deps = {}) {
  return make_node(std::move(name), empty_node{}, std::move(deps));
}

template <class T>
value param(std::string name) {
  return value{type_of<T>(), param_ref{std::move(name)}};
}

template <class T>
value buffer(std::string name, std::size_t offset = 0) {
  return value{type_of<T>(), buffer_ref{std::move(name), offset}};
}

inline value condition(std::string name) {
  return value{type_of<cudaGraphConditionalHandle>(), condition_ref{std::move(name)}};
}

inline kernel_node kernel(std::vector<value> args = {}) {
  kernel_node k;
  k.function = reinterpret_cast<const void*>(&some_host_function);
  k.function_name = "some_kernel";
  k.grid = dim3(4, 1, 1);
  k.block = dim3(128, 1, 1);
  k.args = std::move(args);
  return k;
}

inline host_node host(std::vector<value> args = {}) {
  return host_node{std::make_shared<const host_function>([](std::span<const void* const>) {}),
                   std::move(args)};
}

inline mem_alloc_node alloc(std::string buffer_name, std::size_t bytes = 1024) {
  return mem_alloc_node{std::move(buffer_name), bytes, -1};
}

inline mem_free_node free_of(std::string buffer_name) { return mem_free_node{std::move(buffer_name)}; }

inline memset_node memset_of(value dst, std::size_t width = 256) {
  return memset_node{std::move(dst), make_literal(0u), 4, width, 1, 0};
}

inline conditional_node conditional(conditional_kind kind, std::string condition_name,
                                    std::vector<graph_spec> bodies) {
  return conditional_node{kind, std::move(condition_name), std::move(bodies)};
}

inline graph_spec graph(std::vector<node> nodes, std::vector<param_decl> params = {},
                        std::vector<condition_decl> conditions = {}, std::string name = {}) {
  graph_spec g;
  g.name = std::move(name);
  g.nodes = std::move(nodes);
  g.params = std::move(params);
  g.conditions = std::move(conditions);
  return g;
}

/// The oracle of the check layer's sort: Kahn's algorithm over a std::set of
/// ready nodes, lowest index first. dependencies[v]: the nodes v waits on.
inline std::vector<std::size_t> lowest_ready_first(
    const std::vector<std::vector<std::size_t>>& dependencies) {
  const std::size_t count = dependencies.size();
  std::vector<std::vector<std::size_t>> dependents(count);
  std::vector<std::size_t> waiting(count);
  std::set<std::size_t> ready;
  for (std::size_t v = 0; v < count; ++v) {
    for (const std::size_t u : dependencies[v]) dependents[u].push_back(v);
    waiting[v] = dependencies[v].size();
    if (waiting[v] == 0) ready.insert(v);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t u = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(u);
    for (const std::size_t w : dependents[u])
      if (--waiting[w] == 0) ready.insert(w);
  }
  return order;
}

template <class T>
param_decl declare(std::string name) {
  return param_decl{std::move(name), type_of<T>()};
}

inline condition_decl declare_condition(std::string name) { return condition_decl{std::move(name)}; }

/// `depth` while-loop nodes named "loop", each in the body of the one before,
/// each testing its own condition; an empty node "leaf" at the bottom. Free
/// it with dismantle(): its destructor would recurse `depth` levels.
inline graph_spec nested_loops(std::size_t depth) {
  graph_spec g = graph({empty("leaf")});
  for (std::size_t d = 0; d < depth; ++d) {
    const std::string go = "go" + std::to_string(d);
    std::vector<graph_spec> bodies;
    bodies.push_back(std::move(g));
    std::vector<node> nodes;  // not an initializer list: that would copy every level below
    nodes.push_back(make_node("loop", conditional(conditional_kind::while_loop, go, std::move(bodies))));
    g = graph(std::move(nodes), {}, {declare_condition(go)});
  }
  return g;
}

/// Takes a nested_loops() spec apart one level at a time.
inline void dismantle(graph_spec& g) {
  while (!g.nodes.empty()) {
    auto* c = std::get_if<conditional_node>(&g.nodes.front().params);
    if (!c || c->bodies.empty()) break;
    graph_spec inner = std::move(c->bodies.front());
    g = std::move(inner);
  }
}

/// The path of the node at nesting `depth` of nested_loops(): "loop/loop/...".
inline std::string loop_path(std::size_t depth) {
  std::string path = "loop";
  for (std::size_t d = 0; d < depth; ++d) path += "/loop";
  return path;
}

/// Runs `call`, expects a check_error whose what() contains every fragment
/// and whose nodes() equals `nodes`.
template <class Call>
void expect_rejected(Call&& call, std::initializer_list<std::string> fragments,
                     std::vector<std::string> nodes) {
  try {
    call();
    ADD_FAILURE() << "expected a check_error, but the call succeeded";
  } catch (const check_error& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message lacks \"" << fragment << "\": " << message;
    EXPECT_EQ(e.nodes(), nodes) << "message: " << message;
  }
}

}  // namespace cudag::check_test
