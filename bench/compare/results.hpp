#pragma once
// bench_compare's results: one record per (section, shape, nodes, method),
// the ratios with their goals, printed as Markdown tables and written as
// JSON (bench/compare/plot.py draws them).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_report.hpp"

namespace compare {

struct result {
  std::string section;  ///< "build", "build+instantiate", "first launch", "replay", "rebind 1", ...
  std::string shape;    ///< shape key ("chain", ...) or "" where none applies
  int nodes = 0;        ///< nodes (iterations for "while loop")
  std::string method;   ///< "hand-written", "builder", "DSL", "stream capture", ...
  bench::summary us;    ///< microseconds
};

struct ratio_row {
  std::string section, shape;
  int nodes = 0;
  std::string what;  ///< "builder / hand-written", ...
  double ratio = 0;
  std::string goal;  ///< "" or "<= 1.25", ">= 4", ...
  int met = -1;      ///< -1 no goal, 0 missed, 1 met
  /// The per-round ratios where both sides were timed in the same rounds (no
  /// samples where not): a host that changes speed between rounds moves
  /// both sides of a round together, where it can make the ratio of medians
  /// compare a fast round of one side with a slow one of the other.
  bench::summary paired;
};

class results {
 public:
  void add(std::string section, std::string shape, int nodes, std::string method, const bench::summary& s) {
    all_.push_back({std::move(section), std::move(shape), nodes, std::move(method), s});
  }
  [[nodiscard]] const result* find(const std::string& section, const std::string& shape, int nodes,
                                   const std::string& method) const {
    for (const result& r : all_)
      if (r.section == section && r.shape == shape && r.nodes == nodes && r.method == method) return &r;
    return nullptr;
  }
  /// Ratio of medians subject / base (both in `section`); with a goal
  /// "<= x" or ">= x" on that ratio, whether it is met. Returns the ratio
  /// (0 where a side is missing).
  double ratio(const std::string& section, const std::string& shape, int nodes, const std::string& subject,
               const std::string& base, const std::string& goal = "") {
    const result* s = find(section, shape, nodes, subject);
    const result* b = find(section, shape, nodes, base);
    if (!s || !b || b->us.median <= 0) return 0;
    ratio_row r{section, shape, nodes, subject + " / " + base, s->us.median / b->us.median, goal, -1, {}};
    const std::vector<double>& over = s->us.by_round;
    const std::vector<double>& under = b->us.by_round;
    if (!over.empty() && over.size() == under.size()) {
      std::vector<double> each;
      for (std::size_t i = 0; i < over.size(); ++i)
        if (under[i] > 0) each.push_back(over[i] / under[i]);
      r.paired = bench::summarize(std::move(each));
    }
    if (goal.size() > 3) {
      const double limit = std::strtod(goal.c_str() + 3, nullptr);
      r.met = goal.rfind("<=", 0) == 0 ? r.ratio <= limit : r.ratio >= limit;
    }
    ratios_.push_back(r);
    return r.ratio;
  }
  void verified(std::string what) { verified_.push_back(std::move(what)); }
  void note(std::string what) { notes_.push_back(std::move(what)); }
  void setting(std::string key, std::string json_value) { settings_.emplace_back(std::move(key), std::move(json_value)); }

  /// A Markdown table of one section: a row per (shape, nodes), a column
  /// per method (median [q1, q3] us), in the order they were added.
  void print_section(const std::string& section, const std::string& title, const char* unit = "us") const {
    std::vector<std::string> methods;
    std::vector<std::pair<std::string, int>> rows;
    for (const result& r : all_) {
      if (r.section != section) continue;
      if (std::find(methods.begin(), methods.end(), r.method) == methods.end()) methods.push_back(r.method);
      const std::pair<std::string, int> key{r.shape, r.nodes};
      if (std::find(rows.begin(), rows.end(), key) == rows.end()) rows.push_back(key);
    }
    if (rows.empty()) return;
    std::printf("### %s\n\n| shape | %s |", title.c_str(), section.rfind("while", 0) == 0 ? "iterations" : "nodes");
    for (const std::string& m : methods) std::printf(" %s %s median [q1, q3] |", m.c_str(), unit);
    std::printf("\n| --- | ---: |");
    for (std::size_t i = 0; i < methods.size(); ++i) std::printf(" ---: |");
    std::printf("\n");
    for (const auto& [shape, nodes] : rows) {
      std::printf("| %s | %d |", shape.c_str(), nodes);
      for (const std::string& m : methods) {
        const result* r = find(section, shape, nodes, m);
        if (!r) {
          std::printf(" - |");
          continue;
        }
        const int digits = r->us.median < 10 ? 2 : r->us.median < 1000 ? 1 : 0;
        std::printf(" %.*f [%.*f, %.*f] |", digits, r->us.median, digits, r->us.q1, digits, r->us.q3);
      }
      std::printf("\n");
    }
    std::printf("\n");
  }

  /// The ratios that carry a goal, then (all = true) every ratio.
  void print_ratios(bool all) const {
    std::printf("| section | shape | nodes | ratio of medians | value | goal | met | round by round: median [q1, q3] |\n"
                "| --- | --- | ---: | --- | ---: | --- | --- | --- |\n");
    for (const ratio_row& r : ratios_) {
      if (!all && r.met < 0) continue;
      char paired[64] = "";
      if (r.paired.samples > 0)
        std::snprintf(paired, sizeof paired, "%.3f [%.3f, %.3f]", r.paired.median, r.paired.q1, r.paired.q3);
      std::printf("| %s | %s | %d | %s | %.3f | %s | %s | %s |\n", r.section.c_str(), r.shape.c_str(), r.nodes,
                  r.what.c_str(), r.ratio, r.goal.c_str(), r.met < 0 ? "" : r.met ? "yes" : "NO", paired);
    }
    std::printf("\n");
  }

  void print_verified() const {
    std::printf("verified after timing (launched once on zeroed buffers, every slot compared with the CPU's "
                "expectation): %zu graphs\n",
                verified_.size());
    for (const std::string& v : verified_) std::printf("  ok: %s\n", v.c_str());
  }
  void print_notes() const {
    for (const std::string& n : notes_) std::printf("note: %s\n", n.c_str());
  }

  [[nodiscard]] std::string json(const std::vector<std::pair<std::string, std::string>>& head) const {
    std::string j = "{\n";
    for (const auto& [k, v] : head) j += "  " + bench::json_string(k) + ": " + v + ",\n";
    for (const auto& [k, v] : settings_) j += "  " + bench::json_string(k) + ": " + v + ",\n";
    j += "  \"unit\": \"us\",\n  \"results\": [\n";
    for (std::size_t i = 0; i < all_.size(); ++i) {
      const result& r = all_[i];
      j += "    {\"section\": " + bench::json_string(r.section) + ", \"shape\": " + bench::json_string(r.shape) +
           ", \"nodes\": " + std::to_string(r.nodes) + ", \"method\": " + bench::json_string(r.method) +
           ", \"us\": " + bench::json_summary(r.us) + "}" + (i + 1 < all_.size() ? ",\n" : "\n");
    }
    j += "  ],\n  \"ratios\": [\n";
    for (std::size_t i = 0; i < ratios_.size(); ++i) {
      const ratio_row& r = ratios_[i];
      j += "    {\"section\": " + bench::json_string(r.section) + ", \"shape\": " + bench::json_string(r.shape) +
           ", \"nodes\": " + std::to_string(r.nodes) + ", \"what\": " + bench::json_string(r.what) +
           ", \"ratio_of_medians\": " + bench::json_number(r.ratio) + ", \"goal\": " + bench::json_string(r.goal) +
           ", \"met\": " + (r.met < 0 ? "null" : r.met ? "true" : "false") +
           (r.paired.samples > 0 ? ", \"paired\": {\"median\": " + bench::json_number(r.paired.median) +
                                       ", \"q1\": " + bench::json_number(r.paired.q1) +
                                       ", \"q3\": " + bench::json_number(r.paired.q3) + "}"
                                 : std::string()) +
           "}" +
           (i + 1 < ratios_.size() ? ",\n" : "\n");
    }
    j += "  ],\n  \"notes\": [";
    for (std::size_t i = 0; i < notes_.size(); ++i) j += (i ? ", " : "") + bench::json_string(notes_[i]);
    j += "],\n  \"verified\": [";
    for (std::size_t i = 0; i < verified_.size(); ++i) j += (i ? ", " : "") + bench::json_string(verified_[i]);
    j += "]\n}\n";
    return j;
  }

 private:
  std::vector<result> all_;
  std::vector<ratio_row> ratios_;
  std::vector<std::string> verified_, notes_;
  std::vector<std::pair<std::string, std::string>> settings_;
};

}  // namespace compare
