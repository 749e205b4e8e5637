// A spec run as stream work without a graph, the payoff measurement that
// compares it with graphs, and the one that decides whether a graph keeps
// its typed edges (edge_payoff.hpp). The walk is lowering's own
// (run_into_stream), so an eager run resolves values, checks and names nodes
// exactly as a graph of the same spec does.
#include "cudag/eager.hpp"
#include "cudag/edge_payoff.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "../check/checked_plan.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_api.hpp"

#include "exec_state.hpp"

namespace cudag {

struct eager_run::state {
  cudaStream_t stream = nullptr;
  std::vector<detail::node_state> nodes;  ///< host nodes' callables point into these
  detail::value_storage values;
  std::vector<std::shared_ptr<const void>> owned;
  std::shared_ptr<host_failure_sink> failures = std::make_shared<host_failure_sink>();
  bool pending = true;
};

eager_run::eager_run(std::unique_ptr<state> s) : state_(std::move(s)) {}
eager_run::eager_run(eager_run&&) noexcept = default;
eager_run& eager_run::operator=(eager_run&& other) noexcept {
  if (this != &other) {
    if (state_ && state_->pending) (void)native::api().stream_synchronize(state_->stream);
    state_ = std::move(other.state_);
  }
  return *this;
}
eager_run::~eager_run() {
  // Enqueued host functions still point into this run.
  if (state_ && state_->pending) (void)native::api().stream_synchronize(state_->stream);
}

void eager_run::synchronize() {
  if (!state_) throw error("eager run: used after it was moved from");
  const cudaError_t code = native::api().stream_synchronize(state_->stream);
  state_->pending = false;
  if (code != cudaSuccess) throw_cuda_error(code, "cudaStreamSynchronize", {});
  state_->failures->rethrow_if_failed();
}

eager_run run_eagerly(const graph_spec& spec, std::span<const binding> bindings,
                      cudaStream_t stream) {
  const check_detail::checked_plans plans = check_detail::check_and_plan(spec, bindings);
  std::vector<detail::param_state> params;
  detail::name_map<std::uint32_t> index;
  detail::bind_params(spec, bindings, params, index);
  auto st = std::make_unique<eager_run::state>();
  st->stream = stream;
  eager_run run(std::move(st));
  eager_run::state& s = *run.state_;
  unique_stream no_capture;  // an eager run records no captured node into a graph
  const std::vector<void*> unfreed = detail::run_into_stream(
      spec, plans, stream, {params, index, s.nodes, s.values, s.owned, s.failures, no_capture});
  for (void* p : unfreed) native::run_mem_free(stream, p, spec.name);
  return run;
}

// ------------------------------------------------------------------- payoff --
namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
double time_us(F&& f) {
  const auto start = clock_type::now();
  f();
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string describe(std::span<const binding> shape) {
  std::string out;
  for (const binding& b : shape) {
    if (!out.empty()) out += ' ';
    out += b.name + '=';
    if (b.type.is_integral && !b.bytes.empty() && b.bytes.size() <= 8)
      out += std::to_string(detail::integral_value({b.bytes, b.type.is_signed}));
    else
      out += "(" + std::to_string(b.bytes.size()) + " bytes)";
  }
  return out;
}

std::vector<binding> merged(std::span<const binding> base, std::span<const binding> shape) {
  std::vector<binding> out(base.begin(), base.end());
  for (const binding& b : shape) {
    auto it = std::find_if(out.begin(), out.end(), [&](const binding& o) { return o.name == b.name; });
    if (it == out.end()) out.push_back(b);
    else *it = b;
  }
  return out;
}

void wait(cudaStream_t stream) {
  const cudaError_t code = native::api().stream_synchronize(stream);
  if (code != cudaSuccess) throw_cuda_error(code, "cudaStreamSynchronize", {});
}

}  // namespace

payoff_report measure_payoff(const graph_spec& spec, std::span<const binding> bindings,
                             std::span<const std::vector<binding>> shapes, cudaStream_t stream,
                             int repetitions) {
  if (repetitions < 1) throw error("measure_payoff: repetitions must be at least 1");
  payoff_report report;
  exec shared = instantiate(spec, bindings);
  shared.upload(stream);
  for (const std::vector<binding>& shape : shapes) {
    const std::vector<binding> all = merged(bindings, shape);
    payoff_row row;
    row.shape = describe(shape);
    std::vector<double> eager, build, replay, reshape, reshaped;
    std::optional<exec> dedicated;
    for (int r = 0; r < repetitions; ++r) {
      // Three ways, in an order that turns each repetition.
      for (int k = 0; k < 3; ++k) switch ((k + r) % 3) {
          case 0:
            eager.push_back(time_us([&] { run_eagerly(spec, all, stream).synchronize(); }));
            break;
          case 1:
            if (dedicated && r % 3 != 0) {
              replay.push_back(time_us([&] {
                dedicated->launch(stream);
                dedicated->synchronize(stream);
              }));
              break;
            }
            dedicated.reset();
            build.push_back(time_us([&] {
              dedicated.emplace(instantiate(spec, all));
              dedicated->upload(stream);
              wait(stream);
            }));
            break;
          default:
            (void)shared.reshape(bindings);  // from the first shape, untimed
            reshape.push_back(time_us([&] { (void)shared.reshape(shape); }));
            reshaped.push_back(time_us([&] {
              shared.launch(stream);
              shared.synchronize(stream);
            }));
        }
    }
    if (replay.empty()) {  // one repetition: replay the exec built
      replay.push_back(time_us([&] {
        dedicated->launch(stream);
        dedicated->synchronize(stream);
      }));
    }
    row.eager_us = median(eager);
    row.graph_build_us = median(build);
    row.graph_replay_us = median(replay);
    row.reshape_us = median(reshape);
    row.reshaped_replay_us = median(reshaped);
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string payoff_report::text() const {
  std::string out =
      "| shape | eager us | graph: build us | graph: replay us | reshape us | replay after reshape us |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  char line[256];
  for (const payoff_row& r : rows) {
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", r.shape.c_str(),
                  r.eager_us, r.graph_build_us, r.graph_replay_us, r.reshape_us,
                  r.reshaped_replay_us);
    out += line;
  }
  for (const payoff_row& r : rows) {
    const double saved = r.eager_us - r.graph_replay_us;
    if (saved <= 0) {
      std::snprintf(line, sizeof line, "%s: a replay is not faster than eager launches here\n",
                    r.shape.c_str());
    } else {
      std::snprintf(line, sizeof line,
                    "%s: a replay saves %.1f us; a graph of its own pays off after %.0f replays, "
                    "a reshape of a shared one after %.0f\n",
                    r.shape.c_str(), saved, std::ceil(r.graph_build_us / saved),
                    std::ceil(r.reshape_us / std::max(1e-9, r.eager_us - r.reshaped_replay_us)));
    }
    out += line;
  }
  return out;
}

}  // namespace cudag

// ------------------------------------------------------- edge-kind payoff --
// The same graph instantiated twice, replayed interleaved so that a drift of
// the device's clocks weighs on both alike.
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
