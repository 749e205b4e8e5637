// A decode loop shaped as an inference engine runs one. For a batch of
// sequences, each step projects the state to vocabulary logits (a cuBLAS
// GEMM, captured), then a chain of small kernels joined by programmatic
// edges picks each row's token (argmax), folds it into the state, and
// decides on the device whether another step runs (a WHILE node: after
// `max_steps`, or once every row produced the stop token). The batch size
// is a shape family: the small kernels' grids follow parameter "batch", and
// one executable graph is reshaped to 1, 7 and 32 rows. Every batch's
// tokens are checked against a CPU reference. The replay is timed against
// the same work launched on a stream (cublasSgemm and kernel launches, the
// step count known in advance) and against the same graph with full edges.
//
// Usage: decode [out.dot] [--as-test]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/blas.hpp"
#include "cudag/builder.hpp"
#include "cudag/edge_payoff.hpp"
#include "cudag/exec.hpp"

namespace {

constexpr int hidden = 128, vocab = 256, max_batch = 32, max_steps = 12, stop_token = 0;

#define CHECK(call)                                                                     \
  do {                                                                                  \
    const cudaError_t code_ = (call);                                                   \
    if (code_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "decode: %s failed: %s\n", #call, cudaGetErrorName(code_));  \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

/// The state update, on both sides: small integers, so that every sum is
/// exact in float whatever the order cuBLAS adds in.
__host__ __device__ inline float fold_value(float s, int token, int h) {
  const int v = ((static_cast<int>(s) * 3 + token + h) % 7 + 7) % 7;
  return static_cast<float>(v - 3);
}

__device__ inline void release_dependents_and_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
}

// One block a row (vocab threads): the row's token is its first largest
// logit; written to `token` and to the history at `step`.
__global__ void pick_tokens(const float* logits, int* token, int* history, const int* step) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  __shared__ float best[vocab];
  __shared__ int at[vocab];
  const int row = blockIdx.y, j = threadIdx.x;
  best[j] = logits[row * vocab + j];
  at[j] = j;
  __syncthreads();
  for (int half = vocab / 2; half > 0; half /= 2) {
    if (j < half && (best[j + half] > best[j] || (best[j + half] == best[j] && at[j + half] < at[j]))) {
      best[j] = best[j + half];
      at[j] = at[j + half];
    }
    __syncthreads();
  }
  if (j == 0) {
    token[row] = at[0];
    history[*step * max_batch + row] = at[0];
  }
}

// One block a row (hidden threads): the token folded into the row's state.
__global__ void fold_tokens(float* state, const int* token) {
  release_dependents_and_wait();
  const int row = blockIdx.y, h = threadIdx.x;
  state[row * hidden + h] = fold_value(state[row * hidden + h], token[row], h);
}

// One thread: counts the step and says whether another runs.
__global__ void decide(cudaGraphConditionalHandle more, int* step, const int* token, int batch) {
  release_dependents_and_wait();
  const int done = ++*step;
  bool all_stopped = true;
  for (int r = 0; r < batch; ++r) all_stopped = all_stopped && token[r] == stop_token;
  cudaGraphSetConditional(more, done < max_steps && !all_stopped ? 1u : 0u);
}

// The stream version's count (no condition: the host knows the steps).
__global__ void count_step(int* step) { ++*step; }

struct device_data {
  float *w, *state, *logits;
  int *token, *history, *step;
};

/// The decode loop; `kind` joins pick -> fold -> decide.
cudag::graph_spec decode_graph(cudag::edge_kind kind) {
  cudag::builder b("decode");
  auto w = b.param<const float*>("w");
  auto state = b.param<float*>("state");
  auto logits = b.param<float*>("logits");
  auto token = b.param<int*>("token");
  auto history = b.param<int*>("history");
  auto step = b.param<int*>("step");
  auto batch = b.param<int>("batch");
  auto more = b.condition("more", 1);

  cudag::builder body("step");
  auto project = cudag::blas::gemm(
      body, "project", {.m = max_batch, .n = vocab, .k = hidden, .order = cudag::blas::layout::row_major},
      state, w, logits, 1.0f, 0.0f);
  const auto rows = [&](unsigned threads) {
    return cudag::launch(dim3(1, 1), threads).follow(cudag::launch_dim::grid_y, batch);
  };
  auto pick = body.kernel("pick", CUDAG_KERNEL(pick_tokens), rows(vocab), logits, token, history, step);
  auto fold = body.kernel("fold", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(fold_tokens)),
                          rows(hidden), state, token);
  auto choose = body.kernel("decide", cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(decide)),
                            cudag::launch(1, 1), more, step, token, batch);
  body.edge(project, pick);  // a captured node: a full edge
  body.edge(pick, fold, kind);
  body.edge(fold, choose, kind);

  auto reset = b.memset("reset_step", step, 0, 1);
  auto loop = b.while_loop("generate", more, body.build());
  b.edge(reset, loop);
  return b.build();
}

std::vector<cudag::binding> bindings(const device_data& d, int batch) {
  return {cudag::bind("w", static_cast<const float*>(d.w)), cudag::bind("state", d.state),
          cudag::bind("logits", d.logits), cudag::bind("token", d.token),
          cudag::bind("history", d.history), cudag::bind("step", d.step), cudag::bind("batch", batch)};
}

std::vector<float> weights() {
  std::vector<float> w(std::size_t(hidden) * vocab);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(int((i * 2654435761u) >> 13) % 3 - 1);
  return w;
}
std::vector<float> initial_state() {
  std::vector<float> s(std::size_t(max_batch) * hidden);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(int((i * 40503u + 7) >> 5) % 7 - 3);
  return s;
}

struct run {
  std::vector<int> history;  ///< max_steps x max_batch, -1 where no step ran
  int steps = 0;
};

/// The loop on the CPU from the inputs alone.
run reference(int batch) {
  const std::vector<float> w = weights();
  std::vector<float> state = initial_state();
  run out{std::vector<int>(std::size_t(max_steps) * max_batch, -1), 0};
  for (;;) {
    std::vector<int> token(static_cast<std::size_t>(batch));
    for (int r = 0; r < batch; ++r) {
      float best = 0;
      for (int j = 0; j < vocab; ++j) {
        float sum = 0;
        for (int k = 0; k < hidden; ++k) sum += state[std::size_t(r) * hidden + k] * w[std::size_t(k) * vocab + j];
        if (j == 0 || sum > best) best = sum, token[std::size_t(r)] = j;
      }
      out.history[std::size_t(out.steps) * max_batch + r] = token[std::size_t(r)];
      for (int h = 0; h < hidden; ++h)
        state[std::size_t(r) * hidden + h] = fold_value(state[std::size_t(r) * hidden + h], token[std::size_t(r)], h);
    }
    ++out.steps;
    const bool all_stopped = std::all_of(token.begin(), token.end(), [](int t) { return t == stop_token; });
    if (out.steps >= max_steps || all_stopped) return out;
  }
}

void reset(const device_data& d, cudaStream_t s) {
  const std::vector<float> state = initial_state();
  CHECK(cudaMemcpyAsync(d.state, state.data(), state.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  CHECK(cudaMemsetAsync(d.history, 0xFF, sizeof(int) * max_steps * max_batch, s));  // -1: poison
  CHECK(cudaMemsetAsync(d.step, 0, sizeof(int), s));
  CHECK(cudaStreamSynchronize(s));
}

run read_back(const device_data& d) {
  run out{std::vector<int>(std::size_t(max_steps) * max_batch), 0};
  CHECK(cudaMemcpy(out.history.data(), d.history, out.history.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&out.steps, d.step, sizeof(int), cudaMemcpyDeviceToHost));
  return out;
}

/// Rows beyond the batch are left as poisoned (-1) in the history.
bool same(const run& got, const run& want, int batch) {
  if (got.steps != want.steps) return false;
  for (int t = 0; t < max_steps; ++t)
    for (int r = 0; r < max_batch; ++r) {
      const std::size_t i = std::size_t(t) * max_batch + r;
      const int expected = r < batch ? want.history[i] : -1;
      if (got.history[i] != expected) return false;
    }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dot = argc > 1 && argv[1][0] != '-' ? argv[1] : "decode.dot";
  const cudag::graph_spec spec = decode_graph(cudag::edge_kind::programmatic);
  examples::check_and_draw(spec, dot);
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));

  device_data d{};
  const std::vector<float> w = weights();
  CHECK(cudaMalloc(&d.w, w.size() * sizeof(float)));
  CHECK(cudaMemcpy(d.w, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&d.state, sizeof(float) * max_batch * hidden));
  CHECK(cudaMalloc(&d.logits, sizeof(float) * max_batch * vocab));
  CHECK(cudaMalloc(&d.token, sizeof(int) * max_batch));
  CHECK(cudaMalloc(&d.history, sizeof(int) * max_steps * max_batch));
  CHECK(cudaMalloc(&d.step, sizeof(int)));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // One family each: programmatic edges, and full edges only.
  cudag::exec early = cudag::instantiate(spec, bindings(d, 1));
  cudag::exec full = cudag::instantiate(cudag::with_full_edges(spec), bindings(d, 1));

  // The same work on a stream: the step count known in advance.
  cublasHandle_t blas = nullptr;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(blas, s) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "decode: cuBLAS could not start\n");
    return 1;
  }
  const auto on_stream = [&](int batch, int steps) {
    const float one = 1.0f, zero = 0.0f;
    for (int t = 0; t < steps; ++t) {
      // Row-major logits = state * w, as column-major logits^T = w^T * state^T.
      if (cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, vocab, max_batch, hidden, &one, d.w, vocab, d.state,
                      hidden, &zero, d.logits, vocab) != CUBLAS_STATUS_SUCCESS)
        std::exit(1);
      pick_tokens<<<dim3(1, batch), vocab, 0, s>>>(d.logits, d.token, d.history, d.step);
      fold_tokens<<<dim3(1, batch), hidden, 0, s>>>(d.state, d.token);
      count_step<<<1, 1, 0, s>>>(d.step);
    }
    CHECK(cudaGetLastError());
  };

  int wrong = 0;
  std::printf("%s; %d rows at most, %d steps at most, hidden %d, vocabulary %d; "
              "us a generation (medians of 21 replays)\n\n",
              prop.name, max_batch, max_steps, hidden, vocab);
  std::printf("| batch | steps | programmatic edges | full edges | stream launches | "
              "full / programmatic | stream / programmatic |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const int batch : {1, 7, 32}) {
    const run want = reference(batch);
    (void)early.reshape(cudag::bind("batch", batch));
    (void)full.reshape(cudag::bind("batch", batch));
    const auto replay_early = [&] { early.launch(s); };
    const auto replay_full = [&] { full.launch(s); };
    const auto replay_stream = [&] { on_stream(batch, want.steps); };
    const std::function<void()> variants[3] = {replay_early, replay_full, replay_stream};
    const char* names[3] = {"programmatic", "full", "stream"};
    std::vector<double> us[3];
    for (int v = 0; v < 3; ++v) {
      reset(d, s);
      variants[v]();
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaGetLastError());
      if (!same(read_back(d), want, batch)) {
        std::printf("MISMATCH: batch %d, %s: tokens or step count differ from the CPU's\n", batch, names[v]);
        ++wrong;
      }
    }
    for (int r = 0; r < 21; ++r)
      for (int k = 0; k < 3; ++k) {
        const int v = (k + r) % 3;
        reset(d, s);
        const auto start = std::chrono::steady_clock::now();
        variants[v]();
        CHECK(cudaStreamSynchronize(s));
        us[v].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
    const double e = median(us[0]), f = median(us[1]), st = median(us[2]);
    std::printf("| %d | %d | %.1f | %.1f | %.1f | %.2fx | %.2fx |\n", batch, want.steps, e, f, st, f / e, st / e);
  }
  std::printf("\nchecked 3 batch sizes x 3 ways against the CPU: %s\n", wrong == 0 ? "all correct" : "WRONG");
  cublasDestroy(blas);
  for (void* p : {static_cast<void*>(d.w), static_cast<void*>(d.state), static_cast<void*>(d.logits),
                  static_cast<void*>(d.token), static_cast<void*>(d.history), static_cast<void*>(d.step)})
    CHECK(cudaFree(p));
  CHECK(cudaStreamDestroy(s));
  return wrong == 0 ? 0 : 1;
}
