// DSL event record and wait nodes, checked by races they must win: a
// producer busy-waits tens of milliseconds before it writes; a consumer
// that does not really wait for it reads the poison that was there.
// cudaEventQuery proves nothing here (an event never recorded is "complete"
// too), so every check is a read of data.
//
// - record<> records after its dependencies: a third stream that waits on
//   the event with cudaStreamWaitEvent reads the producer's value;
// - wait<> holds its successors: a graph waiting on an event recorded by
//   cudaEventRecord after a slow kernel reads the value;
// - a producer graph and a consumer graph, on two streams;
// - rebinding the event of either node moves it to the new event;
// - the race is real: the same consumer with empty<> for its wait reads
//   the poison.
#include <gtest/gtest.h>

#include "cudag/dsl.hpp"
#include "cudag/handles.hpp"
#include "engine/test_kernels.cuh"
#include "gpu_support.hpp"

namespace {

using namespace cudag::dsl;
using engine_test::spin_then_write;

constexpr int poison = -1;
constexpr int produced = 4711;
constexpr int slow_ms = 30;  // far longer than launching the consumer takes

constexpr auto event = param<"event", cudaEvent_t>;
constexpr auto slot = param<"slot", int*>;
constexpr auto observed = param<"observed", int*>;

// clang-format off
constexpr auto producer = graph(
    record<"ready">(event),
    kernel<"slow_write", spin_then_write>(1, 1, slot, produced, slow_ms),
    edge<"slow_write", "ready">);
constexpr auto consumer = graph(
    memcpy<"copy">(observed, slot, sizeof(int)),
    wait<"wait_ready">(event),
    edge<"wait_ready", "copy">);
constexpr auto not_waiting = graph(
    memcpy<"copy">(observed, slot, sizeof(int)),
    empty<"wait_ready">(),
    edge<"wait_ready", "copy">);
// clang-format on

struct slots {
  cudag::device_buffer<int> value{1}, seen_value{1};
  int* slot_ptr() { return value.data(); }
  int* observed_ptr() { return seen_value.data(); }
  /// Both poisoned, legacy-stream work finished (launch streams are non-blocking).
  void poison_all() {
    const int p = poison;
    CUDAG_EXPECT_CUDA(cudaMemcpy(value.data(), &p, sizeof p, cudaMemcpyHostToDevice));
    CUDAG_EXPECT_CUDA(cudaMemcpy(seen_value.data(), &p, sizeof p, cudaMemcpyHostToDevice));
    CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());
  }
  int read(const cudag::device_buffer<int>& d) {
    int v = 0;
    EXPECT_EQ(cudaMemcpy(&v, d.data(), sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
  int seen() { return read(seen_value); }
};

/// `e` recorded and complete, so that a wait on it that was not renewed by
/// a record passes at once.
void record_done(cudaEvent_t e, cudaStream_t s) {
  CUDAG_EXPECT_CUDA(cudaEventRecord(e, s));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s));
}

/// The producer side without cudag: a slow kernel, then cudaEventRecord.
void produce_by_hand(slots& s, cudaEvent_t e, cudaStream_t stream) {
  spin_then_write<<<1, 1, 0, stream>>>(s.slot_ptr(), produced, slow_ms);
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  CUDAG_EXPECT_CUDA(cudaEventRecord(e, stream));
}

/// The consumer side without cudag: cudaStreamWaitEvent, then a copy.
void consume_by_hand(slots& s, cudaEvent_t e, cudaStream_t stream) {
  CUDAG_EXPECT_CUDA(cudaStreamWaitEvent(stream, e, 0));
  CUDAG_EXPECT_CUDA(cudaMemcpyAsync(s.observed_ptr(), s.slot_ptr(), sizeof(int),
                                    cudaMemcpyDeviceToDevice, stream));
}

TEST(DslEvents, WithoutTheWaitTheConsumerReadsThePoison) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto ex = instantiate(not_waiting, observed = s.observed_ptr(), slot = s.slot_ptr());
  ex.upload(s2.get());
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, ev.get(), s1.get()));
  ex.launch(s2.get());
  ex.synchronize(s2.get());
  const int seen_early = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen_early, poison) << "the consumer was not faster than the " << slow_ms
                                << " ms producer: the event tests below prove nothing here";
  EXPECT_EQ(s.read(s.value), produced);
}

TEST(DslEvents, RecordNodeRecordsAfterItsDependencies) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto ex = instantiate(producer, event = ev.get(), slot = s.slot_ptr());
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(record_done(ev.get(), s2.get()));
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    ex.launch(s1.get());
    ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, ev.get(), s2.get()));
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
    const int seen = s.seen();
    ex.synchronize(s1.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round
                              << ": a stream waiting on the event did not wait for the producer";
  }
}

TEST(DslEvents, WaitNodeHoldsItsSuccessors) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto ex = instantiate(consumer, event = ev.get(), observed = s.observed_ptr(),
                        slot = s.slot_ptr());
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, ev.get(), s1.get()));
    ex.launch(s2.get());
    ex.synchronize(s2.get());
    const int seen = s.seen();
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round << ": the copy did not wait for the event";
  }
}

TEST(DslEvents, ProducerGraphAndConsumerGraphOnTwoStreams) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto p = instantiate(producer, event = ev.get(), slot = s.slot_ptr());
  auto c =
      instantiate(consumer, event = ev.get(), observed = s.observed_ptr(), slot = s.slot_ptr());
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(record_done(ev.get(), s2.get()));
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    p.launch(s1.get());
    c.launch(s2.get());
    c.synchronize(s2.get());
    const int seen = s.seen();
    p.synchronize(s1.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round;
  }
}

TEST(DslEvents, RebindingTheEventMovesBothNodes) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto first = cudag::make_event(), second = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto p = instantiate(producer, event = first.get(), slot = s.slot_ptr());
  auto c = instantiate(consumer, event = first.get(), observed = s.observed_ptr(),
                       slot = s.slot_ptr());
  EXPECT_EQ(p.rebind(event = second.get()), rebind_path::node_setters);
  EXPECT_EQ(c.rebind(event = second.get()), rebind_path::node_setters);

  // The producer records `second` now: waiting on it waits for the write.
  ASSERT_NO_FATAL_FAILURE(record_done(first.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(record_done(second.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  p.launch(s1.get());
  ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, second.get(), s2.get()));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  int seen = s.seen();
  p.synchronize(s1.get());
  EXPECT_EQ(seen, produced) << "the rebound record node did not record the new event";

  // The consumer waits on `second` now: `first` stays complete from above.
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, second.get(), s1.get()));
  c.launch(s2.get());
  c.synchronize(s2.get());
  seen = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen, produced) << "the rebound wait node did not wait on the new event";

  // The same through forced whole-graph updates, back to `first`, one
  // exec at a time (the other one's event is checked by hand).
  p.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(p.rebind(event = first.get()), rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(record_done(first.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(record_done(second.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  p.launch(s1.get());
  ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, first.get(), s2.get()));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  seen = s.seen();
  p.synchronize(s1.get());
  EXPECT_EQ(seen, produced) << "the record node after a whole-graph update";

  c.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(c.rebind(event = first.get()), rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, first.get(), s1.get()));
  c.launch(s2.get());
  c.synchronize(s2.get());
  seen = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen, produced) << "the wait node after a whole-graph update";
}

}  // namespace
