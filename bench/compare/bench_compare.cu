// cudag against what a program would do instead, side by side in one run,
// on four graph shapes (a chain, 8 parallel chains, a fork-join lattice of
// width 8, a seeded random DAG of about 2 edges per node) of 10 to 10,000
// small kernels (one block of 4 threads; node i adds its value to slot i of
// a buffer, so that every node's effect can be checked):
//
//   build        hand-written cudaGraphAddKernelNode calls; stream capture of
//                the same launches (8 streams and events where the shape has
//                parallel work); the builder path (builder calls, resolve(),
//                lower(), which runs check()); the DSL's lower() where a
//                static graph of that shape and size is compiled in
//   build+inst   the same, each followed by instantiation
//   first launch launch + synchronize of a fresh executable graph, with and
//                without an upload first (hand-written and cudag)
//   replay       device-event time of one launch: the hand-written graph,
//                the cudag exec, the same kernels launched on streams
//   rebind       a value read by 1 node, 10% of the nodes, every node: cudag's
//                automatic choice; raw exec setters on the readers; raw
//                template setters + cudaGraphExecUpdate; re-instantiation
//                (every node); a cudag::device_scalar read through a pointer
//                (one small copy, whatever the number of readers)
//   while loop   a builder WHILE node (2 kernels per iteration, the condition
//                set by a kernel) against a host-driven loop (2 launches and
//                a copy of the flag per iteration), 10 to 1,000 iterations
//   cpu          without a GPU too: the builder path, check() and lower() to
//                10^6 nodes, hand-written calls and the DSL's lowering, all
//                through a null native table
//
// Every comparison is interleaved (rotated order per round) after warm-up;
// medians with quartiles; every timed graph is launched once afterwards on
// a zeroed buffer and every slot compared with what the CPU expects.
//
//   bench_compare [--json FILE] [--quick] [--cpu-only] [--no-cpu] [repetitions=41]
//
// Exit codes: 0 done (without a GPU: the CPU part only, said so); 1 a CUDA
// call failed; 2 bad command line; 3 a timed graph computed a wrong result.
#include <cuda.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cudag/device_scalar.hpp"
#include "cudag/error.hpp"
#include "cudag/check.hpp"
#include "cudag/exec.hpp"

#include "bench_report.hpp"
#include "host_side.hpp"
#include "results.hpp"

namespace compare {

__global__ void step(float* buf, int slot, float a) { buf[slot * threads + int(threadIdx.x)] += a; }
__global__ void step_ptr(float* buf, int slot, const float* a) { buf[slot * threads + int(threadIdx.x)] += *a; }
__global__ void loop_decide(cudaGraphConditionalHandle again, int* counter, int limit) {
  const int done = ++*counter;
  cudaGraphSetConditional(again, done < limit ? 1u : 0u);
}
__global__ void host_decide(int* counter, int limit, int* flag) {
  const int done = ++*counter;
  *flag = done < limit ? 1 : 0;
}

}  // namespace compare

namespace {

using namespace compare;
#define CHECK(call) BENCH_CHECK(call)

constexpr int warmup = 3;

const char* usage =
    "usage: bench_compare [--json FILE] [--quick] [--cpu-only] [--no-cpu] [repetitions=41]\n"
    "cudag against hand-written CUDA graph calls, stream capture, stream launches, raw exec\n"
    "updates, a device-resident value and a host-driven loop, on four shapes of 10 to 10,000\n"
    "small kernels; then the CPU cost of the builder path to 10^6 nodes and the DSL's compile\n"
    "time at 32, 128 and 512 nodes (no GPU needed).\n"
    "  --quick     10 to 1,000 nodes, 11 repetitions, CPU part to 10^5 nodes, DSL to 128\n"
    "  --cpu-only  only the CPU part; --no-cpu: only the GPU part\n"
    "Exit: 0 done (without a GPU: the CPU part only), 1 CUDA error, 2 bad command line,\n"
    "3 a timed graph computed a wrong result.\n";

float other(float v) { return v == 2.0f ? 3.0f : 2.0f; }

// ------------------------------------------------------------------ timing --
/// Like bench::interleaved, timed by device events on `stream`: each side
/// enqueues its work on `stream` between two events; the time is the
/// events' elapsed time (microseconds).
std::vector<bench::summary> interleaved_events(int rounds, const std::vector<std::function<void(cudaStream_t)>>& sides,
                                               cudaStream_t stream) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const std::size_t n = sides.size();
  for (int w = 0; w < warmup; ++w)
    for (const auto& s : sides) {
      s(stream);
      CHECK(cudaStreamSynchronize(stream));
    }
  std::vector<std::vector<double>> samples(n);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t which = (std::size_t(r) + k) % n;
      CHECK(cudaEventRecord(start, stream));
      sides[which](stream);
      CHECK(cudaEventRecord(stop, stream));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      samples[which].push_back(1000.0 * double(ms));
    }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return bench::summarize_rounds(std::move(samples));
}

// ------------------------------------------------------------ verification --
struct device_state {
  float* buf = nullptr;  ///< max_nodes * threads floats
  int capacity = 0;      ///< slots
  cudaStream_t streams[lanes] = {};  ///< lane 0 is the timing stream
  std::vector<cudaEvent_t> node_events;
  cudaEvent_t fork = nullptr;
  cudaEvent_t join[lanes] = {};
};

/// Zeroes the buffer, runs `launch` once, and compares slot i with
/// expected[i] (every element of the slot); exit(3) on a mismatch.
void verify_slots(results& out, const std::string& what, const std::function<void(cudaStream_t)>& launch,
                  const device_state& dev, const std::vector<float>& expected) {
  cudaStream_t s = dev.streams[0];
  CHECK(cudaMemsetAsync(dev.buf, 0, sizeof(float) * std::size_t(dev.capacity) * threads, s));
  launch(s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::vector<float> host(expected.size() * threads);
  CHECK(cudaMemcpy(host.data(), dev.buf, sizeof(float) * host.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < host.size(); ++i)
    if (host[i] != expected[i / threads]) {
      std::fprintf(stderr,
                   "bench_compare: WRONG RESULT after timing '%s': slot %zu element %zu is %g, expected %g "
                   "(computed on the CPU)\n",
                   what.c_str(), i / threads, i % threads, double(host[i]), double(expected[i / threads]));
      std::exit(3);
    }
  out.verified(what);
}

std::function<void(cudaStream_t)> launch_exec(cudaGraphExec_t e) {
  return [e](cudaStream_t s) { CHECK(cudaGraphLaunch(e, s)); };
}
std::function<void(cudaStream_t)> launch_graph(cudaGraph_t g) {
  return [g](cudaStream_t s) {
    cudaGraphExec_t e = nullptr;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(e));
  };
}

// ------------------------------------------------ what a program writes --
/// By hand, from nothing: a graph and one kernel node per node, its
/// dependencies' handles gathered from a vector allocated here.
cudaGraph_t hand_written(const dag& d, float* buf) {
  cudaGraph_t g = nullptr;
  CHECK(cudaGraphCreate(&g, 0));
  std::vector<cudaGraphNode_t> nodes(std::size_t(d.nodes), nullptr);
  float a = 1.0f;
  int slot = 0;
  void* args[] = {&buf, &slot, &a};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(&step);
  p.gridDim = dim3(1);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  add_in_order(d, nodes, slot, [&](cudaGraphNode_t* out, const cudaGraphNode_t* deps, std::size_t count) {
    CHECK(cudaGraphAddKernelNode(out, g, deps, count, &p));
  });
  return g;
}

/// By hand through the driver's entry point, the kernel's function resolved
/// once (what cudag does within a batch): the floor under any library that
/// adds kernel nodes, against which cudag's own work is read.
cudaGraph_t hand_written_driver(const dag& d, float* buf) {
  using add_kernel_node = decltype(&cuGraphAddKernelNode);
  static const add_kernel_node add = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    CHECK(cudaGetDriverEntryPointByVersion("cuGraphAddKernelNode", &fn, 12000, cudaEnableDefault, &status));
    if (status != cudaDriverEntryPointSuccess || !fn) {
      std::fprintf(stderr, "bench_compare: the driver has no cuGraphAddKernelNode\n");
      std::exit(1);
    }
    return reinterpret_cast<add_kernel_node>(fn);
  }();
  cudaGraph_t g = nullptr;
  CHECK(cudaGraphCreate(&g, 0));
  cudaFunction_t function = nullptr;
  CHECK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(&step)));
  std::vector<cudaGraphNode_t> nodes(std::size_t(d.nodes), nullptr);
  float a = 1.0f;
  int slot = 0;
  void* args[] = {&buf, &slot, &a};
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = reinterpret_cast<CUfunction>(function);
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = threads;
  p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  add_in_order(d, nodes, slot, [&](cudaGraphNode_t* out, const cudaGraphNode_t* deps, std::size_t count) {
    const CUresult r = add(reinterpret_cast<CUgraphNode*>(out), reinterpret_cast<CUgraph>(g),
                           reinterpret_cast<const CUgraphNode*>(deps), count, &p);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "bench_compare: cuGraphAddKernelNode failed (%d)\n", int(r));
      std::exit(1);
    }
  });
  return g;
}

/// The same kernels launched on streams: lane 0 is `first`; work on other
/// lanes forks from it by an event and joins it at the end; a dependency on
/// another lane is an event wait. A chain uses one stream. Work on one lane
/// is ordered, so the random DAG's stream version orders more than its
/// edges do (as a program launching it on 8 streams would).
void enqueue_streams(const dag& d, const device_state& dev, cudaStream_t first) {
  cudaStream_t lane[lanes];
  for (int l = 0; l < lanes; ++l) lane[l] = l ? dev.streams[l] : first;
  if (d.lanes_used > 1) {
    CHECK(cudaEventRecord(dev.fork, lane[0]));
    for (int l = 1; l < d.lanes_used; ++l) CHECK(cudaStreamWaitEvent(lane[l], dev.fork, 0));
  }
  for (int i = 0; i < d.nodes; ++i) {
    const int my = d.lane[std::size_t(i)];
    cudaStream_t s = lane[my];
    for (int k = 0; k < d.dep_count(i); ++k) {
      const int p = d.deps_of(i)[k];
      if (d.lane[std::size_t(p)] != my) CHECK(cudaStreamWaitEvent(s, dev.node_events[std::size_t(p)], 0));
    }
    step<<<1, threads, 0, s>>>(dev.buf, i, 1.0f);
    if (d.signals[std::size_t(i)]) CHECK(cudaEventRecord(dev.node_events[std::size_t(i)], s));
  }
  if (d.lanes_used > 1)
    for (int l = 1; l < d.lanes_used; ++l) {
      CHECK(cudaEventRecord(dev.join[l], lane[l]));
      CHECK(cudaStreamWaitEvent(lane[0], dev.join[l], 0));
    }
  CHECK(cudaGetLastError());
}

cudaGraph_t captured(const dag& d, const device_state& dev) {
  CHECK(cudaStreamBeginCapture(dev.streams[0], cudaStreamCaptureModeGlobal));
  enqueue_streams(d, dev, dev.streams[0]);
  cudaGraph_t g = nullptr;
  CHECK(cudaStreamEndCapture(dev.streams[0], &g));
  return g;
}

/// The hand-written graph kept for rebinding: per node its own argument
/// block (as a program that changes its nodes keeps them), what each node of
/// the template and of the executable graph holds.
struct raw_graph {
  struct node_args {
    float* buf;
    int slot;
    float a;
    void* pointers[3];
    cudaKernelNodeParams params;
  };
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  std::vector<node_args> args;
  std::vector<float> template_value, exec_value;

  raw_graph(const dag& d, float* buf)
      : nodes(std::size_t(d.nodes)), args(std::size_t(d.nodes)), template_value(std::size_t(d.nodes), 2.0f),
        exec_value(std::size_t(d.nodes), 2.0f) {
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t deps[lattice_width];
    for (int i = 0; i < d.nodes; ++i) {
      node_args& a = args[std::size_t(i)];
      a.buf = buf;
      a.slot = i;
      a.a = 2.0f;
      a.pointers[0] = &a.buf;
      a.pointers[1] = &a.slot;
      a.pointers[2] = &a.a;
      a.params = {};
      a.params.func = reinterpret_cast<void*>(&step);
      a.params.gridDim = dim3(1);
      a.params.blockDim = dim3(threads);
      a.params.kernelParams = a.pointers;
      const int k = d.dep_count(i);
      for (int j = 0; j < k; ++j) deps[j] = nodes[std::size_t(d.deps_of(i)[j])];
      CHECK(cudaGraphAddKernelNode(&nodes[std::size_t(i)], graph, deps, std::size_t(k), &a.params));
    }
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
  }
  raw_graph(const raw_graph&) = delete;
  raw_graph& operator=(const raw_graph&) = delete;
  ~raw_graph() {
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  }
};

std::vector<float> values(int n, int readers, float reader_value, float others) {
  std::vector<float> v(std::size_t(n), others);
  std::fill(v.begin(), v.begin() + std::min(readers, n), reader_value);
  return v;
}

// ---------------------------------------------------------------- GPU part --
struct settings {
  std::vector<int> sizes;
  int reps = 41;
  int big_reps = 21;  ///< at 10,000 nodes
};

void gpu_shape(results& out, const settings& cfg, device_state& dev, shape s, int n) {
  const dag d = make_dag(s, n);
  const char* key = shape_key(s);
  const int reps = n >= 10000 ? cfg.big_reps : cfg.reps;
  cudaStream_t stream = dev.streams[0];
  const bool dsl = dsl_side::available(s, n);
  const std::vector<float> ones(std::size_t(n), 1.0f);
  std::fflush(stdout);
  std::fprintf(stderr, "bench_compare: %s, %d nodes\n", shape_name(s), n);
  auto label = [&](const std::string& what) {
    return std::string(key) + " " + std::to_string(n) + ": " + what;
  };

  // ---- build from nothing: to a cudaGraph_t.
  {
    cudaGraph_t hand = nullptr, capture = nullptr, hand_driver = nullptr;
    std::optional<cudag::lowered_graph> built;
    std::vector<bench::side> sides{
        {[&] { hand = hand_written(d, dev.buf); },
         [&] {
           if (hand) CHECK(cudaGraphDestroy(hand));
           hand = nullptr;
         }},
        {[&] { hand_driver = hand_written_driver(d, dev.buf); },
         [&] {
           if (hand_driver) CHECK(cudaGraphDestroy(hand_driver));
           hand_driver = nullptr;
         }},
        {[&] { capture = captured(d, dev); },
         [&] {
           if (capture) CHECK(cudaGraphDestroy(capture));
           capture = nullptr;
         }},
        {[&] { built.emplace(cudag::lower(builder_spec(d, n), bindings(dev.buf, 1.0f, 1.0f))); },
         [&] { built.reset(); }}};
    if (dsl) sides.push_back({[&] { dsl_side::lower(s, n, dev.buf, 1.0f); }, [&] { dsl_side::release(); }});
    const std::vector<bench::summary> t = bench::interleaved(reps, warmup, sides);
    out.add("build", key, n, "hand-written", t[0]);
    out.add("build", key, n, "hand-written, driver", t[1]);
    out.add("build", key, n, "stream capture", t[2]);
    out.add("build", key, n, "builder", t[3]);
    if (dsl) out.add("build", key, n, "DSL", t[4]);
    out.ratio("build", key, n, "builder", "hand-written", "<= 1.25");
    out.ratio("build", key, n, "builder", "stream capture", "<= 1.00");
    out.ratio("build", key, n, "builder", "hand-written, driver");
    out.ratio("build", key, n, "hand-written, driver", "hand-written");
    if (dsl) {
      out.ratio("build", key, n, "DSL", "hand-written", "<= 1.05");
      out.ratio("build", key, n, "DSL", "stream capture", "<= 1.00");
      out.ratio("build", key, n, "DSL", "hand-written, driver");
    }
    verify_slots(out, label("build: hand-written graph"), launch_graph(hand), dev, ones);
    verify_slots(out, label("build: hand-written driver graph"), launch_graph(hand_driver), dev, ones);
    verify_slots(out, label("build: captured graph"), launch_graph(capture), dev, ones);
    verify_slots(out, label("build: builder's graph"), launch_graph(built->graph.get()), dev, ones);
    if (dsl) verify_slots(out, label("build: DSL graph"), launch_graph(dsl_side::graph()), dev, ones);
    CHECK(cudaGraphDestroy(hand));
    CHECK(cudaGraphDestroy(hand_driver));
    CHECK(cudaGraphDestroy(capture));
    dsl_side::release();
  }

  // ---- where the builder path's time goes, with the real driver: each
  // phase alone (a spec built once for check and lower), interleaved with
  // the hand-written calls, whose graph is destroyed untimed here.
  {
    cudaGraph_t hand = nullptr;
    const cudag::resolved_graph spec = builder_spec(d, n);
    const std::vector<cudag::binding> binds = bindings(dev.buf, 1.0f, 1.0f);
    std::optional<cudag::resolved_graph> spec_only;
    std::optional<cudag::lowered_graph> lowered;
    std::vector<bench::side> sides{
        {[&] { hand = hand_written(d, dev.buf); },
         [&] {
           if (hand) CHECK(cudaGraphDestroy(hand));
           hand = nullptr;
         }},
        {[&] { spec_only.emplace(builder_spec(d, n)); }, [&] { spec_only.reset(); }},
        {[&] { cudag::check(spec, binds); }},
        {[&] { lowered.emplace(cudag::lower(spec, binds)); }, [&] { lowered.reset(); }}};
    const std::vector<bench::summary> t = bench::interleaved(reps, warmup, sides);
    out.add("build phases", key, n, "hand-written", t[0]);
    out.add("build phases", key, n, "builder + resolve()", t[1]);
    out.add("build phases", key, n, "check()", t[2]);
    out.add("build phases", key, n, "lower() (incl. check)", t[3]);
    out.ratio("build phases", key, n, "lower() (incl. check)", "hand-written");
    verify_slots(out, label("build phases: lowered graph"), launch_graph(lowered->graph.get()), dev, ones);
    lowered.reset();
  }

  // ---- build + instantiate from nothing.
  {
    cudaGraph_t hand_graph = nullptr, capture_graph = nullptr;
    cudaGraphExec_t hand = nullptr, capture = nullptr;
    std::optional<cudag::exec> ours;
    auto release = [](cudaGraph_t& g, cudaGraphExec_t& e) {
      if (e) CHECK(cudaGraphExecDestroy(e));
      if (g) CHECK(cudaGraphDestroy(g));
      e = nullptr;
      g = nullptr;
    };
    std::vector<bench::side> sides{
        {[&] {
           hand_graph = hand_written(d, dev.buf);
           CHECK(cudaGraphInstantiate(&hand, hand_graph, 0));
         },
         [&] { release(hand_graph, hand); }},
        {[&] {
           capture_graph = captured(d, dev);
           CHECK(cudaGraphInstantiate(&capture, capture_graph, 0));
         },
         [&] { release(capture_graph, capture); }},
        {[&] { ours.emplace(cudag::instantiate(builder_spec(d, n), bindings(dev.buf, 1.0f, 1.0f))); },
         [&] { ours.reset(); }}};
    if (dsl) sides.push_back({[&] { dsl_side::instantiate(s, n, dev.buf, 1.0f); }, [&] { dsl_side::release_exec(); }});
    const std::vector<bench::summary> t = bench::interleaved(reps, warmup, sides);
    out.add("build+instantiate", key, n, "hand-written", t[0]);
    out.add("build+instantiate", key, n, "stream capture", t[1]);
    out.add("build+instantiate", key, n, "builder", t[2]);
    if (dsl) out.add("build+instantiate", key, n, "DSL", t[3]);
    out.ratio("build+instantiate", key, n, "builder", "hand-written");
    if (dsl) out.ratio("build+instantiate", key, n, "DSL", "hand-written");
    verify_slots(out, label("build+instantiate: hand-written"), launch_exec(hand), dev, ones);
    verify_slots(out, label("build+instantiate: captured"), launch_exec(capture), dev, ones);
    verify_slots(out, label("build+instantiate: builder"), [&](cudaStream_t st) { ours->launch(st); }, dev, ones);
    if (dsl) verify_slots(out, label("build+instantiate: DSL"), dsl_side::launch, dev, ones);
    release(hand_graph, hand);
    release(capture_graph, capture);
    dsl_side::release_exec();
  }

  // ---- first launch of a fresh executable graph, with and without an
  // upload first (instantiation and upload untimed).
  {
    cudaGraph_t hand_graph = hand_written(d, dev.buf);
    const cudag::resolved_graph spec = builder_spec(d, n);
    const std::vector<cudag::binding> binds = bindings(dev.buf, 1.0f, 1.0f);
    cudaGraphExec_t plain = nullptr, uploaded = nullptr;
    std::optional<cudag::exec> ours_plain, ours_uploaded;
    cudag::instantiate_options upload;
    upload.upload = true;
    upload.upload_stream = stream;
    auto fresh = [&](cudaGraphExec_t& e, bool up) {
      if (e) CHECK(cudaGraphExecDestroy(e));
      CHECK(cudaGraphInstantiate(&e, hand_graph, 0));
      if (up) CHECK(cudaGraphUpload(e, stream));
      CHECK(cudaStreamSynchronize(stream));
    };
    const std::vector<bench::summary> t = bench::interleaved(
        reps, warmup,
        {{[&] {
            CHECK(cudaGraphLaunch(plain, stream));
            CHECK(cudaStreamSynchronize(stream));
          },
          [&] { fresh(plain, false); }},
         {[&] {
            CHECK(cudaGraphLaunch(uploaded, stream));
            CHECK(cudaStreamSynchronize(stream));
          },
          [&] { fresh(uploaded, true); }},
         {[&] {
            ours_plain->launch(stream);
            ours_plain->synchronize(stream);
          },
          [&] {
            ours_plain.reset();
            ours_plain.emplace(cudag::instantiate(spec, binds));
          }},
         {[&] {
            ours_uploaded->launch(stream);
            ours_uploaded->synchronize(stream);
          },
          [&] {
            ours_uploaded.reset();
            ours_uploaded.emplace(cudag::instantiate(spec, binds, upload));
            CHECK(cudaStreamSynchronize(stream));
          }}});
    out.add("first launch", key, n, "hand-written", t[0]);
    out.add("first launch", key, n, "hand-written, uploaded", t[1]);
    out.add("first launch", key, n, "cudag", t[2]);
    out.add("first launch", key, n, "cudag, uploaded", t[3]);
    out.ratio("first launch", key, n, "cudag", "hand-written");
    out.ratio("first launch", key, n, "cudag, uploaded", "hand-written, uploaded");
    out.ratio("first launch", key, n, "hand-written, uploaded", "hand-written");
    verify_slots(out, label("first launch: hand-written"), launch_exec(plain), dev, ones);
    verify_slots(out, label("first launch: hand-written, uploaded"), launch_exec(uploaded), dev, ones);
    verify_slots(out, label("first launch: cudag"), [&](cudaStream_t st) { ours_plain->launch(st); }, dev, ones);
    verify_slots(out, label("first launch: cudag, uploaded"), [&](cudaStream_t st) { ours_uploaded->launch(st); },
                 dev, ones);
    CHECK(cudaGraphExecDestroy(plain));
    CHECK(cudaGraphExecDestroy(uploaded));
    CHECK(cudaGraphDestroy(hand_graph));
  }

  // The graphs kept for replay and rebinding: the hand-written one (every
  // node holds 2.0), and cudag's with the first k nodes reading "a" (2.0),
  // the others "c" (1.0), for k = 1, 10% and all nodes; the same with the
  // readers reading a device_scalar<float> through a pointer.
  raw_graph raw(d, dev.buf);
  const int fractions[3] = {1, std::max(1, n / 10), n};
  const char* sections[3] = {"rebind 1 reader", "rebind 10% readers", "rebind all readers"};
  std::vector<cudag::exec> execs;
  std::vector<float> exec_a(3, 2.0f);
  std::vector<std::optional<cudag::device_scalar<float>>> scalars(3);
  std::vector<cudag::exec> scalar_execs;
  std::vector<float> scalar_value(3, 2.0f);
  for (int f = 0; f < 3; ++f) {
    execs.push_back(cudag::instantiate(builder_spec(d, fractions[f]), bindings(dev.buf, 2.0f, 1.0f)));
    scalars[std::size_t(f)].emplace(2.0f);
    scalar_execs.push_back(
        cudag::instantiate(scalar_spec(d, fractions[f]), scalar_bindings(dev.buf, scalars[std::size_t(f)]->get(), 1.0f)));
  }
  cudag::exec& all = execs[2];

  // ---- replay: device-event time of one launch.
  {
    const std::vector<bench::summary> t = interleaved_events(
        3 * reps,
        {[&](cudaStream_t st) { CHECK(cudaGraphLaunch(raw.exec, st)); }, [&](cudaStream_t st) { all.launch(st); },
         [&](cudaStream_t st) { enqueue_streams(d, dev, st); }},
        stream);
    out.add("replay", key, n, "hand-written graph", t[0]);
    out.add("replay", key, n, "cudag", t[1]);
    out.add("replay", key, n, "stream launches", t[2]);
    out.ratio("replay", key, n, "cudag", "hand-written graph", "<= 1.02");
    out.ratio("replay", key, n, "stream launches", "cudag", s == shape::chain && n == 1000 ? ">= 4" : "");
    verify_slots(out, label("replay: hand-written exec"), launch_exec(raw.exec), dev, raw.exec_value);
    verify_slots(out, label("replay: cudag exec"), [&](cudaStream_t st) { all.launch(st); }, dev,
                 values(n, n, exec_a[2], 1.0f));
    verify_slots(out, label("replay: stream launches"), [&](cudaStream_t st) { enqueue_streams(d, dev, st); }, dev,
                 ones);
  }

  // ---- rebinding. Every executable graph has been launched (above, or
  // here) before its rebinds are timed; every rebind changes the value.
  CHECK(cudaGraphLaunch(raw.exec, stream));
  for (auto& e : execs) e.launch(stream);
  for (auto& e : scalar_execs) e.launch(stream);
  CHECK(cudaStreamSynchronize(stream));
  cudaGraphExec_t reinstantiated = nullptr;
  std::vector<float> reinstantiated_value;
  for (int f = 0; f < 3; ++f) {
    const int k = fractions[f];
    const char* section = sections[f];
    cudag::exec& ours = execs[std::size_t(f)];
    float& ours_a = exec_a[std::size_t(f)];
    cudag::device_scalar<float>& scalar = *scalars[std::size_t(f)];
    float& scalar_a = scalar_value[std::size_t(f)];
    std::vector<bench::side> sides{
        {[&] { ours.rebind("a", ours_a = other(ours_a)); }},
        {[&] {
           const float v = other(raw.exec_value[0]);
           for (int i = 0; i < k; ++i) {
             raw.args[std::size_t(i)].a = v;
             CHECK(cudaGraphExecKernelNodeSetParams(raw.exec, raw.nodes[std::size_t(i)], &raw.args[std::size_t(i)].params));
             raw.exec_value[std::size_t(i)] = v;
           }
         }},
        {[&] {
           const float v = other(raw.exec_value[0]);
           for (int i = 0; i < k; ++i) {
             raw.args[std::size_t(i)].a = v;
             CHECK(cudaGraphKernelNodeSetParams(raw.nodes[std::size_t(i)], &raw.args[std::size_t(i)].params));
             raw.template_value[std::size_t(i)] = v;
           }
           cudaGraphExecUpdateResultInfo info{};
           CHECK(cudaGraphExecUpdate(raw.exec, raw.graph, &info));
           raw.exec_value = raw.template_value;
         }},
        {[&] { scalar.set(scalar_a = other(scalar_a), stream); }}};
    if (k == n)
      sides.push_back({[&] {
                         CHECK(cudaGraphInstantiate(&reinstantiated, raw.graph, 0));
                         reinstantiated_value = raw.template_value;
                       },
                       [&] {
                         if (reinstantiated) CHECK(cudaGraphExecDestroy(reinstantiated));
                         reinstantiated = nullptr;
                       }});
    const std::vector<bench::summary> t = bench::interleaved(k == 1 ? 20 * reps : reps, warmup, sides);
    CHECK(cudaStreamSynchronize(stream));
    out.add(section, key, n, "cudag", t[0]);
    out.add(section, key, n, "raw exec setters", t[1]);
    out.add(section, key, n, "raw template setters + cudaGraphExecUpdate", t[2]);
    out.add(section, key, n, "faster raw path", t[1].median <= t[2].median ? t[1] : t[2]);
    out.add(section, key, n, "device_scalar set", t[3]);
    if (k == n) out.add(section, key, n, "re-instantiation", t[4]);
    if (k == 1) {
      out.ratio(section, key, n, "cudag", "raw exec setters", "<= 1.2");
      // The same two sides alone, without the other sides' whole-graph
      // updates and copies between them: whether those slow the next setter.
      const std::vector<bench::summary> pair = bench::interleaved(20 * reps, warmup, {sides[0], sides[1]});
      CHECK(cudaStreamSynchronize(stream));
      out.add(section, key, n, "cudag, two sides only", pair[0]);
      out.add(section, key, n, "raw exec setters, two sides only", pair[1]);
      out.ratio(section, key, n, "cudag, two sides only", "raw exec setters, two sides only");
    } else if (k == n) {
      out.ratio(section, key, n, "cudag", "faster raw path", "<= 1.1");
      out.ratio(section, key, n, "cudag", "re-instantiation");
    } else {
      out.ratio(section, key, n, "cudag", "faster raw path");
    }
    out.ratio(section, key, n, "device_scalar set", "cudag");
    const std::string what = std::string(section) + ": ";
    verify_slots(out, label(what + "cudag exec"), [&](cudaStream_t st) { ours.launch(st); }, dev,
                 values(n, k, ours_a, 1.0f));
    verify_slots(out, label(what + "raw exec (setters, template + update)"), launch_exec(raw.exec), dev,
                 raw.exec_value);
    verify_slots(out, label(what + "device_scalar exec"), [&](cudaStream_t st) { scalar_execs[std::size_t(f)].launch(st); },
                 dev, values(n, k, scalar_a, 1.0f));
    if (k == n) {
      verify_slots(out, label(what + "re-instantiated raw exec"), launch_exec(reinstantiated), dev,
                   reinstantiated_value);
      CHECK(cudaGraphExecDestroy(reinstantiated));
      reinstantiated = nullptr;
    }
  }
  CHECK(cudaStreamSynchronize(stream));
}

/// A builder WHILE node against a host-driven loop.
void gpu_while(results& out, const settings& cfg, device_state& dev) {
  cudaStream_t stream = dev.streams[0];
  int* counter = nullptr;
  int* flag = nullptr;
  int* host_flag = nullptr;
  CHECK(cudaMalloc(&counter, sizeof(int)));
  CHECK(cudaMalloc(&flag, sizeof(int)));
  CHECK(cudaMallocHost(&host_flag, sizeof(int)));
  for (int iterations : {10, 100, 1000}) {
    std::fprintf(stderr, "bench_compare: while loop, %d iterations\n", iterations);
    cudag::exec loop = cudag::instantiate(while_spec(), while_bindings(dev.buf, counter, iterations));
    auto host_loop = [&](cudaStream_t st) {
      CHECK(cudaMemsetAsync(counter, 0, sizeof(int), st));
      do {
        step<<<1, threads, 0, st>>>(dev.buf, 0, 1.0f);
        host_decide<<<1, 1, 0, st>>>(counter, iterations, flag);
        CHECK(cudaMemcpyAsync(host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, st));
        CHECK(cudaStreamSynchronize(st));
      } while (*host_flag);
    };
    const std::vector<bench::summary> t =
        interleaved_events(cfg.reps, {[&](cudaStream_t st) { loop.launch(st); }, host_loop}, stream);
    out.add("while loop", "while", iterations, "WHILE node", t[0]);
    out.add("while loop", "while", iterations, "host-driven loop", t[1]);
    out.ratio("while loop", "while", iterations, "host-driven loop", "WHILE node", iterations == 1000 ? ">= 3" : "");
    std::vector<float> expected(1, float(iterations));
    for (const auto& [what, run] :
         std::vector<std::pair<std::string, std::function<void(cudaStream_t)>>>{
             {"WHILE node", [&](cudaStream_t st) { loop.launch(st); }}, {"host-driven loop", host_loop}}) {
      verify_slots(out, "while " + std::to_string(iterations) + ": " + what, run, dev, expected);
      int done = 0;
      CHECK(cudaMemcpy(&done, counter, sizeof(int), cudaMemcpyDeviceToHost));
      if (done != iterations) {
        std::fprintf(stderr, "bench_compare: WRONG RESULT after timing the %s: %d iterations, expected %d\n",
                     what.c_str(), done, iterations);
        std::exit(3);
      }
    }
  }
  CHECK(cudaFree(counter));
  CHECK(cudaFree(flag));
  CHECK(cudaFreeHost(host_flag));
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown CPU");
}

}  // namespace

int main(int argc, char** argv) {
  bench::program_name = "bench_compare";
  bool quick = false, cpu_only = false, no_cpu = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i && a == "--quick") quick = true;
    else if (i && a == "--cpu-only") cpu_only = true;
    else if (i && a == "--no-cpu") no_cpu = true;
    else rest.push_back(argv[i]);
  }
  bench::command_line cl = bench::parse_command_line(int(rest.size()), rest.data(), usage);
  cl.text.clear();
  for (int i = 0; i < argc; ++i) cl.text += (i ? " " : "") + bench::quoted(argv[i]);
  if (cl.positional.size() > 1 || (cpu_only && no_cpu)) {
    std::fprintf(stderr, "bench_compare: bad command line\n%s", usage);
    return 2;
  }
  settings cfg;
  cfg.reps = bench::positive_argument(cl, 0, quick ? 11 : 41, "repetitions");
  cfg.big_reps = std::max(5, cfg.reps / 2);
  cfg.sizes = quick ? std::vector<int>{10, 100, 1000} : std::vector<int>{10, 100, 1000, 10000};

  results out;
  std::string device = "none", versions = "", gpu_reason;
  int devices = 0;
  const cudaError_t code = cudaGetDeviceCount(&devices);
  const bool gpu = code == cudaSuccess && devices > 0;
  if (!gpu) {
    gpu_reason = code != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorName(code)
                                     : std::string("cudaGetDeviceCount: 0 devices");
    (void)cudaGetLastError();
  }
  const bool run_gpu = gpu && !cpu_only;
  out.setting("quick", quick ? "true" : "false");
  out.setting("repetitions", std::to_string(cfg.reps));
  out.setting("repetitions_10000_nodes", std::to_string(cfg.big_reps));
  out.setting("warmup", std::to_string(warmup));
  out.setting("threads_per_kernel", std::to_string(threads));
  out.setting("random_dag_seed", "1");
  std::string sizes_json = "[";
  for (std::size_t i = 0; i < cfg.sizes.size(); ++i) sizes_json += (i ? ", " : "") + std::to_string(cfg.sizes[i]);
  out.setting("sizes", sizes_json + "]");

  const std::string date = bench::utc_now();
  std::printf("bench_compare, %s\ncommand: %s\nhost CPU: %s\n", date.c_str(), cl.text.c_str(), cpu_model().c_str());
  if (!gpu) std::printf("bench_compare: no GPU: GPU part not measured (%s); the CPU part runs\n", gpu_reason.c_str());

  try {
    if (run_gpu) {
      int dev_index = 0;
      CHECK(cudaGetDevice(&dev_index));
      cudaDeviceProp prop{};
      CHECK(cudaGetDeviceProperties(&prop, dev_index));
      device = prop.name;
      int driver = 0, runtime = 0;
      CHECK(cudaDriverGetVersion(&driver));
      CHECK(cudaRuntimeGetVersion(&runtime));
      versions = "CUDA driver API " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                 ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
      std::printf("device: %s (%s)\n", device.c_str(), versions.c_str());
      std::printf("sizes:");
      for (int n : cfg.sizes) std::printf(" %d", n);
      std::printf("; repetitions %d (%d at 10,000 nodes), replay %dx that, 1-reader rebind 20x\n\n", cfg.reps,
                  cfg.big_reps, 3);

      device_state dev;
      dev.capacity = cfg.sizes.back();
      CHECK(cudaMalloc(&dev.buf, sizeof(float) * std::size_t(dev.capacity) * threads));
      for (auto& l : dev.streams) CHECK(cudaStreamCreateWithFlags(&l, cudaStreamNonBlocking));
      dev.node_events.resize(std::size_t(dev.capacity));
      for (auto& e : dev.node_events) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      CHECK(cudaEventCreateWithFlags(&dev.fork, cudaEventDisableTiming));
      for (auto& e : dev.join) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

      for (shape s : all_shapes)
        for (int n : cfg.sizes) gpu_shape(out, cfg, dev, s, n);
      gpu_while(out, cfg, dev);

      for (auto& e : dev.node_events) CHECK(cudaEventDestroy(e));
      CHECK(cudaEventDestroy(dev.fork));
      for (auto& e : dev.join) CHECK(cudaEventDestroy(e));
      for (auto& l : dev.streams) CHECK(cudaStreamDestroy(l));
      CHECK(cudaFree(dev.buf));
      out.note(dsl_side::what_is_built());
      out.note("stream capture and stream launches use one stream for a chain and 8 streams with events "
               "otherwise; on the random DAG the order within each stream adds edges the DAG does not have");
      out.note("replay: device-event time of one launch (medians of " + std::to_string(3 * cfg.reps) +
               "); rebind and build: host time of the call");
      out.note("device_scalar set: host time of one cudaMemcpyAsync of the new value (ordered before the next "
               "launch), whatever the number of readers");
    } else if (cpu_only) {
      std::printf("GPU part skipped (--cpu-only)\n");
    }
    if (!no_cpu) {
      std::fflush(stdout);
      std::fprintf(stderr, "bench_compare: CPU part (null native table)\n");
      run_cpu_part(out, quick, cfg.reps);
      out.note("cpu: host time with every native call answered by a null table (no GPU, no driver): what cudag "
               "costs on top of the driver; medians of " + std::to_string(cfg.reps) +
               " rounds to 1,000 nodes, fewer above");
      std::fprintf(stderr, "bench_compare: DSL compile time (bench/dsl/measure_compile.sh)\n");
      if (const std::string why = run_dsl_compile_part(out, quick); !why.empty())
        out.note("dsl compile: not measured: " + why);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_compare: %s\n", e.what());
    return 1;
  }

  if (run_gpu) {
    out.print_section("build", "Build from nothing (host us)");
    out.print_section("build phases", "The builder path's phases, real driver (host us)");
    out.print_section("build+instantiate", "Build + instantiate from nothing (host us)");
    out.print_section("first launch", "First launch + synchronize of a fresh executable graph (host us)");
    out.print_section("replay", "Replay: one launch (device-event us)");
    out.print_section("rebind 1 reader", "Rebind a value read by 1 node (host us)");
    out.print_section("rebind 10% readers", "Rebind a value read by 10% of the nodes (host us)");
    out.print_section("rebind all readers", "Rebind a value read by every node (host us)");
    out.print_section("while loop", "WHILE node against a host-driven loop (device-event us)");
  }
  if (!no_cpu) {
    out.print_section("cpu", "CPU part: null native table (host us)");
    out.print_section("dsl compile", "DSL compile time per node count, one compile each (host us, wall clock)");
  }
  std::printf("### Goals\n\n");
  out.print_ratios(false);
  std::printf("### Every ratio\n\n");
  out.print_ratios(true);
  out.print_notes();
  if (!gpu) std::printf("note: no GPU (%s): GPU part not measured\n", gpu_reason.c_str());
  out.print_verified();

  if (!cl.json_path.empty()) {
    const std::vector<std::pair<std::string, std::string>> head{
        {"program", bench::json_string("bench_compare")},
        {"gpu_measured", run_gpu ? "true" : "false"},
        {"gpu_reason", bench::json_string(run_gpu ? "" : gpu ? "--cpu-only" : "no GPU: " + gpu_reason)},
        {"device", bench::json_string(device)},
        {"versions", bench::json_string(versions)},
        {"host_cpu", bench::json_string(cpu_model())},
        {"date", bench::json_string(date)},
        {"command", bench::json_string(cl.text)}};
    bench::report::write_file(cl.json_path, out.json(head));
    std::printf("JSON report written to %s\n", cl.json_path.c_str());
  }
  return 0;
}
