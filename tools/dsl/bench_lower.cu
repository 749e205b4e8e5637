// Lowering and rebinding a static 1000-node kernel chain: the DSL against
// hand-written CUDA graph calls, side by side in one run, medians over many
// repetitions (interleaved, so that drift hits both alike).
//
// Goals: DSL lowering <= 1.05x hand-written cudaGraphAddKernelNode calls;
// rebinding a parameter read by one node <= 1.2x one raw
// cudaGraphExecKernelNodeSetParams; read by every node <= 1.1x the faster raw
// path and >= 6x faster than re-instantiating.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "cudag/dsl.hpp"

namespace {

constexpr std::size_t chain_length = 1000;
constexpr int repetitions = 41;

__global__ void bump(float* data, float amount, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += amount;
}

using namespace cudag::dsl;
constexpr auto x = param<"x", float*>;
constexpr auto last = param<"last", float*>;

/// "n0" .. "n999", generated: the chain is declared by a pack expansion.
template <std::size_t I>
consteval auto node_name() {
  constexpr std::size_t digits = I < 10 ? 1 : I < 100 ? 2 : I < 1000 ? 3 : 4;
  fixed_string<digits + 1> name;
  name.chars[0] = 'n';
  std::size_t v = I;
  for (std::size_t d = digits; d > 0; --d, v /= 10) name.chars[d] = char('0' + v % 10);
  return name;
}

template <std::size_t I>
constexpr auto chain_node() {
  if constexpr (I + 1 == chain_length)
    return kernel<node_name<I>(), bump>(1, 32, last, 1.0f, 32);  // the one reader of "last"
  else
    return kernel<node_name<I>(), bump>(1, 32, x, 1.0f, 32);
}

template <std::size_t... I>
constexpr auto make_chain(std::index_sequence<I...>) {
  return graph(chain_node<I>()..., chain<node_name<I>()...>);
}
constexpr auto long_chain = make_chain(std::make_index_sequence<chain_length>{});
static_assert(decltype(long_chain)::node_count == chain_length);

double micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#define CHECK(call)                                                                \
  do {                                                                             \
    const cudaError_t code = (call);                                               \
    if (code != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(code));      \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

/// The same chain, written by hand.
cudaGraph_t hand_written_chain(float* data, float* tail, std::vector<cudaGraphNode_t>& nodes) {
  cudaGraph_t g = nullptr;
  CHECK(cudaGraphCreate(&g, 0));
  nodes.resize(chain_length);
  float amount = 1.0f;
  int n = 32;
  for (std::size_t i = 0; i < chain_length; ++i) {
    float* target = i + 1 == chain_length ? tail : data;
    void* args[] = {&target, &amount, &n};
    cudaKernelNodeParams p{reinterpret_cast<void*>(&bump), dim3(1), dim3(32), 0, args, nullptr};
    CHECK(cudaGraphAddKernelNode(&nodes[i], g, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
  }
  return g;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("bench_lower: no CUDA device (%s); nothing measured\n",
                cudaGetErrorName(cudaGetLastError()));
    return 0;
  }
  float *data = nullptr, *tail = nullptr, *other = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&data), 32 * sizeof(float)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&tail), 32 * sizeof(float)));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&other), 32 * sizeof(float)));

  // ------------------------------------------------------------- lowering --
  std::vector<double> dsl_lower, hand_lower;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto built = lower(long_chain, x = data, last = tail);
    dsl_lower.push_back(micros_since(start));
    std::vector<cudaGraphNode_t> nodes;
    start = std::chrono::steady_clock::now();
    cudaGraph_t g = hand_written_chain(data, tail, nodes);
    hand_lower.push_back(micros_since(start));
    CHECK(cudaGraphDestroy(g));
  }

  // ------------------------------------------------------------ rebinding --
  // The hand-written side keeps one argument block per node, as a program
  // that rebinds its nodes must; each comparison alternates its two sides.
  auto ex = instantiate(long_chain, x = data, last = tail);
  std::vector<cudaGraphNode_t> nodes;
  cudaGraph_t raw_graph = hand_written_chain(data, tail, nodes);
  cudaGraphExec_t raw_exec = nullptr;
  CHECK(cudaGraphInstantiate(&raw_exec, raw_graph, 0));
  struct node_arguments {
    float* target;
    float amount = 1.0f;
    int n = 32;
    void* pointers[3];
    cudaKernelNodeParams params;
  };
  std::vector<node_arguments> raw_args(chain_length);
  for (std::size_t i = 0; i < chain_length; ++i) {
    node_arguments& a = raw_args[i];
    a.target = i + 1 == chain_length ? tail : data;
    a.pointers[0] = &a.target;
    a.pointers[1] = &a.amount;
    a.pointers[2] = &a.n;
    a.params = {reinterpret_cast<void*>(&bump), dim3(1), dim3(32), 0, a.pointers, nullptr};
  }

  std::vector<double> dsl_one, raw_one;
  for (int r = 0; r < 20 * repetitions; ++r) {
    float* target = (r % 2) ? other : tail;
    auto start = std::chrono::steady_clock::now();
    const rebind_path one = ex.rebind(last = target);
    dsl_one.push_back(micros_since(start));
    if (one != rebind_path::node_setters) std::printf("unexpected path for one reader\n");
    raw_args.back().target = target;
    start = std::chrono::steady_clock::now();
    CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, nodes.back(), &raw_args.back().params));
    raw_one.push_back(micros_since(start));
  }

  std::vector<double> dsl_all, raw_setters_all, raw_update_all, reinstantiate;
  for (int r = 0; r < repetitions; ++r) {
    float* all = (r % 2) ? other : data;
    auto start = std::chrono::steady_clock::now();
    const rebind_path every = ex.rebind(x = all);
    dsl_all.push_back(micros_since(start));
    if (every != rebind_path::whole_graph_update) std::printf("unexpected path for all readers\n");

    start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i + 1 < chain_length; ++i) {
      raw_args[i].target = all;
      CHECK(cudaGraphExecKernelNodeSetParams(raw_exec, nodes[i], &raw_args[i].params));
    }
    raw_setters_all.push_back(micros_since(start));

    // A value the setters did not just write, so that the update has
    // every node to change, as the DSL's has.
    float* changed = all == other ? data : other;
    start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i + 1 < chain_length; ++i) {
      raw_args[i].target = changed;
      CHECK(cudaGraphKernelNodeSetParams(nodes[i], &raw_args[i].params));
    }
    cudaGraphExecUpdateResultInfo info{};
    CHECK(cudaGraphExecUpdate(raw_exec, raw_graph, &info));
    raw_update_all.push_back(micros_since(start));

    start = std::chrono::steady_clock::now();
    cudaGraphExec_t fresh = nullptr;
    CHECK(cudaGraphInstantiate(&fresh, raw_graph, 0));
    reinstantiate.push_back(micros_since(start));
    CHECK(cudaGraphExecDestroy(fresh));
  }
  ex.launch(nullptr);
  ex.synchronize(nullptr);
  CHECK(cudaGetLastError());

  const double lower_ratio = median(dsl_lower) / median(hand_lower);
  const double best_raw_all = std::min(median(raw_setters_all), median(raw_update_all));
  std::printf("| %-44s | %12s | %12s | %6s | %s |\n", "1000-node kernel chain", "DSL us", "raw us",
              "ratio", "goal");
  std::printf("|%s|%s|%s|%s|%s|\n", "----------------------------------------------",
              "--------------", "--------------", "--------", "------");
  std::printf("| %-44s | %12.1f | %12.1f | %6.3f | <= 1.05 |\n", "lower (add 1000 kernel nodes)",
              median(dsl_lower), median(hand_lower), lower_ratio);
  std::printf("| %-44s | %12.2f | %12.2f | %6.3f | <= 1.2 |\n", "rebind, 1 reader (exec setter)",
              median(dsl_one), median(raw_one), median(dsl_one) / median(raw_one));
  std::printf("| %-44s | %12.1f | %12.1f | %6.3f | <= 1.1 |\n", "rebind, 999 readers (vs faster raw path)",
              median(dsl_all), best_raw_all, median(dsl_all) / best_raw_all);
  std::printf("| %-44s | %12s | %12.1f | %6s | |\n", "  raw: exec setter on 999 nodes", "",
              median(raw_setters_all), "");
  std::printf("| %-44s | %12s | %12.1f | %6s | |\n", "  raw: template setters + cudaGraphExecUpdate", "",
              median(raw_update_all), "");
  std::printf("| %-44s | %12.1f | %12.1f | %6.1fx | >= 6x |\n", "re-instantiate vs DSL rebind of 999",
              median(dsl_all), median(reinstantiate), median(reinstantiate) / median(dsl_all));
  std::printf("(medians of %d repetitions, %d for one reader; whole-graph update above %.0f%% of "
              "the nodes)\n",
              repetitions, 20 * repetitions, 100 * cudag::whole_graph_update_fraction);

  CHECK(cudaGraphExecDestroy(raw_exec));
  CHECK(cudaGraphDestroy(raw_graph));
  CHECK(cudaFree(data));
  CHECK(cudaFree(tail));
  CHECK(cudaFree(other));
  return 0;
}
