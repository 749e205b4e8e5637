// A two-layer perceptron's forward pass as one graph declared with the
// compile-time DSL: two cuBLAS GEMMs (captured into child graphs), two
// bias(+ReLU) kernels and a row softmax. The compiler checks the graph's
// shape and every kernel argument; the result is verified against a float64
// CPU reference computed from the inputs alone, then the input is rebound to
// a second batch in place and verified again. The output is poisoned (NaN)
// before each launch, and any NaN or infinity fails the run.
//
// Without a GPU the graph is still checked and drawn, and the program says
// that nothing ran.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/blas.hpp"
#include "cudag/dsl.hpp"

namespace {

constexpr int batch = 64, inputs = 128, hidden = 256, classes = 10;

/// y[r][c] += bias[c], then max(0, y) when `relu`.
__global__ void add_bias(float* y, const float* bias, int rows, int cols, int relu) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const float v = y[i] + bias[i % cols];
  y[i] = relu && v < 0.0f ? 0.0f : v;
}

/// Softmax of each row of `logits` (one thread a row: rows are short).
__global__ void softmax_rows(const float* logits, float* probabilities, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float top = logits[r * cols];
  for (int c = 1; c < cols; ++c) top = fmaxf(top, logits[r * cols + c]);
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += expf(logits[r * cols + c] - top);
  for (int c = 0; c < cols; ++c) probabilities[r * cols + c] = expf(logits[r * cols + c] - top) / sum;
}

using namespace cudag::dsl;
constexpr auto x = param<"x", const float*>;
constexpr auto w1 = param<"w1", const float*>;
constexpr auto b1 = param<"b1", const float*>;
constexpr auto w2 = param<"w2", const float*>;
constexpr auto b2 = param<"b2", const float*>;
constexpr auto probabilities = param<"probabilities", float*>;
constexpr auto h = buffer<"h", float>;
constexpr auto logits = buffer<"logits", float>;

cudag::blas::gemm_desc row_major(int m, int n, int k) {
  return {.m = m, .n = n, .k = k, .order = cudag::blas::layout::row_major};
}

auto declare_mlp(const cudag::blas::gemm_call& layer1, const cudag::blas::gemm_call& layer2) {
  // clang-format off
  return graph(
      mem_alloc<"alloc_h">(h, batch * hidden),
      mem_alloc<"alloc_logits">(logits, batch * classes),
      captured<"layer1", "gemm 64x256x128">(layer1, x, w1, h, 1.0f, 0.0f),
      kernel<"bias_relu1", add_bias>(blocks_for(batch * hidden, 256), 256, h, b1, batch, hidden, 1),
      captured<"layer2", "gemm 64x10x256">(layer2, h, w2, logits, 1.0f, 0.0f),
      kernel<"bias2", add_bias>(blocks_for(batch * classes, 128), 128, logits, b2, batch, classes, 0),
      kernel<"softmax", softmax_rows>(1, batch, logits, probabilities, batch, classes),
      mem_free<"free_h">(h),
      mem_free<"free_logits">(logits),
      chain<"alloc_h", "layer1", "bias_relu1", "layer2", "bias2", "softmax", "free_logits">,
      edge<"alloc_logits", "layer2">, edge<"layer2", "free_h">);
  // clang-format on
}

std::vector<float> random_values(std::size_t count, float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(count);
  for (float& e : v) e = u(rng);
  return v;
}

/// The forward pass in float64.
std::vector<double> reference(const std::vector<float>& in, const std::vector<float>& W1,
                              const std::vector<float>& B1, const std::vector<float>& W2,
                              const std::vector<float>& B2) {
  std::vector<double> hid(std::size_t(batch) * hidden), out(std::size_t(batch) * classes);
  for (int r = 0; r < batch; ++r)
    for (int c = 0; c < hidden; ++c) {
      double s = B1[c];
      for (int k = 0; k < inputs; ++k) s += double(in[r * inputs + k]) * W1[k * hidden + c];
      hid[r * hidden + c] = s > 0 ? s : 0;
    }
  for (int r = 0; r < batch; ++r) {
    double top = -1e300;
    for (int c = 0; c < classes; ++c) {
      double s = B2[c];
      for (int k = 0; k < hidden; ++k) s += hid[r * hidden + k] * W2[k * classes + c];
      out[r * classes + c] = s;
      top = std::max(top, s);
    }
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(out[r * classes + c] - top);
    for (int c = 0; c < classes; ++c) out[r * classes + c] = std::exp(out[r * classes + c] - top) / sum;
  }
  return out;
}

struct device_array {
  explicit device_array(const std::vector<float>& host) : memory(host.size()) {
    cudag::cuda_check(cudaMemcpy(memory.data(), host.data(), host.size() * sizeof(float),
                                 cudaMemcpyHostToDevice),
                      "cudaMemcpy");
    // The graph runs on a non-blocking stream, which does not wait for this
    // legacy-stream copy (a pageable copy may return before its DMA ends).
    cudag::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  cudag::device_buffer<float> memory;
};

/// The output as the GPU left it.
std::vector<float> download(const float* device_output, std::size_t count) {
  std::vector<float> got(count, 0.0f);
  cudag::cuda_check(cudaMemcpy(got.data(), device_output, count * sizeof(float),
                               cudaMemcpyDeviceToHost),
                    "cudaMemcpy");
  return got;
}

/// Fills the output with NaN (all bits set), so that an output the graph did
/// not write cannot pass for a result.
void poison(float* device_output, std::size_t count) {
  cudag::cuda_check(cudaMemset(device_output, 0xFF, count * sizeof(float)), "cudaMemset");
  cudag::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // before the non-blocking stream
}

struct verdict {
  double worst = 0;         ///< largest |gpu - reference|; NaN when any element is NaN
  std::size_t bad = 0;      ///< elements off by more than the tolerance, or not finite
  double worst_row_sum = 0; ///< largest |sum of a row's probabilities - 1|
  [[nodiscard]] bool ok() const { return bad == 0 && worst_row_sum <= 1e-5; }
};

/// Compares with comparisons that NaN fails (!(d <= tol)).
verdict compare(const std::vector<float>& got, const std::vector<double>& ref) {
  constexpr double tolerance = 1e-5;
  verdict v;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(got[i]) - ref[i]);
    if (!std::isfinite(got[i]) || !(d <= tolerance)) ++v.bad;
    if (std::isnan(d) || d > v.worst) v.worst = d;  // a NaN stays
  }
  for (int r = 0; r < batch; ++r) {
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += got[std::size_t(r) * classes + c];
    const double off = std::fabs(sum - 1.0);
    if (std::isnan(off) || off > v.worst_row_sum) v.worst_row_sum = off;  // a NaN stays, fails ok()
  }
  return v;
}

/// Largest |a - b| of two references.
double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string picture = argc > 1 ? argv[1] : "mlp.dot";
  const cudag::blas::gemm_call layer1(row_major(batch, hidden, inputs), "layer1");
  const cudag::blas::gemm_call layer2(row_major(batch, classes, hidden), "layer2");
  const auto mlp = declare_mlp(layer1, layer2);

  examples::check_and_draw(to_spec(mlp, "mlp"), picture);
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

  try {
    const auto in1 = random_values(std::size_t(batch) * inputs, 1.0f, 1);
    const auto in2 = random_values(std::size_t(batch) * inputs, 1.0f, 2);
    const auto W1 = random_values(std::size_t(inputs) * hidden, 0.1f, 3);
    const auto B1 = random_values(hidden, 0.1f, 4);
    const auto W2 = random_values(std::size_t(hidden) * classes, 0.1f, 5);
    const auto B2 = random_values(classes, 0.1f, 6);
    const device_array d_in1(in1), d_in2(in2), d_w1(W1), d_b1(B1), d_w2(W2), d_b2(B2);
    device_array d_out(std::vector<float>(std::size_t(batch) * classes, -1.0f));

    auto ex = instantiate(mlp, x = static_cast<const float*>(d_in1.memory.data()),
                          w1 = static_cast<const float*>(d_w1.memory.data()),
                          b1 = static_cast<const float*>(d_b1.memory.data()),
                          w2 = static_cast<const float*>(d_w2.memory.data()),
                          b2 = static_cast<const float*>(d_b2.memory.data()),
                          probabilities = d_out.memory.data());
    const auto ref1 = reference(in1, W1, B1, W2, B2);
    const auto ref2 = reference(in2, W1, B1, W2, B2);
    const std::size_t outputs = ref1.size();
    float* out = d_out.memory.data();
    auto stream = cudag::make_stream();
    poison(out, outputs);
    ex.launch(stream.get());
    cudag::cuda_check(cudaGetLastError(), "launch");
    ex.synchronize(stream.get());
    cudag::cuda_check(cudaGetLastError(), "synchronize");
    const verdict first = compare(download(out, outputs), ref1);

    // The second batch: rebind the input in place (the layer-1 GEMM is
    // recorded again), no new graph. The output is poisoned again, so a
    // launch that did nothing fails, and one that used the old input fails
    // because the two batches' answers differ by far more than the tolerance.
    ex.rebind(x = static_cast<const float*>(d_in2.memory.data()));
    poison(out, outputs);
    ex.launch(stream.get());
    cudag::cuda_check(cudaGetLastError(), "launch");
    ex.synchronize(stream.get());
    cudag::cuda_check(cudaGetLastError(), "synchronize");
    const verdict second = compare(download(out, outputs), ref2);
    const double batches_apart = largest_difference(ref1, ref2);

    const bool distinguishable = batches_apart > 100 * 1e-5;
    const bool ok = first.ok() && second.ok() && distinguishable;
    std::printf("GPU: batch 1 max |gpu - cpu| = %.2g (%zu bad, row sums off by %.2g), batch 2 "
                "(rebound input) = %.2g (%zu bad, row sums off by %.2g); the batches' answers "
                "differ by %.2g: %s\n",
                first.worst, first.bad, first.worst_row_sum, second.worst, second.bad,
                second.worst_row_sum, batches_apart, ok ? "OK" : "MISMATCH");
    if (!distinguishable) std::printf("MISMATCH: the two batches are too alike to test the rebind\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
