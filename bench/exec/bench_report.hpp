#pragma once
// Shared by the GPU benchmarks (bench_exec, bench_lower): interleaved timing
// with warm-up, medians with their spread, a printed table, a JSON report
// (--json FILE), and the check that a timed graph computes the right thing.
//
// Exit codes of the benchmarks:
//   0  measured and every timed graph verified; or no usable GPU ("no GPU:
//      nothing measured" is printed, and nothing is measured)
//   1  a CUDA call failed
//   2  bad command line
//   3  a timed graph computed a wrong result (printed with the buffer,
//      element, value and the expected value)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

inline const char* program_name = "bench";

#define BENCH_CHECK(call)                                                                 \
  do {                                                                                    \
    const cudaError_t bench_code_ = (call);                                               \
    if (bench_code_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s: %s:%d %s failed: %s\n", ::bench::program_name, __FILE__, \
                   __LINE__, #call, cudaGetErrorName(bench_code_));                       \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

// ------------------------------------------------------------ command line --
struct command_line {
  std::string json_path;                ///< --json FILE: also write the report there
  std::vector<std::string> positional;  ///< the other arguments, in order
  std::string text;                     ///< the whole command line, as typed
};

inline std::string quoted(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\"'\\$") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Parses --json FILE (or --json=FILE) and --help; the rest is positional.
inline command_line parse_command_line(int argc, char** argv, const char* usage) {
  command_line out;
  for (int i = 0; i < argc; ++i) {
    if (i) out.text += ' ';
    out.text += quoted(argv[i]);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    } else if (a == "--json" && i + 1 < argc) {
      out.json_path = argv[++i];
    } else if (a.rfind("--json=", 0) == 0 && a.size() > 7) {
      out.json_path = a.substr(7);
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "%s: unknown or incomplete option '%s'\n%s", program_name, a.c_str(), usage);
      std::exit(2);
    } else {
      out.positional.push_back(a);
    }
  }
  return out;
}

/// A positive integer argument, or exit(2) naming it.
inline int positive_argument(const command_line& cl, std::size_t index, int fallback, const char* what) {
  if (index >= cl.positional.size()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(cl.positional[index].c_str(), &end, 10);
  if (*end != '\0' || v <= 0 || v > 1000000) {
    std::fprintf(stderr, "%s: %s must be a positive integer, not '%s'\n", program_name, what,
                 cl.positional[index].c_str());
    std::exit(2);
  }
  return int(v);
}

// ------------------------------------------------------------------ timing --
struct summary {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  std::size_t samples = 0;
  /// The samples in the order of their rounds, where the sides were timed
  /// in the same rounds (interleaved()): sample i of two sides ran in round
  /// i, on the host in the same state, so their ratio is a paired one.
  std::vector<double> by_round;
};

/// Quantile with linear interpolation between order statistics.
inline double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * double(sorted.size() - 1);
  const std::size_t lo = std::size_t(at);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - double(lo));
}

inline summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  summary s;
  s.samples = v.size();
  if (v.empty()) return s;
  s.median = quantile(v, 0.5);
  s.q1 = quantile(v, 0.25);
  s.q3 = quantile(v, 0.75);
  s.min = v.front();
  s.max = v.back();
  return s;
}

/// summarize() of each side's samples, taken in the same rounds, keeping
/// them in round order (summary::by_round).
inline std::vector<summary> summarize_rounds(std::vector<std::vector<double>> samples) {
  std::vector<summary> out;
  for (auto& v : samples) {
    out.push_back(summarize(v));
    out.back().by_round = std::move(v);
  }
  return out;
}

/// One side of a comparison. `run` is timed; `before`, if given, runs
/// untimed just before each run of this side (it releases what the previous
/// run made), so that what the last timed run made is still there afterwards
/// for the check of its result.
struct side {
  std::function<void()> run;
  std::function<void()> before = {};
};

/// Runs each side `warmup` times untimed, then `rounds` timed rounds, each
/// in its own order: a seeded shuffle, so that every side runs in every
/// position and after every other side (a rotation would always put the
/// same side before a given one, and what a side leaves behind, a pending
/// copy or a whole-graph update, would weigh on one neighbour only: it made
/// one cudaGraphExecKernelNodeSetParams after a cudaMemcpyAsync look 2x
/// slower). Microseconds.
inline std::vector<summary> interleaved(int rounds, int warmup, const std::vector<side>& sides) {
  const std::size_t n = sides.size();
  for (int w = 0; w < warmup; ++w)
    for (const side& s : sides) {
      if (s.before) s.before();
      s.run();
    }
  std::vector<std::vector<double>> samples(n);
  std::vector<std::size_t> order(n);
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    for (std::size_t k = n; k > 1; --k) {  // Fisher-Yates with a splitmix64 stream
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      std::swap(order[k - 1], order[std::size_t(z % k)]);
    }
    for (const std::size_t k : order) {
      const side& s = sides[k];
      if (s.before) s.before();
      const auto start = std::chrono::steady_clock::now();
      s.run();
      const auto stop = std::chrono::steady_clock::now();
      samples[k].push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
  }
  return summarize_rounds(std::move(samples));
}

// ------------------------------------------------------------ verification --
/// The expected content of one device buffer of `elements` floats after one
/// launch, every element equal to `value`.
struct expectation {
  const char* name;
  float* buffer;
  float value;
};

/// Zeroes every buffer, runs `launch` on `stream` once, synchronizes, copies
/// the buffers back and compares every element with its expected value (the
/// sums are of small integers: exact in float). Prints and exits with code 3
/// on a mismatch; returns `what` to be listed as verified.
inline std::string verify(const std::string& what, const std::function<void(cudaStream_t)>& launch,
                          cudaStream_t stream, const std::vector<expectation>& expected, int elements) {
  for (const expectation& e : expected)
    BENCH_CHECK(cudaMemsetAsync(e.buffer, 0, sizeof(float) * std::size_t(elements), stream));
  launch(stream);
  BENCH_CHECK(cudaStreamSynchronize(stream));
  BENCH_CHECK(cudaGetLastError());
  std::vector<float> host(std::size_t(elements), 0.0f);
  for (const expectation& e : expected) {
    BENCH_CHECK(cudaMemcpy(host.data(), e.buffer, sizeof(float) * host.size(), cudaMemcpyDeviceToHost));
    for (int i = 0; i < elements; ++i)
      if (host[std::size_t(i)] != e.value) {
        std::fprintf(stderr,
                     "%s: WRONG RESULT after timing '%s': %s[%d] is %g, expected %g (computed on "
                     "the CPU)\n",
                     program_name, what.c_str(), e.name, i, double(host[std::size_t(i)]),
                     double(e.value));
        std::exit(3);
      }
  }
  return what;
}

// ------------------------------------------------------------------ report --
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

inline std::string json_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

inline std::string json_summary(const summary& s) {
  return "{\"median\": " + json_number(s.median) + ", \"q1\": " + json_number(s.q1) +
         ", \"q3\": " + json_number(s.q3) + ", \"min\": " + json_number(s.min) +
         ", \"max\": " + json_number(s.max) + ", \"samples\": " + std::to_string(s.samples) + "}";
}

/// One comparison: the subject (cudag, the DSL) against a baseline (the
/// raw CUDA calls doing the same), both timed in one interleaved series.
struct row {
  std::string operation;
  std::string baseline;  ///< what the baseline does
  summary base;
  summary subject;
  std::string goal;  ///< "" or e.g. "<= 1.05"
};

class report {
 public:
  report(std::string program, std::string subject_name, std::string baseline_name)
      : program_(std::move(program)), subject_(std::move(subject_name)),
        baseline_(std::move(baseline_name)) {}

  /// Records the device, the date and the command line.
  void describe_machine(const command_line& cl) {
    command_ = cl.text;
    date_ = utc_now();
    int device = 0;
    BENCH_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    BENCH_CHECK(cudaGetDeviceProperties(&prop, device));
    device_ = prop.name;
    int driver = 0, runtime = 0;
    BENCH_CHECK(cudaDriverGetVersion(&driver));
    BENCH_CHECK(cudaRuntimeGetVersion(&runtime));
    versions_ = "CUDA driver API " + std::to_string(driver / 1000) + "." +
                std::to_string(driver % 1000 / 10) + ", runtime " + std::to_string(runtime / 1000) +
                "." + std::to_string(runtime % 1000 / 10);
  }
  /// A setting of the run (nodes, repetitions, ...), as a JSON value.
  void setting(std::string key, std::string json_value) {
    settings_.emplace_back(std::move(key), std::move(json_value));
  }
  void add(row r) { rows_.push_back(std::move(r)); }
  /// An extra table (its rows as JSON objects) for the JSON report.
  void extra(std::string key, std::string json_value) {
    extras_.emplace_back(std::move(key), std::move(json_value));
  }
  void verified(std::string what) { verified_.push_back(std::move(what)); }

  void print_header() const {
    std::printf("%s on %s (%s), %s\ncommand: %s\n", program_.c_str(), device_.c_str(),
                versions_.c_str(), date_.c_str(), command_.c_str());
    for (const auto& [k, v] : settings_) std::printf("  %s: %s\n", k.c_str(), v.c_str());
    std::printf("\n");
  }

  /// Markdown table: medians, quartiles and extremes of both sides, ratio of medians.
  void print_table() const {
    std::printf("| operation | %s: what | %s us median [q1, q3] (min-max) | %s us median [q1, q3] "
                "(min-max) | %s/%s | goal |\n",
                baseline_.c_str(), baseline_.c_str(), subject_.c_str(), subject_.c_str(),
                baseline_.c_str());
    std::printf("| --- | --- | ---: | ---: | ---: | --- |\n");
    for (const row& r : rows_)
      std::printf("| %s | %s | %s | %s | %.3f | %s |\n", r.operation.c_str(), r.baseline.c_str(),
                  cell(r.base).c_str(), cell(r.subject).c_str(), ratio(r), r.goal.c_str());
    std::printf("\n");
  }

  void print_verified() const {
    std::printf("verified after timing (launched once, compared with the CPU's expectation):\n");
    for (const std::string& v : verified_) std::printf("  ok: %s\n", v.c_str());
  }

  /// Writes the JSON report if --json was given; exit(1) if it cannot.
  void write_json(const command_line& cl) const {
    if (cl.json_path.empty()) return;
    std::string j = "{\n";
    j += "  \"program\": " + json_string(program_) + ",\n";
    j += "  \"measured\": true,\n";
    j += "  \"device\": " + json_string(device_) + ",\n";
    j += "  \"versions\": " + json_string(versions_) + ",\n";
    j += "  \"date\": " + json_string(date_) + ",\n";
    j += "  \"command\": " + json_string(command_) + ",\n";
    j += "  \"unit\": \"us\",\n";
    for (const auto& [k, v] : settings_) j += "  " + json_string(k) + ": " + v + ",\n";
    j += "  \"subject\": " + json_string(subject_) + ",\n";
    j += "  \"baseline\": " + json_string(baseline_) + ",\n";
    j += "  \"rows\": [\n";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const row& r = rows_[i];
      j += "    {\"operation\": " + json_string(r.operation) + ", \"baseline\": " +
           json_string(r.baseline) + ",\n     \"baseline_us\": " + json_summary(r.base) +
           ",\n     \"subject_us\": " + json_summary(r.subject) +
           ",\n     \"ratio_of_medians\": " + json_number(ratio(r)) +
           ", \"goal\": " + json_string(r.goal) + "}" + (i + 1 < rows_.size() ? ",\n" : "\n");
    }
    j += "  ],\n";
    for (const auto& [k, v] : extras_) j += "  " + json_string(k) + ": " + v + ",\n";
    j += "  \"verified\": [";
    for (std::size_t i = 0; i < verified_.size(); ++i)
      j += (i ? ", " : "") + json_string(verified_[i]);
    j += "]\n}\n";
    write_file(cl.json_path, j);
    std::printf("JSON report written to %s\n", cl.json_path.c_str());
  }

 private:
  static double ratio(const row& r) { return r.base.median > 0 ? r.subject.median / r.base.median : 0; }
  static std::string cell(const summary& s) {
    char text[128];
    const int digits = s.median < 100 ? 2 : 1;
    std::snprintf(text, sizeof text, "%.*f [%.*f, %.*f] (%.*f-%.*f)", digits, s.median, digits, s.q1,
                  digits, s.q3, digits, s.min, digits, s.max);
    return text;
  }

 public:
  static void write_file(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "%s: cannot write %s\n", program_name, path.c_str());
      std::exit(1);
    }
  }

 private:
  std::string program_, subject_, baseline_;
  std::string device_, versions_, date_, command_;
  std::vector<std::pair<std::string, std::string>> settings_, extras_;
  std::vector<row> rows_;
  std::vector<std::string> verified_;
};

/// Without a usable device: says so (naming CUDA's answer), writes a JSON
/// report saying nothing was measured if --json was given, and returns true
/// (the caller then exits 0).
inline bool no_gpu(const command_line& cl) {
  int devices = 0;
  const cudaError_t code = cudaGetDeviceCount(&devices);
  if (code == cudaSuccess && devices > 0) return false;
  const std::string why = code != cudaSuccess
                              ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(code)
                              : std::string("cudaGetDeviceCount: 0 devices");
  (void)cudaGetLastError();
  std::printf("%s: no GPU: nothing measured (%s)\n", program_name, why.c_str());
  if (!cl.json_path.empty())
    report::write_file(cl.json_path, "{\n  \"program\": " + json_string(program_name) +
                                         ",\n  \"measured\": false,\n  \"reason\": " +
                                         json_string("no GPU: " + why) + ",\n  \"date\": " +
                                         json_string(utc_now()) + ",\n  \"command\": " +
                                         json_string(cl.text) + "\n}\n");
  return true;
}

}  // namespace bench
