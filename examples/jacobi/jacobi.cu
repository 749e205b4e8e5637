// Flagship example: a Jacobi solver for the 2-D Poisson equation as one CUDA
// graph. Scratch memory is allocated and freed by the graph itself, the
// iteration runs in a conditional WHILE node until the largest change falls
// under a tolerance, and a host node reports. The result is verified against
// the same iteration on the CPU.
//
// Without a GPU the graph is still built, checked and drawn, and the program
// says that nothing ran.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "jacobi_kernels.cuh"

namespace {

struct problem {
  int n = 64;
  float tolerance = 1e-5f;
  int max_iterations = 20000;
  float h2 = 1.0f / (63.0f * 63.0f);
};

/// The solver's graph. Parameters: the grid u (in/out), the source term,
/// and where to put the number of rounds run (host-visible memory).
cudag::graph_spec solver_graph(const problem& p) {
  cudag::builder b("jacobi");
  auto u = b.param<float*>("u");
  auto source = b.param<const float*>("source");
  auto rounds_out = b.param<int*>("rounds_out");
  auto again = b.condition("not_converged", /*default_value=*/1);
  const std::size_t cells = std::size_t(p.n) * p.n;
  const dim3 block(16, 16);
  const dim3 grid((p.n + 15) / 16, (p.n + 15) / 16);

  auto [alloc_next, next] = b.alloc<float>("next", cells);
  auto [alloc_change, change] = b.alloc<unsigned>("max_change", 1);
  auto [alloc_count, count] = b.alloc<int>("iterations", 1);
  auto copy_boundary = b.memcpy("copy_boundary", next, u, cells * sizeof(float));
  auto reset_count = b.memset("reset_count", count, 0u, 1);

  // One loop round: u -> next, then next -> u measuring the change.
  cudag::builder body("round");
  auto there = body.kernel("sweep_there", CUDAG_KERNEL(jacobi::sweep), cudag::launch(grid, block),
                           u, next, source, p.n, p.h2, static_cast<unsigned*>(nullptr));
  auto clear = body.memset("clear_change", change, 0u, 1);
  auto back = body.kernel("sweep_back", CUDAG_KERNEL(jacobi::sweep), cudag::launch(grid, block),
                          next, u, source, p.n, p.h2, change);
  auto decide = body.kernel("decide", CUDAG_KERNEL(jacobi::decide), cudag::launch(1, 1), again,
                            change, count, p.tolerance, p.max_iterations);
  body.edge(there, back);
  body.edge(clear, back);
  body.edge(back, decide);
  auto loop = b.while_loop("iterate", again, body.build());

  auto export_count = b.memcpy("export_rounds", rounds_out, count, sizeof(int));
  auto report = b.host(
      "report", [](const int* rounds) { std::printf("graph: loop ran %d rounds\n", *rounds); },
      rounds_out);
  auto free_next = b.free("free_next", next);
  auto free_change = b.free("free_change", change);
  auto free_count = b.free("free_count", count);
  loop.after(copy_boundary, reset_count, alloc_change);
  b.chain(alloc_next, copy_boundary);
  b.chain(alloc_count, reset_count);
  loop.precede(free_next, free_change, export_count);
  b.chain(export_count, free_count);
  b.chain(export_count, report);
  return std::move(b).build();
}

std::vector<float> initial_grid(const problem& p) {
  std::vector<float> u(std::size_t(p.n) * p.n, 0.0f);
  for (int col = 0; col < p.n; ++col) u[col] = 1.0f;  // hot top edge
  return u;
}

std::vector<float> source_term(const problem& p) {
  std::vector<float> f(std::size_t(p.n) * p.n, 0.0f);
  f[std::size_t(p.n / 2) * p.n + p.n / 2] = -50.0f / p.h2;  // a point source in the middle
  return f;
}

/// The same iteration on the CPU, `rounds` times.
std::vector<float> reference(const problem& p, int rounds) {
  std::vector<float> u = initial_grid(p), next = u;
  const std::vector<float> f = source_term(p);
  auto sweep = [&](const std::vector<float>& in, std::vector<float>& out) {
    for (int row = 1; row < p.n - 1; ++row)
      for (int col = 1; col < p.n - 1; ++col) {
        const std::size_t i = std::size_t(row) * p.n + col;
        out[i] = 0.25f * (in[i - p.n] + in[i + p.n] + in[i - 1] + in[i + 1] - p.h2 * f[i]);
      }
  };
  for (int r = 0; r < rounds; ++r) {
    sweep(u, next);
    sweep(next, u);
  }
  return u;
}

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    const cudaError_t code = (call);                                                       \
    if (code != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(code));              \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const std::string picture = argc > 1 ? argv[1] : "jacobi.dot";
  problem p;
  cudag::graph_spec spec = solver_graph(p);

  examples::check_and_draw(spec, picture);
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

  const std::size_t cells = std::size_t(p.n) * p.n;
  std::vector<float> u = initial_grid(p);
  const std::vector<float> f = source_term(p);
  float* d_u = nullptr;
  float* d_f = nullptr;
  CHECK_CUDA(cudaMalloc(&d_u, cells * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_f, cells * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_u, u.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_f, f.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
  // The graph runs on a non-blocking stream, which does not wait for these
  // legacy-stream copies (a pageable copy may return before its DMA ends).
  CHECK_CUDA(cudaDeviceSynchronize());
  int* rounds_out = nullptr;  // pinned: written by the graph's memcpy, read by its host node
  CHECK_CUDA(cudaMallocHost(&rounds_out, sizeof(int)));
  *rounds_out = -1;

  int status = 0;
  try {
    const cudag::binding binds[] = {cudag::bind("u", d_u),
                                    cudag::bind("source", static_cast<const float*>(d_f)),
                                    cudag::bind("rounds_out", rounds_out)};
    cudag::exec solver = cudag::instantiate(spec, binds);
    auto stream = cudag::make_stream();
    solver.launch(stream.get());
    solver.synchronize(stream.get());

    std::vector<float> result(cells);
    CHECK_CUDA(cudaMemcpy(result.data(), d_u, cells * sizeof(float), cudaMemcpyDeviceToHost));
    const int rounds = *rounds_out;
    const std::vector<float> ref = reference(p, rounds);
    double worst = 0.0;
    for (std::size_t i = 0; i < cells; ++i)
      worst = std::max(worst, double(std::fabs(result[i] - ref[i])));
    std::printf("GPU: %d rounds (%d kernels) in one graph launch; CPU reference ran the same\n",
                rounds, 3 * rounds);
    std::printf("max |gpu - cpu| = %.3g over %zu cells: %s\n", worst, cells,
                worst <= 1e-4 ? "OK" : "MISMATCH");
    status = worst <= 1e-4 ? 0 : 1;
  } catch (const cudag::error& e) {
    std::fprintf(stderr, "cudag error: %s\n", e.what());
    status = 1;
  }
  cudaFree(d_u);
  cudaFree(d_f);
  cudaFreeHost(rounds_out);
  return status;
}
