#pragma once
// The check-layer tests' kernel and host nodes (the other builders of spec
// structs: spec_builders.hpp), an oracle of the sort, nested specs, and an
// assertion that a call is refused with a given message and node list.
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
#include "spec_builders.hpp"

namespace cudag::check_test {

using namespace cudag::spec_builders;

inline void some_host_function() {}

inline kernel_node kernel(std::vector<value> args = {}) {
  return kernel_calling(reinterpret_cast<const void*>(&some_host_function), "some_kernel",
                        std::move(args));
}

inline host_node host(std::vector<value> args = {}) {
  return host_node{std::make_shared<const host_function>([](std::span<const void* const>) {}),
                   std::move(args)};
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
