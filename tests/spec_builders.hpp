#pragma once
// Small builders of spec structs, written out by hand as a spec's author
// would (no builder, no DSL): shared by the check-layer and diff tests.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cudag/spec.hpp"

namespace cudag::spec_builders {

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

/// A kernel node of `function` (named `function_name`), 4 blocks of 128.
inline kernel_node kernel_calling(const void* function, std::string function_name,
                                  std::vector<value> args) {
  kernel_node k;
  k.function = function;
  k.function_name = std::move(function_name);
  k.grid = dim3(4, 1, 1);
  k.block = dim3(128, 1, 1);
  k.args = std::move(args);
  return k;
}

inline memset_node memset_of(value dst, std::size_t width = 256) {
  return memset_node{std::move(dst), make_literal(0u), 4, width, 1, 0};
}

inline memcpy_node memcpy_of(value dst, value src, std::size_t bytes = 1024) {
  return memcpy_node{std::move(dst), std::move(src), bytes, cudaMemcpyDefault};
}

inline mem_alloc_node alloc(std::string buffer_name, std::size_t bytes = 1024) {
  return mem_alloc_node{std::move(buffer_name), bytes, -1};
}

inline mem_free_node free_of(std::string buffer_name) { return mem_free_node{std::move(buffer_name)}; }

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

inline child_node child_of(graph_spec g) {
  return child_node{std::make_shared<const graph_spec>(std::move(g))};
}

template <class T>
param_decl declare(std::string name, bool external_buffer = false) {
  return param_decl{std::move(name), type_of<T>(), external_buffer};
}

inline condition_decl declare_condition(std::string name, unsigned default_value = 0,
                                        bool assign_default = true) {
  return condition_decl{std::move(name), default_value, assign_default};
}

}  // namespace cudag::spec_builders
