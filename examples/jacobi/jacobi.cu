// Flagship example: a Jacobi solver for the 2-D Poisson equation as one CUDA
// graph. Scratch memory is allocated and freed by the graph itself, the
// iteration runs in a conditional WHILE node until the largest change falls
// under a tolerance, and a host node reports. The result is verified against
// a CPU solution computed from the inputs alone (the same sweeps and the same
// convergence rule, run to its own round count): the GPU must agree on the
// number of rounds and on the grid, and the grid must have moved.
//
// Without a GPU the graph is still built, checked and drawn, and the program
// says that nothing ran.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "jacobi_kernels.cuh"

namespace {

struct problem {
  int n = 64;
  float tolerance = 1e-5f;
  int max_iterations = 20000;
  float h2 = 1.0f / (63.0f * 63.0f);
};

/// The solver's graph. Parameters: the grid u (in/out), the source term,
/// and where to put the number of rounds run (host-visible memory). The host
/// node prints that number and copies it to *reported.
cudag::graph_spec solver_graph(const problem& p, int* reported) {
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
      "report",
      [reported](const int* rounds) {
        *reported = *rounds;
        std::printf("graph: loop ran %d rounds\n", *rounds);
      },
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

struct cpu_solution {
  std::vector<float> u;
  int rounds = 0;
  float last_change = 0.0f;
};

/// The solver on the CPU, from the inputs alone: the same sweeps in the same
/// float operations as the kernel (which spells them with round-to-nearest
/// intrinsics, so neither side fuses a multiply-add), and the same rule as
/// the decide kernel: loop while the largest change of the second sweep is
/// above the tolerance and the iteration budget is not spent. Nothing the
/// GPU reports goes in.
cpu_solution reference(const problem& p) {
  std::vector<float> u = initial_grid(p), next = u;
  const std::vector<float> f = source_term(p);
  std::vector<float> scaled(f.size());  // h2 * f, rounded once like the kernel's __fmul_rn
  for (std::size_t i = 0; i < f.size(); ++i) scaled[i] = p.h2 * f[i];
  auto sweep = [&](const std::vector<float>& in, std::vector<float>& out) {
    float largest = 0.0f;
    for (int row = 1; row < p.n - 1; ++row)
      for (int col = 1; col < p.n - 1; ++col) {
        const std::size_t i = std::size_t(row) * p.n + col;
        const float neighbours = ((in[i - p.n] + in[i + p.n]) + in[i - 1]) + in[i + 1];
        const float v = 0.25f * (neighbours - scaled[i]);
        out[i] = v;
        const float change = std::fabs(v - in[i]);
        if (change > largest) largest = change;
      }
    return largest;
  };
  cpu_solution s;
  do {
    sweep(u, next);
    s.last_change = sweep(next, u);
    ++s.rounds;
  } while (s.last_change > p.tolerance && s.rounds < p.max_iterations);
  s.u = std::move(u);
  return s;
}

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    const cudaError_t code = (call);                                                       \
    if (code != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(code));              \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

struct pinned_deleter {
  void operator()(int* p) const noexcept { (void)cudaFreeHost(p); }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string picture = argc > 1 ? argv[1] : "jacobi.dot";
  problem p;
  int reported_rounds = -1;  // written by the graph's host node
  cudag::graph_spec spec = solver_graph(p, &reported_rounds);

  examples::check_and_draw(spec, picture);
  if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

  // The CPU's answer first, from the inputs alone.
  const cpu_solution cpu = reference(p);
  const std::vector<float> initial = initial_grid(p);

  const std::size_t cells = std::size_t(p.n) * p.n;
  const std::vector<float> f = source_term(p);
  try {
    cudag::device_buffer<float> d_u(cells), d_f(cells);
    CHECK_CUDA(cudaMemcpy(d_u.data(), initial.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_f.data(), f.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    // The graph runs on a non-blocking stream, which does not wait for these
    // legacy-stream copies (a pageable copy may return before its DMA ends).
    CHECK_CUDA(cudaDeviceSynchronize());
    int* pinned = nullptr;  // written by the graph's memcpy, read by its host node
    CHECK_CUDA(cudaMallocHost(&pinned, sizeof(int)));
    const std::unique_ptr<int, pinned_deleter> rounds_out(pinned);
    *rounds_out = -1;  // stays -1 unless the graph exports its count

    const cudag::binding binds[] = {cudag::bind("u", d_u.data()),
                                    cudag::bind("source", static_cast<const float*>(d_f.data())),
                                    cudag::bind("rounds_out", rounds_out.get())};
    cudag::exec solver = cudag::instantiate(spec, binds);
    auto stream = cudag::make_stream();
    solver.launch(stream.get());
    CHECK_CUDA(cudaGetLastError());
    solver.synchronize(stream.get());
    CHECK_CUDA(cudaGetLastError());

    std::vector<float> result(cells, 0.0f);
    CHECK_CUDA(cudaMemcpy(result.data(), d_u.data(), cells * sizeof(float), cudaMemcpyDeviceToHost));
    const int rounds = *rounds_out;

    // Every comparison is written so that NaN fails it.
    constexpr float tolerance = 1e-5f;  // relative to max(1, |cpu|); the arithmetic is the same
    std::size_t not_finite = 0, mismatched = 0, moved_gpu = 0, moved_cpu = 0;
    double worst = 0.0;
    for (std::size_t i = 0; i < cells; ++i) {
      if (!std::isfinite(result[i])) ++not_finite;
      const double d = std::fabs(double(result[i]) - double(cpu.u[i]));
      if (!(d <= tolerance * std::max(1.0, std::fabs(double(cpu.u[i]))))) ++mismatched;
      if (std::isnan(d) || d > worst) worst = d;  // a NaN stays
      if (result[i] != initial[i]) ++moved_gpu;
      if (cpu.u[i] != initial[i]) ++moved_cpu;
    }

    std::printf("CPU (inputs alone): %d rounds, last change %.3g (tolerance %.3g, budget %d)\n",
                cpu.rounds, double(cpu.last_change), double(p.tolerance), p.max_iterations);
    std::printf("GPU: %d rounds (%d kernels) in one graph launch; host node reported %d\n", rounds,
                3 * rounds, reported_rounds);
    std::printf("max |gpu - cpu| = %.3g over %zu cells; %zu cells moved from the initial grid "
                "(CPU: %zu); %zu not finite\n",
                worst, cells, moved_gpu, moved_cpu, not_finite);

    std::vector<std::string> failures;
    if (rounds != cpu.rounds)
      failures.push_back(rounds < 0 ? "the graph exported no round count (its loop did not run)"
                                    : "the GPU ran " + std::to_string(rounds) +
                                          " rounds, the CPU's convergence rule " +
                                          std::to_string(cpu.rounds));
    if (reported_rounds != rounds)
      failures.push_back("the host node reported " + std::to_string(reported_rounds) +
                         " rounds, the exported count is " + std::to_string(rounds));
    if (not_finite) failures.push_back(std::to_string(not_finite) + " cells are NaN or infinite");
    if (mismatched) failures.push_back(std::to_string(mismatched) + " cells differ from the CPU");
    if (moved_gpu == 0) failures.push_back("the grid is still the initial grid");
    if (moved_cpu == 0) failures.push_back("the CPU reference did not move the grid (bad problem)");
    for (const std::string& why : failures) std::printf("MISMATCH: %s\n", why.c_str());
    std::printf("jacobi: %s\n", failures.empty() ? "OK" : "FAILED");
    return failures.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
