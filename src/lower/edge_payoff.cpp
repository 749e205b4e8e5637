// The measurement that decides whether a graph keeps its typed edges: the
// same graph instantiated twice, replayed interleaved so that a drift of
// the device's clocks weighs on both alike.
#include "cudag/edge_payoff.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/exec.hpp"

namespace cudag {
namespace {

void drop_kinds(graph_spec& g) {
  for (node& n : g.nodes) {
    n.dependency_kinds.clear();
    if (auto* c = std::get_if<child_node>(&n.params)) {
      if (c->graph && typed_edge_count(*c->graph) != 0) {
        auto copy = std::make_shared<graph_spec>(*c->graph);
        drop_kinds(*copy);
        c->graph = std::move(copy);
      }
    } else if (auto* cond = std::get_if<conditional_node>(&n.params)) {
      for (graph_spec& body : cond->bodies) drop_kinds(body);
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

graph_spec with_full_edges(graph_spec spec) {
  drop_kinds(spec);
  return spec;
}

std::size_t typed_edge_count(const graph_spec& spec) noexcept {
  std::size_t count = 0;
  for (const node& n : spec.nodes) {
    for (const edge_kind kind : n.dependency_kinds) count += kind != edge_kind::full ? 1 : 0;
    if (const auto* c = std::get_if<child_node>(&n.params); c && c->graph)
      count += typed_edge_count(*c->graph);
    else if (const auto* cond = std::get_if<conditional_node>(&n.params))
      for (const graph_spec& body : cond->bodies) count += typed_edge_count(body);
  }
  return count;
}

std::string edge_kind_choice::text() const {
  char line[256];
  if (typed_edges == 0) return "no typed edges: nothing to choose";
  std::snprintf(line, sizeof line,
                "typed edges: %zu, replay %.1f us; every edge full: %.1f us; %s (%.2fx)", typed_edges,
                typed_replay_us, full_replay_us,
                keep_typed ? "keep the typed edges" : "make every edge full",
                typed_replay_us > 0 ? full_replay_us / typed_replay_us : 0.0);
  return line;
}

edge_kind_choice choose_edge_kinds(const graph_spec& spec, std::span<const binding> bindings,
                                   cudaStream_t stream, int samples, int launches, double margin) {
  if (samples < 1 || launches < 1)
    throw error("choose_edge_kinds: samples and launches must be at least 1");
  edge_kind_choice choice;
  choice.typed_edges = typed_edge_count(spec);
  if (choice.typed_edges == 0) {
    choice.chosen = spec;
    return choice;
  }
  graph_spec full = with_full_edges(spec);
  exec typed_exec = instantiate(spec, bindings);
  exec full_exec = instantiate(full, bindings);
  typed_exec.upload(stream);
  full_exec.upload(stream);
  const auto replay_us = [&](exec& x) {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < launches; ++k) x.launch(stream);
    x.synchronize(stream);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
           launches;
  };
  (void)replay_us(typed_exec);  // warm both: the first replays pay for loading
  (void)replay_us(full_exec);
  std::vector<double> typed, full_times;
  for (int s = 0; s < samples; ++s) {
    if (s % 2 == 0) {
      typed.push_back(replay_us(typed_exec));
      full_times.push_back(replay_us(full_exec));
    } else {
      full_times.push_back(replay_us(full_exec));
      typed.push_back(replay_us(typed_exec));
    }
  }
  choice.typed_replay_us = median(typed);
  choice.full_replay_us = median(full_times);
  choice.keep_typed = choice.typed_replay_us < choice.full_replay_us * (1 - margin);
  choice.chosen = choice.keep_typed ? spec : std::move(full);
  return choice;
}

}  // namespace cudag
