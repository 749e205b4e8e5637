// Programmatic and launch-completion edges on the GPU: chains of dependent
// kernels, each reading what the one before it wrote, compute exactly what
// the host computes, replay after replay; CUDA holds the edge data cudag
// sent; typed edges work inside child graphs and conditional bodies; and the
// edge-kind chooser runs both variants and ships one that computes right.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/builder.hpp"
#include "cudag/edge_payoff.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"

using namespace engine_test;

namespace {

// Releases its dependents at its start, then waits for its own predecessors
// before it reads: the pattern a programmatic edge needs.
__global__ void halve_and_add(float* data, int n, float add) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 0.5f + add;
}

constexpr int elements = 1024;
constexpr int steps = 48;

float add_of(int step) { return static_cast<float>(step % 7) + 0.25f; }

/// What `replays` replays leave in each element, from x[i] = i, where a
/// replay runs `chains` chains of `chain_steps` steps one after the other.
std::vector<float> expected(int replays, int chain_steps = steps, int chains = 1) {
  std::vector<float> x(elements);
  for (int i = 0; i < elements; ++i) x[i] = static_cast<float>(i);
  for (int r = 0; r < replays * chains; ++r)
    for (int s = 0; s < chain_steps; ++s)
      for (float& v : x) v = v * 0.5f + add_of(s);
  return x;
}

std::vector<float> start_values() {
  std::vector<float> x(elements);
  for (int i = 0; i < elements; ++i) x[i] = static_cast<float>(i);
  return x;
}

/// A chain of `chain_steps` kernels over `data`, each edge of kind `kind`.
void add_chain(cudag::builder& b, const cudag::param_handle<float*>& data, cudag::edge_kind kind,
               int chain_steps = steps, int blocks = 8) {
  std::optional<cudag::node_ref> previous;
  for (int s = 0; s < chain_steps; ++s) {
    auto k = b.kernel("step" + std::to_string(s),
                      cudag::synchronizes_grid_dependencies(CUDAG_KERNEL(halve_and_add)),
                      cudag::launch(blocks, elements / blocks), data, elements, add_of(s));
    if (previous) b.edge(*previous, k, kind);
    previous = k;
  }
}

bool device_supports_programmatic_launch() {
  int major = 0;
  return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
         major >= 9;
}

#define REQUIRE_PROGRAMMATIC_LAUNCH()                                                    \
  do {                                                                                   \
    CUDAG_REQUIRE_GPU();                                                                 \
    if (!device_supports_programmatic_launch())                                          \
      GTEST_SKIP() << "programmatic dependent launch needs compute capability 9.0 or newer"; \
  } while (0)

void replay_and_compare(cudag::exec& e, const cudag::device_buffer<float>& x, int replays,
                        const std::vector<float>& want) {
  auto s = cudag::make_stream();
  for (int r = 0; r < replays; ++r) e.launch(s.get());
  e.synchronize(s.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(read_back(x), want);
}

TEST(ProgrammaticEdgesGpu, ChainsOfEitherKindComputeWhatTheHostComputes) {
  REQUIRE_PROGRAMMATIC_LAUNCH();
  for (const cudag::edge_kind kind : {cudag::edge_kind::programmatic, cudag::edge_kind::launch_completion}) {
    SCOPED_TRACE(std::string(cudag::edge_kind_name(kind)));
    cudag::device_buffer<float> x(elements);
    upload(x, start_values());
    cudag::builder b("chain");
    auto data = b.param<float*>("data");
    add_chain(b, data, kind);
    const cudag::binding binds[] = {cudag::bind("data", x.data())};
    const cudag::resolved_graph graph = std::move(b).resolve();

    // CUDA holds the edges cudag sent: every edge of the chain typed.
    cudag::lowered_graph lowered = cudag::lower(graph, binds);
    std::size_t count = 0;
    CUDAG_EXPECT_CUDA(cudaGraphGetEdges(lowered.graph.get(), nullptr, nullptr, nullptr, &count));
    ASSERT_EQ(count, std::size_t{steps - 1});
    std::vector<cudaGraphNode_t> from(count), to(count);
    std::vector<cudaGraphEdgeData> data_of(count);
    CUDAG_EXPECT_CUDA(cudaGraphGetEdges(lowered.graph.get(), from.data(), to.data(), data_of.data(), &count));
    for (const cudaGraphEdgeData& d : data_of) {
      EXPECT_EQ(d.type, cudaGraphDependencyTypeProgrammatic);
      EXPECT_EQ(d.from_port, kind == cudag::edge_kind::programmatic ? cudaGraphKernelNodePortProgrammatic
                                                                     : cudaGraphKernelNodePortLaunchCompletion);
    }

    auto e = cudag::instantiate(graph, binds);
    replay_and_compare(e, x, 1, expected(1));
    upload(x, start_values());
    replay_and_compare(e, x, 5, expected(5));
  }
}

TEST(ProgrammaticEdgesGpu, TypedEdgesInsideAChildGraphAndAConditionalBody) {
  REQUIRE_PROGRAMMATIC_LAUNCH();
  cudag::device_buffer<float> x(elements);
  upload(x, start_values());
  cudag::builder body("body");
  auto body_data = body.param<float*>("data");
  add_chain(body, body_data, cudag::edge_kind::programmatic, 8);
  const cudag::resolved_graph stage = std::move(body).resolve();

  cudag::builder b("outer");
  (void)b.param<float*>("data");
  auto taken = b.condition("taken", 1);
  auto skipped = b.condition("skipped", 0);
  auto first = b.child("first", stage);
  auto second = b.if_then("second", taken, stage);
  auto third = b.if_then("third", skipped, stage);  // never runs
  b.chain(first, second, third);
  const cudag::binding binds[] = {cudag::bind("data", x.data())};
  auto e = cudag::instantiate(std::move(b).resolve(), binds);
  // The child and the taken body run; the body not taken does not.
  replay_and_compare(e, x, 2, expected(2, 8, 2));
}

TEST(ProgrammaticEdgesGpu, TheChooserShipsAVariantThatComputesRight) {
  REQUIRE_PROGRAMMATIC_LAUNCH();
  cudag::device_buffer<float> x(elements);
  upload(x, start_values());
  cudag::builder b("chain");
  auto data = b.param<float*>("data");
  add_chain(b, data, cudag::edge_kind::programmatic, steps, 1);
  const cudag::binding binds[] = {cudag::bind("data", x.data())};
  const cudag::graph_spec spec = b.build();
  auto s = cudag::make_stream();
  const cudag::edge_kind_choice choice = cudag::choose_edge_kinds(spec, binds, s.get(), 3, 2);
  EXPECT_EQ(choice.typed_edges, std::size_t{steps - 1});
  EXPECT_GT(choice.typed_replay_us, 0.0);
  EXPECT_GT(choice.full_replay_us, 0.0);
  std::printf("%s\n", choice.text().c_str());
  upload(x, start_values());
  auto e = cudag::instantiate(choice.chosen, binds);
  replay_and_compare(e, x, 3, expected(3));
}

}  // namespace
