// Event record and wait nodes of the run-time builder, checked by races they
// must win: a producer busy-waits tens of milliseconds before it writes; a
// consumer that does not really wait for it reads the poison that was
// there. cudaEventQuery proves nothing here (an event never recorded is
// "complete" too), so every check is a read of data.
//
// - a record node records after its dependencies: a third stream that waits
//   on the event with cudaStreamWaitEvent reads the producer's value;
// - a wait node holds its successors: a graph waiting on an event recorded
//   by cudaEventRecord after a slow kernel reads the value;
// - a producer graph and a consumer graph, on two streams;
// - rebinding the event of either node moves it to the new event;
// - the race is real: the same consumer with an empty node for its wait
//   reads the poison.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_buffers.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

constexpr int poison = -1;
constexpr int produced = 4711;
constexpr int slow_ms = 30;  // far longer than launching the consumer takes

struct slots {
  cudag::device_buffer<int> slot{1}, observed{1};
  /// Both poisoned, legacy-stream work finished (launch streams are non-blocking).
  void poison_all() {
    fill(slot, poison);
    fill(observed, poison);
  }
  int seen() { return read_back(observed)[0]; }
};

/// Graph "producer": spin_then_write(slot) -> record(event parameter).
cudag::exec make_producer(slots& s, cudaEvent_t event) {
  cudag::builder b("producer");
  auto ev = b.param<cudaEvent_t>("event");
  auto write = b.kernel("slow_write", CUDAG_KERNEL(spin_then_write), cudag::launch(1, 1),
                        s.slot.data(), produced, slow_ms);
  auto rec = b.record("ready", ev);
  b.edge(write, rec);
  const cudag::binding binds[] = {cudag::bind("event", event)};
  return cudag::instantiate(b.build(), binds);
}

/// Graph "consumer": wait(event parameter) -> copy slot to observed; with
/// `really_wait` false an empty node stands where the wait was.
cudag::exec make_consumer(slots& s, cudaEvent_t event, bool really_wait) {
  cudag::builder b("consumer");
  auto copy = b.memcpy("copy", s.observed.data(), s.slot.data(), sizeof(int));
  if (!really_wait) {
    b.edge(b.empty("wait_ready"), copy);
    return cudag::instantiate(b.build(), {});
  }
  auto ev = b.param<cudaEvent_t>("event");
  b.edge(b.wait("wait_ready", ev), copy);
  const cudag::binding binds[] = {cudag::bind("event", event)};
  return cudag::instantiate(b.build(), binds);
}

/// `event` recorded and complete, so that a wait on it that was not
/// renewed by a record passes at once.
void record_done(cudaEvent_t event, cudaStream_t s) {
  CUDAG_EXPECT_CUDA(cudaEventRecord(event, s));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s));
}

/// The producer side without cudag: a slow kernel, then cudaEventRecord.
void produce_by_hand(slots& s, cudaEvent_t event, cudaStream_t stream) {
  spin_then_write<<<1, 1, 0, stream>>>(s.slot.data(), produced, slow_ms);
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  CUDAG_EXPECT_CUDA(cudaEventRecord(event, stream));
}

/// The consumer side without cudag: cudaStreamWaitEvent, then a copy.
void consume_by_hand(slots& s, cudaEvent_t event, cudaStream_t stream) {
  CUDAG_EXPECT_CUDA(cudaStreamWaitEvent(stream, event, 0));
  CUDAG_EXPECT_CUDA(cudaMemcpyAsync(s.observed.data(), s.slot.data(), sizeof(int),
                                    cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

TEST(EngineEvents, WithoutTheWaitTheConsumerReadsThePoison) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto not_waiting = make_consumer(s, ev.get(), false);
  not_waiting.upload(s2.get());
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, ev.get(), s1.get()));
  not_waiting.launch(s2.get());
  not_waiting.synchronize(s2.get());
  const int seen_early = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen_early, poison) << "the consumer was not faster than the " << slow_ms
                                << " ms producer: the event tests below prove nothing here";
  EXPECT_EQ(read_back(s.slot)[0], produced);
}

TEST(EngineEvents, RecordNodeRecordsAfterItsDependencies) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto producer = make_producer(s, ev.get());
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(record_done(ev.get(), s2.get()));
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    producer.launch(s1.get());
    ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, ev.get(), s2.get()));
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
    const int seen = s.seen();
    producer.synchronize(s1.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round
                              << ": a stream waiting on the event did not wait for the producer";
  }
}

TEST(EngineEvents, WaitNodeHoldsItsSuccessors) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto consumer = make_consumer(s, ev.get(), true);
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, ev.get(), s1.get()));
    consumer.launch(s2.get());
    consumer.synchronize(s2.get());
    const int seen = s.seen();
    CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round << ": the copy did not wait for the event";
  }
}

TEST(EngineEvents, ProducerGraphAndConsumerGraphOnTwoStreams) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto ev = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto producer = make_producer(s, ev.get());
  auto consumer = make_consumer(s, ev.get(), true);
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(record_done(ev.get(), s2.get()));
    ASSERT_NO_FATAL_FAILURE(s.poison_all());
    producer.launch(s1.get());
    consumer.launch(s2.get());
    consumer.synchronize(s2.get());
    const int seen = s.seen();
    producer.synchronize(s1.get());
    CUDAG_EXPECT_CUDA(cudaGetLastError());
    EXPECT_EQ(seen, produced) << "round " << round;
  }
}

TEST(EngineEvents, RebindingTheEventMovesBothNodes) {
  CUDAG_REQUIRE_GPU();
  slots s;
  auto first = cudag::make_event(), second = cudag::make_event();
  auto s1 = cudag::make_stream(), s2 = cudag::make_stream();
  auto producer = make_producer(s, first.get());
  auto consumer = make_consumer(s, first.get(), true);
  EXPECT_EQ(producer.rebind("event", second.get()), cudag::rebind_path::node_setters);
  EXPECT_EQ(consumer.rebind("event", second.get()), cudag::rebind_path::node_setters);
  EXPECT_EQ(consumer.rebind("event", second.get()), cudag::rebind_path::none);

  // The producer records `second` now: waiting on it waits for the write.
  ASSERT_NO_FATAL_FAILURE(record_done(first.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(record_done(second.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  producer.launch(s1.get());
  ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, second.get(), s2.get()));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  int seen = s.seen();
  producer.synchronize(s1.get());
  EXPECT_EQ(seen, produced) << "the rebound record node did not record the new event";

  // The consumer waits on `second` now: `first` stays complete from above.
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, second.get(), s1.get()));
  consumer.launch(s2.get());
  consumer.synchronize(s2.get());
  seen = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen, produced) << "the rebound wait node did not wait on the new event";

  // The same through forced whole-graph updates, back to `first`, one exec
  // at a time (the other one's event is checked by hand).
  producer.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(producer.rebind("event", first.get()), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(record_done(first.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(record_done(second.get(), s2.get()));
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  producer.launch(s1.get());
  ASSERT_NO_FATAL_FAILURE(consume_by_hand(s, first.get(), s2.get()));
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s2.get()));
  seen = s.seen();
  producer.synchronize(s1.get());
  EXPECT_EQ(seen, produced) << "the record node after a whole-graph update";

  consumer.set_rebind_policy(cudag::rebind_policy::whole_graph_update);
  EXPECT_EQ(consumer.rebind("event", first.get()), cudag::rebind_path::whole_graph_update);
  ASSERT_NO_FATAL_FAILURE(s.poison_all());
  ASSERT_NO_FATAL_FAILURE(produce_by_hand(s, first.get(), s1.get()));
  consumer.launch(s2.get());
  consumer.synchronize(s2.get());
  seen = s.seen();
  CUDAG_EXPECT_CUDA(cudaStreamSynchronize(s1.get()));
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  EXPECT_EQ(seen, produced) << "the wait node after a whole-graph update";
}
