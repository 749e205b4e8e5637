// Shape families against what serving users do by hand: a chain of kernels
// whose grid follows the batch, in S shapes (default: 200 kernels, 67
// shapes, batch = 4 * shape). Measured in one run, interleaved:
//   ready:    every shape launchable. Raw: one exec per shape (build,
//             instantiate, upload each), and one exec switched by template
//             setters + cudaGraphExecUpdate. cudag: one exec with a shape
//             rule, instantiated once, then a reshape per shape. Timed as
//             two interleaved pairs (cudag against each raw way), so that
//             neither runs beside the other's 67 live execs.
//   switch:   one change of shape. Raw: template setters + update (the
//             faster raw path for grid changes), and exec setters. cudag:
//             exec::reshape.
//   replay:   launch + synchronize after a reshape, against a dedicated
//             exec of that shape; raw execs after updates that leave the
//             launch as instantiated (what the driver's replay cost follows);
//             an exec cache holding the hot shapes in execs of their own.
//   memory:   device memory of the executable graphs (cudaMemGetInfo).
// Usage: bench_family [kernels] [shapes] [rounds] [--json FILE]
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../exec/bench_report.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/exec_cache.hpp"

namespace {

constexpr int threads = 128;

/// One step of the chain: element i < n gains 1; the elements past n (the
/// next larger shapes' rows) must stay as they were.
__global__ void step(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

int batch_of(int shape) { return 4 * (shape + 1); }
int elements_of(int batch) { return batch * threads; }  // one block of rows per batch item

struct raw_chain {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<int> counts;  ///< each node's kernel argument n
  std::vector<void*> args;  ///< per node: {&x, &counts[k]}
};

cudaKernelNodeParams params_for(raw_chain& c, std::size_t k, int batch) {
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&step);
  p.gridDim = dim3(unsigned(batch), 1, 1);
  p.blockDim = dim3(threads, 1, 1);
  p.kernelParams = &c.args[2 * k];
  return p;
}

/// Builds (and instantiates, uploads) a raw chain of `kernels` nodes at `batch`.
void build_raw(raw_chain& c, float** x, int kernels, int batch, cudaStream_t stream) {
  c.nodes.assign(std::size_t(kernels), nullptr);
  c.counts.assign(std::size_t(kernels), elements_of(batch));
  c.args.assign(std::size_t(2 * kernels), nullptr);
  BENCH_CHECK(cudaGraphCreate(&c.graph, 0));
  for (std::size_t k = 0; k < c.nodes.size(); ++k) {
    c.args[2 * k] = x;
    c.args[2 * k + 1] = &c.counts[k];
    const cudaKernelNodeParams p = params_for(c, k, batch);
    BENCH_CHECK(cudaGraphAddKernelNode(&c.nodes[k], c.graph, k ? &c.nodes[k - 1] : nullptr, k ? 1 : 0, &p));
  }
  BENCH_CHECK(cudaGraphInstantiate(&c.exec, c.graph, 0));
  BENCH_CHECK(cudaGraphUpload(c.exec, stream));
}

void destroy_raw(raw_chain& c) {
  if (c.exec) BENCH_CHECK(cudaGraphExecDestroy(c.exec));
  if (c.graph) BENCH_CHECK(cudaGraphDestroy(c.graph));
  c.exec = nullptr;
  c.graph = nullptr;
}

/// Raw switch by template setters and one whole-graph update.
void switch_by_update(raw_chain& c, int batch) {
  for (std::size_t k = 0; k < c.nodes.size(); ++k) {
    c.counts[k] = elements_of(batch);
    const cudaKernelNodeParams p = params_for(c, k, batch);
    BENCH_CHECK(cudaGraphKernelNodeSetParams(c.nodes[k], &p));
  }
  cudaGraphExecUpdateResultInfo info{};
  BENCH_CHECK(cudaGraphExecUpdate(c.exec, c.graph, &info));
}

/// Raw switch by one exec setter a node.
void switch_by_exec_setters(raw_chain& c, int batch) {
  for (std::size_t k = 0; k < c.nodes.size(); ++k) {
    c.counts[k] = elements_of(batch);
    const cudaKernelNodeParams p = params_for(c, k, batch);
    BENCH_CHECK(cudaGraphExecKernelNodeSetParams(c.exec, c.nodes[k], &p));
  }
}

cudag::graph_spec family_spec(int kernels) {
  cudag::builder b("chain_family");
  auto x = b.param<float*>("x");
  auto batch = b.param<int>("batch");
  auto n = b.param<int>("n");
  const auto shape = cudag::launch(dim3(1), dim3(threads)).follow(cudag::launch_dim::grid_x, batch);
  std::vector<cudag::node_ref> nodes;
  for (int k = 0; k < kernels; ++k) {
    nodes.push_back(b.kernel("step" + std::to_string(k), &step, shape, x, n));
    if (k) b.edge(nodes[std::size_t(k) - 1], nodes.back());
  }
  return b.build();
}

std::vector<cudag::binding> shape_bindings(int batch) {
  return {cudag::bind("batch", batch), cudag::bind("n", elements_of(batch))};
}

std::size_t used_memory() {
  BENCH_CHECK(cudaDeviceSynchronize());
  std::size_t free_bytes = 0, total = 0;
  BENCH_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

/// Launches once on a poisoned buffer and checks every element: the first
/// elements_of(batch) gained `kernels`, the rest kept the poison.
std::string verify_shape(const std::string& what, const std::function<void(cudaStream_t)>& launch,
                         cudaStream_t stream, float* x, int max_elements, int batch, int kernels) {
  const float poison = -7.0f;
  std::vector<float> host(std::size_t(max_elements), poison);
  BENCH_CHECK(cudaMemcpy(x, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  launch(stream);
  BENCH_CHECK(cudaStreamSynchronize(stream));
  BENCH_CHECK(cudaGetLastError());
  BENCH_CHECK(cudaMemcpy(host.data(), x, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const int n = elements_of(batch);
  for (int i = 0; i < max_elements; ++i) {
    const float expected = i < n ? poison + float(kernels) : poison;
    if (host[std::size_t(i)] != expected) {
      std::fprintf(stderr, "bench_family: WRONG RESULT for '%s': x[%d] is %g, expected %g\n",
                   what.c_str(), i, double(host[std::size_t(i)]), double(expected));
      std::exit(3);
    }
  }
  return what;
}

}  // namespace

int main(int argc, char** argv) {
  bench::program_name = "bench_family";
  const auto cl = bench::parse_command_line(argc, argv, "bench_family [kernels] [shapes] [rounds] [--json FILE]");
  if (bench::no_gpu(cl)) return 0;
  const int kernels = bench::positive_argument(cl, 0, 200, "kernels");
  const int shapes = bench::positive_argument(cl, 1, 67, "shapes");
  const int rounds = bench::positive_argument(cl, 2, 15, "rounds");
  const int max_batch = batch_of(shapes - 1);
  const int max_elements = elements_of(max_batch);

  bench::report rep("bench_family", "cudag", "raw CUDA");
  rep.describe_machine(cl);
  rep.setting("kernels", std::to_string(kernels));
  rep.setting("shapes", std::to_string(shapes));
  rep.setting("batches", "\"4, 8, ..., " + std::to_string(max_batch) + " (grid = batch blocks of " +
                             std::to_string(threads) + ")\"");
  rep.setting("rounds", std::to_string(rounds));
  rep.print_header();

  cudaStream_t stream = nullptr;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* x = nullptr;
  BENCH_CHECK(cudaMalloc(&x, std::size_t(max_elements) * sizeof(float)));
  const cudag::graph_spec spec = family_spec(kernels);
  const auto first_bindings = [&] {
    auto b = shape_bindings(batch_of(0));
    b.push_back(cudag::bind("x", x));
    return b;
  };

  // ---- memory, first: the driver keeps what destroyed graphs took and ---
  // gives it to later ones. Copies are kept alive, so that 2 MiB steps of
  // cudaMemGetInfo resolve one exec's share.
  {
    constexpr int copies = 24;
    const std::size_t base = used_memory();
    std::vector<cudag::exec> ours;
    for (int k = 0; k < copies; ++k) {
      ours.push_back(cudag::instantiate(spec, first_bindings()));
      ours.back().upload(stream);
    }
    const std::size_t ours_uploaded = used_memory() - base;
    for (auto& e : ours) e.launch(stream);
    const std::size_t ours_launched = used_memory() - base;
    std::vector<raw_chain> raw(copies);
    const std::size_t base_raw = used_memory();
    for (auto& c : raw) build_raw(c, &x, kernels, batch_of(0), stream);
    const std::size_t raw_uploaded = used_memory() - base_raw;
    for (auto& c : raw) BENCH_CHECK(cudaGraphLaunch(c.exec, stream));
    const std::size_t raw_launched = used_memory() - base_raw;
    std::vector<raw_chain> per_shape_memory(static_cast<std::size_t>(shapes));
    const std::size_t base_all = used_memory();
    for (int s = 0; s < shapes; ++s) {
      build_raw(per_shape_memory[std::size_t(s)], &x, kernels, batch_of(s), stream);
      BENCH_CHECK(cudaGraphLaunch(per_shape_memory[std::size_t(s)].exec, stream));
    }
    const std::size_t raw_all = used_memory() - base_all;
    for (auto& c : per_shape_memory) destroy_raw(c);
    for (auto& c : raw) destroy_raw(c);
    ours.clear();
    const double mib = 1048576.0;
    std::printf("device memory (cudaMemGetInfo, %d copies each kept alive):\n"
                "  one cudag exec: %.3f MiB after upload, %.3f MiB after its first launch\n"
                "  one raw exec:   %.3f MiB after upload, %.3f MiB after its first launch\n"
                "  one raw exec per shape: %.2f MiB for %d shapes; the cudag family is one exec\n\n",
                copies, double(ours_uploaded) / mib / copies, double(ours_launched) / mib / copies,
                double(raw_uploaded) / mib / copies, double(raw_launched) / mib / copies,
                double(raw_all) / mib, shapes);
    rep.extra("memory_bytes", "{\"cudag_exec_uploaded\": " + std::to_string(ours_uploaded / copies) +
                                  ", \"cudag_exec_launched\": " + std::to_string(ours_launched / copies) +
                                  ", \"raw_exec_uploaded\": " + std::to_string(raw_uploaded / copies) +
                                  ", \"raw_exec_launched\": " + std::to_string(raw_launched / copies) +
                                  ", \"raw_one_exec_per_shape\": " + std::to_string(raw_all) + "}");
  }

  // ---- ready: every shape launchable --------------------------------------
  // Two interleaved pairs, cudag against each raw way: timed beside the 67
  // live execs of one exec per shape, either side would pay for them. Each
  // side's teardown (untimed) ends with the device idle.
  std::vector<raw_chain> per_shape(static_cast<std::size_t>(shapes));
  raw_chain switched;
  std::optional<cudag::exec> held;  // destroyed untimed, as the raw sides' graphs are
  const bench::side cudag_ready{
      [&] {  // cudag: one family exec, reshaped through every shape
        held.emplace(cudag::instantiate(spec, first_bindings()));
        held->upload(stream);
        for (int s = 1; s < shapes; ++s) (void)held->reshape(shape_bindings(batch_of(s)));
        BENCH_CHECK(cudaStreamSynchronize(stream));
      },
      [&] {
        held.reset();
        BENCH_CHECK(cudaDeviceSynchronize());
      }};
  const std::vector<bench::summary> ready_per_shape = bench::interleaved(
      rounds, 1,
      {
          {[&] {  // raw: one exec per shape
             for (int s = 0; s < shapes; ++s) build_raw(per_shape[std::size_t(s)], &x, kernels, batch_of(s), stream);
             BENCH_CHECK(cudaStreamSynchronize(stream));
           },
           [&] {
             for (auto& c : per_shape) destroy_raw(c);
             BENCH_CHECK(cudaDeviceSynchronize());
           }},
          cudag_ready,
      });
  for (auto& c : per_shape) destroy_raw(c);
  held.reset();
  const std::vector<bench::summary> ready_switched = bench::interleaved(
      rounds, 1,
      {
          {[&] {  // raw: one exec, switched through every shape by update
             build_raw(switched, &x, kernels, batch_of(0), stream);
             for (int s = 1; s < shapes; ++s) switch_by_update(switched, batch_of(s));
             BENCH_CHECK(cudaStreamSynchronize(stream));
           },
           [&] {
             destroy_raw(switched);
             BENCH_CHECK(cudaDeviceSynchronize());
           }},
          cudag_ready,
      });
  rep.add({"ready: every shape launchable", "one exec per shape (build, instantiate, upload each)",
           ready_per_shape[0], ready_per_shape[1], ""});
  rep.add({"ready: every shape launchable", "one exec + a switch per shape (template setters + update)",
           ready_switched[0], ready_switched[1], "<= 1.1"});

  for (auto& c : per_shape) destroy_raw(c);
  destroy_raw(switched);
  cudag::exec& family = *held;

  // ---- one switch ------------------------------------------------------------
  build_raw(switched, &x, kernels, batch_of(0), stream);
  raw_chain switched_last;
  build_raw(switched_last, &x, kernels, batch_of(0), stream);
  int raw_shape = 0, setter_shape = 0, cudag_shape = 0, last_shape = 0;
  const auto next = [&](int& s) { return s = (s + 17) % shapes; };  // a different shape each time
  const std::vector<bench::summary> one_switch = bench::interleaved(
      rounds * 8, 2,
      {
          {[&] { switch_by_update(switched, batch_of(next(raw_shape))); }},
          {[&] { switch_by_exec_setters(switched, batch_of(next(setter_shape))); }},
          {[&] { (void)family.reshape(shape_bindings(batch_of(next(cudag_shape)))); }},
          {[&] {
             family.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
             (void)family.reshape(shape_bindings(batch_of(next(cudag_shape))));
             family.set_rebind_policy(cudag::rebind_policy::automatic);
           }},
          {[&] {
             family.set_rebind_policy(cudag::rebind_policy::node_setters);
             (void)family.reshape(shape_bindings(batch_of(next(cudag_shape))));
             family.set_rebind_policy(cudag::rebind_policy::automatic);
           }},
          // The raw update path again, on a second exec built the same way:
          // how far one raw exec's figure is from another's.
          {[&] { switch_by_update(switched_last, batch_of(next(last_shape))); }},
      });
  rep.add({"switch to another shape", "template setters + cudaGraphExecUpdate", one_switch[0],
           one_switch[2], "<= 1.1"});
  rep.add({"switch to another shape", "one exec setter a node", one_switch[1], one_switch[2], ""});
  rep.add({"switch, cudag forced to one whole-graph update", "template setters + cudaGraphExecUpdate",
           one_switch[0], one_switch[3], ""});
  rep.add({"switch, cudag forced to exec setters", "one exec setter a node", one_switch[1],
           one_switch[4], ""});
  rep.add({"switch, the raw update path on a second, identical raw exec", "template setters + cudaGraphExecUpdate",
           one_switch[0], one_switch[5], ""});
  destroy_raw(switched_last);

  // ---- one switch, timed in series ---------------------------------------
  // Interleaved, the raw update path is bimodal and differs between two
  // identical raw execs (the row above): each side runs after another
  // side's work, whose traces in the caches and the driver weigh unevenly. Here each exec makes `series` switches back to back:
  // three raw execs and the cudag family, in two passes.
  constexpr int series = 300;
  std::vector<raw_chain> in_series(3);
  for (auto& c : in_series) build_raw(c, &x, kernels, batch_of(0), stream);
  std::vector<double> raw_series, cudag_series;
  const auto time_series = [&](const std::function<void(int)>& switch_to, std::vector<double>& into) {
    int shape = 0;
    for (int i = 0; i < series; ++i) {
      shape = (shape + 17) % shapes;
      const auto start = std::chrono::steady_clock::now();
      switch_to(batch_of(shape));
      into.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& c : in_series) time_series([&](int batch) { switch_by_update(c, batch); }, raw_series);
    time_series([&](int batch) { (void)family.reshape(shape_bindings(batch)); }, cudag_series);
  }
  for (auto& c : in_series) destroy_raw(c);
  rep.add({"switch, timed in series (300 back to back, 2 passes; raw: 3 execs)",
           "template setters + cudaGraphExecUpdate", bench::summarize(raw_series),
           bench::summarize(cudag_series), "<= 1.1"});

  // ---- replay after a reshape, and the results -----------------------------
  const int probe = shapes / 2;
  (void)family.reshape(shape_bindings(batch_of(probe)));
  raw_chain dedicated;
  build_raw(dedicated, &x, kernels, batch_of(probe), stream);
  auto probe_bindings = shape_bindings(batch_of(probe));
  probe_bindings.push_back(cudag::bind("x", x));
  cudag::exec cudag_dedicated = cudag::instantiate(spec, probe_bindings);
  switch_by_update(switched, batch_of(probe));
  // The same switches, then an explicit upload; and switches by exec setters only.
  raw_chain uploaded, by_setters;
  build_raw(uploaded, &x, kernels, batch_of(0), stream);
  build_raw(by_setters, &x, kernels, batch_of(0), stream);
  for (int s = 1; s < shapes; ++s) {
    switch_by_update(uploaded, batch_of(s));
    switch_by_exec_setters(by_setters, batch_of(s));
  }
  switch_by_update(uploaded, batch_of(probe));
  BENCH_CHECK(cudaGraphUpload(uploaded.exec, stream));
  switch_by_exec_setters(by_setters, batch_of(probe));
  // Instantiated at the largest shape, then switched down to the probe.
  raw_chain from_largest;
  build_raw(from_largest, &x, kernels, max_batch, stream);
  switch_by_update(from_largest, batch_of(probe));
  auto largest_bindings = shape_bindings(max_batch);
  largest_bindings.push_back(cudag::bind("x", x));
  cudag::exec family_from_largest = cudag::instantiate(spec, largest_bindings);
  (void)family_from_largest.reshape(shape_bindings(batch_of(probe)));
  // What the replay cost follows: an update that changes nothing; a switch
  // away and back to the instantiated shape; kernel arguments changed and
  // changed back with the launch untouched.
  raw_chain no_change, away_and_back, arguments_only;
  build_raw(no_change, &x, kernels, batch_of(probe), stream);
  {
    cudaGraphExecUpdateResultInfo info{};
    BENCH_CHECK(cudaGraphExecUpdate(no_change.exec, no_change.graph, &info));
  }
  build_raw(away_and_back, &x, kernels, batch_of(probe), stream);
  switch_by_update(away_and_back, max_batch);
  switch_by_update(away_and_back, batch_of(probe));
  build_raw(arguments_only, &x, kernels, batch_of(probe), stream);
  for (const int count : {elements_of(max_batch), elements_of(batch_of(probe))}) {
    for (std::size_t k = 0; k < arguments_only.nodes.size(); ++k) {
      arguments_only.counts[k] = count;
      const cudaKernelNodeParams p = params_for(arguments_only, k, batch_of(probe));
      BENCH_CHECK(cudaGraphExecKernelNodeSetParams(arguments_only.exec, arguments_only.nodes[k], &p));
    }
  }
  // An exec cache keeping four shapes an exec each: the probe shape is
  // acquired among others, then again (an exact hit: its own exec).
  cudag::exec_cache cache({.execs_per_topology = 4, .stream = stream});
  const auto cache_bindings = [&](int batch) {
    auto b = shape_bindings(batch);
    b.push_back(cudag::bind("x", x));
    return b;
  };
  for (const int s : {probe, 0, shapes - 1, probe + 1}) (void)cache.acquire(spec, cache_bindings(batch_of(s)));
  cudag::exec& cached = cache.acquire(spec, cache_bindings(batch_of(probe)));
  if (cache.stats().exact_hits != 1) {
    std::fprintf(stderr, "bench_family: the exec cache did not hold the probe shape\n");
    return 1;
  }
  // Each replay side: one launch of a graph, then a synchronize.
  const auto replay_raw = [&](const raw_chain& c) {
    return bench::side{[&c, stream] {
      BENCH_CHECK(cudaGraphLaunch(c.exec, stream));
      BENCH_CHECK(cudaStreamSynchronize(stream));
    }};
  };
  const auto replay_cudag = [&](cudag::exec& e) {
    return bench::side{[&e, stream] {
      e.launch(stream);
      BENCH_CHECK(cudaStreamSynchronize(stream));
    }};
  };
  const std::vector<bench::summary> replay =
      bench::interleaved(rounds * 4, 2,
                         {replay_raw(dedicated), replay_cudag(family), replay_cudag(cudag_dedicated),
                          replay_raw(switched), replay_raw(uploaded), replay_raw(by_setters),
                          replay_raw(from_largest), replay_cudag(family_from_largest),
                          replay_raw(no_change), replay_raw(away_and_back), replay_raw(arguments_only),
                          replay_cudag(cached)});
  rep.add({"replay after a reshape (launch + synchronize)", "a dedicated exec of that shape", replay[0],
           replay[1], "<= 1.02"});
  rep.add({"replay of a cudag exec instantiated at that shape", "a dedicated exec of that shape",
           replay[0], replay[2], ""});
  rep.add({"replay of the raw exec switched to that shape by update", "a dedicated exec of that shape",
           replay[0], replay[3], ""});
  rep.add({"replay of a raw exec switched by update, then uploaded", "a dedicated exec of that shape",
           replay[0], replay[4], ""});
  rep.add({"replay of a raw exec switched by exec setters only", "a dedicated exec of that shape",
           replay[0], replay[5], ""});
  rep.add({"replay of a raw exec instantiated at the largest shape, switched by update",
           "a dedicated exec of that shape", replay[0], replay[6], ""});
  rep.add({"replay after a reshape, family instantiated at its largest shape",
           "a dedicated exec of that shape", replay[0], replay[7], "<= 1.02"});
  rep.add({"replay of a raw exec after an update that changed nothing", "a dedicated exec of that shape",
           replay[0], replay[8], ""});
  rep.add({"replay of a raw exec switched away and back to its instantiated shape",
           "a dedicated exec of that shape", replay[0], replay[9], ""});
  rep.add({"replay of a raw exec whose kernel arguments changed and changed back",
           "a dedicated exec of that shape", replay[0], replay[10], ""});
  rep.add({"replay of a hot shape from an exec cache (4 execs a topology)",
           "a dedicated exec of that shape", replay[0], replay[11], "<= 1.02"});
  rep.verified(verify_shape("exec cache's exec of batch " + std::to_string(batch_of(probe)),
                            [&](cudaStream_t st) { cached.launch(st); }, stream, x, max_elements,
                            batch_of(probe), kernels));
  for (const int s : {0, probe, shapes - 1}) {
    (void)family.reshape(shape_bindings(batch_of(s)));
    rep.verified(verify_shape("cudag family reshaped to batch " + std::to_string(batch_of(s)),
                              [&](cudaStream_t st) { family.launch(st); }, stream, x, max_elements,
                              batch_of(s), kernels));
  }
  switch_by_update(switched, batch_of(probe));
  rep.verified(verify_shape("raw exec switched by update to batch " + std::to_string(batch_of(probe)),
                            [&](cudaStream_t st) { BENCH_CHECK(cudaGraphLaunch(switched.exec, st)); },
                            stream, x, max_elements, batch_of(probe), kernels));
  destroy_raw(dedicated);
  destroy_raw(switched);
  destroy_raw(uploaded);
  destroy_raw(by_setters);
  destroy_raw(from_largest);
  destroy_raw(no_change);
  destroy_raw(away_and_back);
  destroy_raw(arguments_only);

  rep.print_table();
  rep.print_verified();
  rep.write_json(cl);
  cache.clear();  // its execs and their synchronization need the stream
  held.reset();
  BENCH_CHECK(cudaFree(x));
  BENCH_CHECK(cudaStreamDestroy(stream));
  return 0;
}
