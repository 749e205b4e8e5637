// Two graphs on two streams, built with the run-time builder and kept in
// step by event nodes alone: the producer graph fills a batch and records
// `ready`; the consumer graph waits for `ready`, folds the batch into running
// totals, records `consumed` (which the producer's next replay waits for
// before it overwrites the batch) and reports progress from a host node.
// The host thread only launches: it never waits between rounds.
//
// The totals are verified against the same rounds on the CPU. The fold is
// order-sensitive (totals = 31 * totals + batch), so a batch consumed twice,
// skipped, or read before it was written changes the result; the batch
// buffer starts poisoned. The host node must report every round, in order.
// Without a GPU both graphs are still checked and drawn, and the program
// says that nothing ran.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "../common/show_graph.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/handles.hpp"

namespace {

constexpr int n = 1 << 15;       // batch size
constexpr int rounds = 64;       // producer/consumer replays
constexpr int work = 64;         // hashing rounds per element: a slower producer
constexpr int block = 256;

__host__ __device__ unsigned mix(unsigned v) {
  v ^= v >> 16;
  v *= 0x7feb352du;
  v ^= v >> 15;
  v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}

/// Element i of batch `round`.
__host__ __device__ unsigned element(int round, int i) {
  unsigned v = unsigned(round) * unsigned(n) + unsigned(i);
  for (int k = 0; k < work; ++k) v = mix(v + unsigned(k));
  return v;
}

__global__ void produce(unsigned* batch, int count, int round) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) batch[i] = element(round, i);
}

__global__ void consume(const unsigned* batch, unsigned* totals, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) totals[i] = 31u * totals[i] + batch[i];
}

/// wait(consumed) -> produce -> record(ready)
cudag::graph_spec producer_graph() {
  cudag::builder b("producer");
  auto batch = b.param<unsigned*>("batch");
  auto round = b.param<int>("round");
  auto consumed = b.param<cudaEvent_t>("consumed");
  auto ready = b.param<cudaEvent_t>("ready");
  auto wait_free = b.wait("wait_consumed", consumed);
  auto make = b.kernel("produce", CUDAG_KERNEL(produce), cudag::launch(n / block, block), batch, n,
                       round);
  auto signal = b.record("record_ready", ready);
  b.chain(wait_free, make, signal);
  return std::move(b).build();
}

/// wait(ready) -> consume -> record(consumed), and consume -> report.
/// `reported` collects the rounds the host node saw, in order.
cudag::graph_spec consumer_graph(std::vector<int>* reported) {
  cudag::builder b("consumer");
  auto batch = b.param<const unsigned*>("batch");
  auto totals = b.param<unsigned*>("totals");
  auto round = b.param<int>("round");
  auto ready = b.param<cudaEvent_t>("ready");
  auto consumed = b.param<cudaEvent_t>("consumed");
  auto wait_ready = b.wait("wait_ready", ready);
  auto fold = b.kernel("consume", CUDAG_KERNEL(consume), cudag::launch(n / block, block), batch,
                       totals, n);
  auto release = b.record("record_consumed", consumed);
  auto report = b.host(
      "report",
      [reported](int r) {
        reported->push_back(r);
        if ((r + 1) % 16 == 0) std::printf("consumer graph: %d of %d batches folded\n", r + 1, rounds);
      },
      round);
  b.chain(wait_ready, fold, release);
  b.edge(fold, report);
  return std::move(b).build();
}

/// The same rounds on the CPU.
std::vector<unsigned> reference() {
  std::vector<unsigned> totals(n, 0u);
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i) totals[i] = 31u * totals[i] + element(r, i);
  return totals;
}

/// "dir/streams.dot" -> "dir/streams-<part>.dot"
std::string picture_of(const std::string& dot_path, const std::string& part) {
  const std::size_t dot = dot_path.rfind(".dot");
  return (dot == std::string::npos ? dot_path : dot_path.substr(0, dot)) + "-" + part + ".dot";
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
  const std::string picture = argc > 1 ? argv[1] : "streams.dot";
  std::vector<int> reported;  // written by the consumer's host node
  try {
    const cudag::graph_spec producer_spec = producer_graph();
    const cudag::graph_spec consumer_spec = consumer_graph(&reported);
    examples::check_and_draw(producer_spec, picture_of(picture, "producer"));
    examples::check_and_draw(consumer_spec, picture_of(picture, "consumer"));
    if (!examples::gpu_present()) return examples::nothing_ran_status(argc, argv);

    const std::vector<unsigned> expected = reference();
    cudag::device_buffer<unsigned> d_batch(n), d_totals(n);
    CHECK_CUDA(cudaMemset(d_batch.data(), 0xFF, n * sizeof(unsigned)));  // poison
    CHECK_CUDA(cudaMemset(d_totals.data(), 0, n * sizeof(unsigned)));
    CHECK_CUDA(cudaDeviceSynchronize());  // before the non-blocking streams
    const cudag::unique_event ready = cudag::make_event(), consumed = cudag::make_event();

    const cudag::binding producer_binds[] = {
        cudag::bind("batch", d_batch.data()), cudag::bind("round", 0),
        cudag::bind("consumed", consumed.get()), cudag::bind("ready", ready.get())};
    const cudag::binding consumer_binds[] = {
        cudag::bind("batch", static_cast<const unsigned*>(d_batch.data())),
        cudag::bind("totals", d_totals.data()), cudag::bind("round", 0),
        cudag::bind("ready", ready.get()), cudag::bind("consumed", consumed.get())};
    cudag::exec producer = cudag::instantiate(producer_spec, producer_binds);
    cudag::exec consumer = cudag::instantiate(consumer_spec, consumer_binds);
    const cudag::unique_stream producer_stream = cudag::make_stream();
    const cudag::unique_stream consumer_stream = cudag::make_stream();

    for (int r = 0; r < rounds; ++r) {
      // Each launch keeps the round it was launched with (the host node
      // gets its own copy), so rebinding does not wait for earlier rounds.
      producer.rebind("round", r);
      consumer.rebind("round", r);
      producer.launch(producer_stream.get());  // waits for round r-1's `consumed`
      consumer.launch(consumer_stream.get());  // waits for round r's `ready`
    }
    CHECK_CUDA(cudaGetLastError());
    producer.synchronize(producer_stream.get());
    consumer.synchronize(consumer_stream.get());  // rethrows a host node's exception
    CHECK_CUDA(cudaGetLastError());

    std::vector<unsigned> got(n);
    CHECK_CUDA(cudaMemcpy(got.data(), d_totals.data(), n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int wrong = 0, first_wrong = -1;
    for (int i = 0; i < n; ++i)
      if (got[i] != expected[i] && wrong++ == 0) first_wrong = i;
    bool in_order = int(reported.size()) == rounds;
    for (int r = 0; in_order && r < rounds; ++r) in_order = reported[r] == r;

    std::printf("GPU: %d rounds on two streams; %d of %d totals differ from the CPU; the host "
                "node reported %zu rounds%s\n",
                rounds, wrong, n, reported.size(), in_order ? ", in order" : ", NOT in order");
    if (wrong)
      std::printf("MISMATCH: totals[%d] = %u, the CPU's %u\n", first_wrong, got[first_wrong],
                  expected[first_wrong]);
    if (!in_order) std::printf("MISMATCH: the host node did not report rounds 0..%d in order\n", rounds - 1);
    const bool ok = wrong == 0 && in_order;
    std::printf("streams: %s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
