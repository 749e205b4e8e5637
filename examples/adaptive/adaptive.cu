// Device-side dispatch, declared with the compile-time DSL: every replay
// disturbs a field, measures its largest value on the device, and an IF/ELSE
// node picks the expensive path (two smoothing sweeps and a halving) when
// that error estimate is above a threshold, the cheap path (one shrink)
// otherwise. The decision is made by a kernel from the data; no value goes
// back to the host between replays. The threshold is rebound halfway.
//
// The CPU makes the same decisions from the inputs alone, in the same float
// operations; the GPU must agree on every decision of every replay (logged
// on the device) and on the final field, and both paths must have been
// taken. Without a GPU the graph is still checked and drawn, and the program
// says that nothing ran.
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/dsl.hpp"

namespace {

constexpr int cells = 4096;   // the field
constexpr int block = 256;
constexpr int replays = 200;  // graph launches
constexpr float first_threshold = 0.5f, second_threshold = 0.3f;  // rebound at replays / 2

/// A well-mixed hash of an integer (same on host and device).
__host__ __device__ unsigned mix(unsigned v) {
  v ^= v >> 16;
  v *= 0x7feb352du;
  v ^= v >> 15;
  v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}

/// The disturbance of replay `step` at cell i: every 8th cell (shifted by
/// the step) gets a kick of 0, 0.25, ... 1.0, sign alternating.
__host__ __device__ float kick(int step, int i) {
  if ((i + step) % 8 != 0) return 0.0f;
  const float size = float(mix(unsigned(step)) % 5u) * 0.25f;
  return (i / 8) % 2 ? size : -size;
}

// The arithmetic is spelled with round-to-nearest intrinsics, in the order
// the CPU uses, so that nothing is contracted into an FMA: the GPU computes
// exactly what the CPU does, and the two must make the same decisions.
__global__ void disturb(float* x, int n, const int* step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __fadd_rn(x[i], kick(*step, i));
}

/// Largest |x| as float bits (non-negative floats order like their bits).
__global__ void estimate(const float* x, int n, unsigned* error_bits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(error_bits, __float_as_uint(fabsf(x[i])));
}

/// Picks the path of this replay, logs it, counts the replay.
__global__ void decide(cudaGraphConditionalHandle expensive, const unsigned* error_bits,
                       float threshold, int* step, unsigned* decisions) {
  const unsigned take = __uint_as_float(*error_bits) > threshold ? 1u : 0u;
  decisions[*step] = take;
  ++*step;
  cudaGraphSetConditional(expensive, take);
}

/// out[i] = (in[i-1] + in[i+1] + 2 in[i]) / 4, periodic.
__global__ void smooth(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float sides = __fadd_rn(in[(i + n - 1) % n], in[(i + 1) % n]);
  out[i] = __fmul_rn(0.25f, __fadd_rn(sides, __fmul_rn(2.0f, in[i])));
}

__global__ void scale(float* x, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __fmul_rn(x[i], factor);
}

using namespace cudag::dsl;
constexpr auto x = param<"x", float*>;
constexpr auto scratch = param<"scratch", float*>;
constexpr auto error_bits = param<"error_bits", unsigned*>;
constexpr auto step = param<"step", int*>;
constexpr auto decisions = param<"decisions", unsigned*>;
constexpr auto threshold = param<"threshold", float>;
constexpr auto expensive = condition<"expensive">;  // reset to 0 at every launch
constexpr int grid = cells / block;

// clang-format off
inline constexpr auto careful = graph(
    kernel<"smooth_there", smooth>(grid, block, x, scratch, cells),
    kernel<"smooth_back", smooth>(grid, block, scratch, x, cells),
    kernel<"halve", scale>(grid, block, x, cells, 0.5f),
    chain<"smooth_there", "smooth_back", "halve">);
inline constexpr auto quick = graph(
    kernel<"shrink", scale>(grid, block, x, cells, 0.75f));
inline constexpr auto adaptive_step = graph(
    kernel<"disturb", disturb>(grid, block, x, cells, step),
    memset<"clear_error">(error_bits, 0u, 1),
    kernel<"estimate", estimate>(grid, block, x, cells, error_bits),
    kernel<"decide", decide>(1, 1, expensive, error_bits, threshold, step, decisions),
    if_else<"dispatch">(expensive, careful, quick),
    chain<"disturb", "estimate", "decide", "dispatch">,
    edge<"clear_error", "estimate">);
// clang-format on

std::vector<float> initial_field() {
  std::vector<float> v(cells);
  for (int i = 0; i < cells; ++i) v[i] = float(int(mix(unsigned(i) + 12345u) % 201u) - 100) / 1024.0f;
  return v;
}

struct cpu_run {
  std::vector<float> x;
  std::vector<unsigned> decisions;
};

/// The same replays on the CPU, from the inputs alone.
cpu_run reference() {
  cpu_run r{initial_field(), {}};
  std::vector<float>& v = r.x;
  std::vector<float> tmp(cells);
  auto smooth_cpu = [](const std::vector<float>& in, std::vector<float>& out) {
    for (int i = 0; i < cells; ++i) {
      const float sides = in[(i + cells - 1) % cells] + in[(i + 1) % cells];
      out[i] = 0.25f * (sides + 2.0f * in[i]);
    }
  };
  for (int s = 0; s < replays; ++s) {
    const float limit = s < replays / 2 ? first_threshold : second_threshold;
    float largest = 0.0f;
    for (int i = 0; i < cells; ++i) {
      v[i] = v[i] + kick(s, i);
      largest = std::fmax(largest, std::fabs(v[i]));
    }
    const unsigned take = largest > limit ? 1u : 0u;
    r.decisions.push_back(take);
    if (take) {
      smooth_cpu(v, tmp);
      smooth_cpu(tmp, v);
      for (float& e : v) e = e * 0.5f;
    } else {
      for (float& e : v) e = e * 0.75f;
    }
  }
  return r;
}

#define CHECK_CUDA(call)                                                      \
  do {                                                                        \
    const cudaError_t code = (call);                                          \
    if (code != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(code)); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const std::string picture = argc > 1 ? argv[1] : "adaptive.dot";
  examples::check_and_draw(to_spec(adaptive_step, "adaptive"), picture);
  // The CPU's decisions first, from the inputs alone (no GPU needed).
  const cpu_run cpu = reference();
  int expensive_cpu = 0;
  for (unsigned d : cpu.decisions) expensive_cpu += d == 1u;
  std::printf("CPU: %d expensive and %d cheap steps of %d\n", expensive_cpu,
              replays - expensive_cpu, replays);
  if (expensive_cpu == 0 || expensive_cpu == replays) {
    std::printf("MISMATCH: the CPU took only one path: the example would test no dispatch\n");
    return 1;
  }
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

  try {
    const std::vector<float> start = initial_field();
    cudag::device_buffer<float> d_x(cells), d_scratch(cells);
    cudag::device_buffer<unsigned> d_error(1), d_decisions(replays);
    cudag::device_buffer<int> d_step(1);
    CHECK_CUDA(cudaMemcpy(d_x.data(), start.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(d_scratch.data(), 0xFF, cells * sizeof(float)));        // NaN
    CHECK_CUDA(cudaMemset(d_decisions.data(), 0xFF, replays * sizeof(unsigned)));  // neither 0 nor 1
    CHECK_CUDA(cudaMemset(d_step.data(), 0, sizeof(int)));
    // The graph runs on a non-blocking stream, which does not wait for these
    // legacy-stream calls.
    CHECK_CUDA(cudaDeviceSynchronize());

    auto ex = instantiate(adaptive_step, x = d_x.data(), scratch = d_scratch.data(),
                          error_bits = d_error.data(), step = d_step.data(),
                          decisions = d_decisions.data(), threshold = first_threshold);
    auto stream = cudag::make_stream();
    for (int r = 0; r < replays; ++r) {
      // Safe while earlier replays run: each keeps the value it was launched with.
      if (r == replays / 2) ex.rebind(threshold = second_threshold);
      ex.launch(stream.get());
    }
    CHECK_CUDA(cudaGetLastError());
    ex.synchronize(stream.get());
    CHECK_CUDA(cudaGetLastError());

    std::vector<float> got(cells);
    std::vector<unsigned> decided(replays);
    int steps = -1;
    CHECK_CUDA(cudaMemcpy(got.data(), d_x.data(), cells * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(decided.data(), d_decisions.data(), replays * sizeof(unsigned),
                          cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(&steps, d_step.data(), sizeof(int), cudaMemcpyDeviceToHost));

    int expensive_gpu = 0, disagreements = 0, first_disagreement = -1;
    for (int r = 0; r < replays; ++r) {
      expensive_gpu += decided[r] == 1u;
      if (decided[r] != cpu.decisions[r] && disagreements++ == 0) first_disagreement = r;
    }
    std::size_t bad_cells = 0;
    double worst = 0.0;
    for (int i = 0; i < cells; ++i) {
      const double d = std::fabs(double(got[i]) - double(cpu.x[i]));
      if (!std::isfinite(got[i]) || !(d <= 1e-6)) ++bad_cells;  // NaN fails
      if (std::isnan(d) || d > worst) worst = d;
    }

    std::printf("GPU: %d replays counted, %d expensive steps; max |gpu - cpu| = %.3g\n", steps,
                expensive_gpu, worst);
    std::vector<std::string> failures;
    if (steps != replays)
      failures.push_back("the graph counted " + std::to_string(steps) + " replays, not " +
                         std::to_string(replays));
    if (disagreements)
      failures.push_back(std::to_string(disagreements) + " decisions differ from the CPU's, the first at replay " +
                         std::to_string(first_disagreement) + " (GPU logged " +
                         std::to_string(decided[first_disagreement]) + ")");
    if (bad_cells) failures.push_back(std::to_string(bad_cells) + " cells differ from the CPU");
    for (const std::string& why : failures) std::printf("MISMATCH: %s\n", why.c_str());
    std::printf("adaptive: %s\n", failures.empty() ? "OK" : "FAILED");
    return failures.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
