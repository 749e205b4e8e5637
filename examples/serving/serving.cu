// Serving at every batch size through one graph: a two-layer MLP (64 -> 128
// ReLU -> 32) whose launch grids follow the batch through shape rules. One
// executable graph is instantiated once and reshaped to each batch size from
// 1 to 256; every batch's output is checked against a CPU reference. It
// prints the time and device memory of this family against what serving
// engines do by hand: one graph per batch size.
//
// Usage: serving [out.dot] [--as-test]
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"

namespace {

constexpr int in_features = 64, hidden = 128, out_features = 32, max_batch = 256;
constexpr int tile_x = 32, tile_y = 8;  // threads per block: features x rows

/// out[r][j] = act(b[j] + sum_k in[r][k] * w[k][j]) for r < batch.
__global__ void dense(const float* in, const float* w, const float* b, float* out, int batch,
                      int inputs, int outputs, int relu) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (j >= outputs || r >= batch) return;
  float sum = b[j];
  for (int k = 0; k < inputs; ++k) sum += in[r * inputs + k] * w[k * outputs + j];
  out[r * outputs + j] = relu && sum < 0.0f ? 0.0f : sum;
}

#define CHECK(call)                                                                       \
  do {                                                                                    \
    const cudaError_t code_ = (call);                                                     \
    if (code_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "serving: %s failed: %s\n", #call, cudaGetErrorName(code_));   \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

struct weights {
  float *input, *w1, *b1, *h, *w2, *b2, *out;
};

/// The MLP with every grid's rows following parameter "batch".
cudag::graph_spec mlp_family() {
  cudag::builder b("mlp_family");
  auto input = b.param<const float*>("input");
  auto w1 = b.param<const float*>("w1");
  auto b1 = b.param<const float*>("b1");
  auto h = b.param<float*>("h");
  auto w2 = b.param<const float*>("w2");
  auto b2 = b.param<const float*>("b2");
  auto out = b.param<float*>("out");
  auto batch = b.param<int>("batch");
  const auto rows = [&](int features) {
    return cudag::launch(dim3((features + tile_x - 1) / tile_x), dim3(tile_x, tile_y))
        .follow(cudag::launch_dim::grid_y, batch, 1, tile_y);
  };
  auto fc1 = b.kernel("fc1", CUDAG_KERNEL(dense), rows(hidden), input, w1, b1, h, batch,
                      in_features, hidden, 1);
  auto fc2 = b.kernel("fc2", CUDAG_KERNEL(dense), rows(out_features), h, w2, b2, out, batch,
                      hidden, out_features, 0);
  b.edge(fc1, fc2);
  return b.build();
}

std::vector<cudag::binding> bindings_for(const weights& d, int batch) {
  return {cudag::bind("input", static_cast<const float*>(d.input)),
          cudag::bind("w1", static_cast<const float*>(d.w1)),
          cudag::bind("b1", static_cast<const float*>(d.b1)),
          cudag::bind("h", d.h),
          cudag::bind("w2", static_cast<const float*>(d.w2)),
          cudag::bind("b2", static_cast<const float*>(d.b2)),
          cudag::bind("out", d.out),
          cudag::bind("batch", batch)};
}

std::vector<float> pattern(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = float(int(seed >> 9) % 2001 - 1000) / 4000.0f;
  }
  return v;
}

std::vector<float> reference(const std::vector<float>& input, const std::vector<float>& w1,
                             const std::vector<float>& b1, const std::vector<float>& w2,
                             const std::vector<float>& b2, int batch) {
  std::vector<float> h(std::size_t(batch) * hidden), out(std::size_t(batch) * out_features);
  for (int r = 0; r < batch; ++r) {
    for (int j = 0; j < hidden; ++j) {
      float s = b1[j];
      for (int k = 0; k < in_features; ++k) s += input[r * in_features + k] * w1[k * hidden + j];
      h[r * hidden + j] = s < 0.0f ? 0.0f : s;
    }
    for (int j = 0; j < out_features; ++j) {
      float s = b2[j];
      for (int k = 0; k < hidden; ++k) s += h[r * hidden + k] * w2[k * out_features + j];
      out[r * out_features + j] = s;
    }
  }
  return out;
}

float* upload(const std::vector<float>& v) {
  float* d = nullptr;
  CHECK(cudaMalloc(&d, v.size() * sizeof(float)));
  CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

std::size_t used_memory() {
  CHECK(cudaDeviceSynchronize());
  std::size_t free_bytes = 0, total = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dot = argc > 1 && argv[1][0] != '-' ? argv[1] : "serving.dot";
  const cudag::graph_spec spec = mlp_family();
  examples::check_and_draw(spec, dot);
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

  const auto input = pattern(std::size_t(max_batch) * in_features, 1);
  const auto w1 = pattern(std::size_t(in_features) * hidden, 2), b1 = pattern(hidden, 3);
  const auto w2 = pattern(std::size_t(hidden) * out_features, 4), b2 = pattern(out_features, 5);
  weights d{upload(input), upload(w1), upload(b1), nullptr, upload(w2), upload(b2), nullptr};
  CHECK(cudaMalloc(&d.h, sizeof(float) * max_batch * hidden));
  CHECK(cudaMalloc(&d.out, sizeof(float) * max_batch * out_features));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // One family: instantiated once, reshaped to every batch size.
  const std::size_t before_family = used_memory();
  auto start = std::chrono::steady_clock::now();
  cudag::exec family = cudag::instantiate(spec, bindings_for(d, 1));
  family.upload(stream);
  CHECK(cudaStreamSynchronize(stream));
  const double family_ready = seconds_since(start);
  const std::size_t family_bytes = used_memory() - before_family;

  int wrong = 0;
  double worst = 0, reshape_seconds = 0;
  std::vector<float> got(std::size_t(max_batch) * out_features);
  for (int batch = 1; batch <= max_batch; ++batch) {
    start = std::chrono::steady_clock::now();
    (void)family.reshape(cudag::bind("batch", batch));
    reshape_seconds += seconds_since(start);
    // Poison the whole output: rows past the batch must stay untouched.
    CHECK(cudaMemsetAsync(d.out, 0xFF, sizeof(float) * got.size(), stream));
    family.launch(stream);
    family.synchronize(stream);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), d.out, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    const auto want = reference(input, w1, b1, w2, b2, batch);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool inside = i < want.size();
      const double error = inside ? std::fabs(double(got[i]) - double(want[i])) : 0.0;
      if (inside && error > 1e-4) ++wrong;
      if (!inside && !std::isnan(got[i])) ++wrong;  // 0xFFFFFFFF is a NaN
      if (error > worst) worst = error;
    }
  }

  // What serving engines do by hand: one graph per batch size.
  const std::size_t before_each = used_memory();
  start = std::chrono::steady_clock::now();
  std::vector<cudag::exec> per_batch;
  per_batch.reserve(max_batch);
  for (int batch = 1; batch <= max_batch; ++batch) {
    per_batch.push_back(cudag::instantiate(spec, bindings_for(d, batch)));
    per_batch.back().upload(stream);
  }
  CHECK(cudaStreamSynchronize(stream));
  const double each_ready = seconds_since(start);
  const std::size_t each_bytes = used_memory() - before_each;
  per_batch.clear();

  std::printf("one graph, reshaped to batch 1..%d: ready in %.2f ms + %.3f ms of reshapes, "
              "%.2f MiB of device memory\n",
              max_batch, family_ready * 1e3, reshape_seconds * 1e3, double(family_bytes) / 1048576.0);
  std::printf("one graph per batch size (%d graphs): ready in %.2f ms, %.2f MiB of device memory\n",
              max_batch, each_ready * 1e3, double(each_bytes) / 1048576.0);
  std::printf("checked %d batch sizes against the CPU: %s (largest difference %.2e)\n", max_batch,
              wrong == 0 ? "all correct" : "WRONG", worst);

  for (float* p : {d.input, d.w1, d.b1, d.h, d.w2, d.b2, d.out}) CHECK(cudaFree(p));
  CHECK(cudaStreamDestroy(stream));
  return wrong == 0 ? 0 : 1;
}
