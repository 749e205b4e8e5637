// Conditional nodes: if taken and not taken, if/else taking both branches, while looping N times,
// switch picking each case. The condition is set by a kernel in the graph.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "gpu_support.hpp"
#include "test_kernels.cuh"

using namespace engine_test;

namespace {

int read_int(const int* device) {
  int v = 0;
  EXPECT_EQ(cudaMemcpy(&v, device, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}
void write_int(int* device, int v) {
  ASSERT_EQ(cudaMemcpy(device, &v, sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  // Launch streams are non-blocking: finish this legacy-stream work first.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace

TEST(EngineConditionals, IfThenRunsItsBodyOnlyWhenTheConditionIsSet) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<unsigned> choice(1);
  cudag::device_buffer<int> out(1), after(1);

  cudag::builder b("if_then");
  auto po = b.param<int*>("out");
  auto pa = b.param<int*>("after");
  auto pc = b.param<const unsigned*>("choice");
  auto cond = b.condition("take");  // default 0, assigned at every launch
  cudag::builder body("body");
  body.kernel("write_then", CUDAG_KERNEL(write_value), cudag::launch(1, 1), po, 333);

  // The if node is declared before the kernel that sets its condition.
  auto maybe = b.if_then("maybe", cond, body.build());
  auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), cond, pc);
  auto mark = b.kernel("mark_after", CUDAG_KERNEL(write_value), cudag::launch(1, 1), pa, 444);
  b.edge(decide, maybe);
  b.edge(maybe, mark);

  const cudag::binding binds[] = {
      cudag::bind("out", out.data()), cudag::bind("after", after.data()),
      cudag::bind("choice", static_cast<const unsigned*>(choice.data()))};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  // Taken, not taken, taken again (a stale condition would show), any non-zero value.
  for (unsigned pick : {1u, 0u, 1u, 0u, 9u}) {
    write_int(out.data(), -1);
    write_int(after.data(), -1);
    ASSERT_EQ(cudaMemcpy(choice.data(), &pick, sizeof pick, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the launch stream is non-blocking
    e.launch(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    e.synchronize(s.get());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(read_int(out.data()), pick != 0 ? 333 : -1) << "condition " << pick;
    EXPECT_EQ(read_int(after.data()), 444) << "the node after the if did not run";
  }
  EXPECT_EQ(e.replay_count(), 5u);
}

TEST(EngineConditionals, IfElseTakesBothBranches) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<unsigned> choice(1);
  cudag::device_buffer<int> out(1);

  cudag::builder b("branch");
  auto po = b.param<int*>("out");
  auto pc = b.param<const unsigned*>("choice");
  auto cond = b.condition("take_then");

  // Bodies use the enclosing graph's parameters by handle.
  cudag::builder then_body("then");
  then_body.kernel("write_then", CUDAG_KERNEL(write_value), cudag::launch(1, 1), po, 111);
  cudag::builder else_body("else");
  else_body.kernel("write_else", CUDAG_KERNEL(write_value), cudag::launch(1, 1), po, 222);

  auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), cond, pc);
  auto branch = b.if_else("branch", cond, then_body.build(), else_body.build());
  b.edge(decide, branch);

  const cudag::binding binds[] = {cudag::bind("out", out.data()),
                                  cudag::bind("choice", static_cast<const unsigned*>(choice.data()))};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (unsigned pick : {1u, 0u, 5u}) {
    write_int(out.data(), -1);
    ASSERT_EQ(cudaMemcpy(choice.data(), &pick, sizeof pick, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the launch stream is non-blocking
    e.launch(s.get());
    e.synchronize(s.get());
    EXPECT_EQ(read_int(out.data()), pick != 0 ? 111 : 222) << "condition " << pick;
  }
}

TEST(EngineConditionals, WhileLoopsExactlyNTimes) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<int> counter(1);
  constexpr int rounds = 37;

  cudag::builder b("loop");
  auto pc = b.param<int*>("counter");
  auto cond = b.condition("again", /*default_value=*/1);
  cudag::builder body("body");
  body.kernel("count", CUDAG_KERNEL(count_and_continue), cudag::launch(1, 1), cond, pc, rounds);
  b.while_loop("loop", cond, body.build());
  const cudag::binding binds[] = {cudag::bind("counter", counter.data())};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (int replay = 0; replay < 3; ++replay) {
    write_int(counter.data(), 0);
    e.launch(s.get());
    e.synchronize(s.get());
    EXPECT_EQ(read_int(counter.data()), rounds);
  }
}

TEST(EngineConditionals, SwitchPicksEachCase) {
  CUDAG_REQUIRE_GPU();
  cudag::device_buffer<unsigned> choice(1);
  cudag::device_buffer<int> out(1);
  constexpr int cases = 4;

  cudag::builder b("switch");
  auto po = b.param<int*>("out");
  auto pc = b.param<const unsigned*>("choice");
  auto cond = b.condition("which");
  std::vector<cudag::graph_spec> bodies;
  for (int k = 0; k < cases; ++k) {
    cudag::builder body("case" + std::to_string(k));
    body.kernel("write", CUDAG_KERNEL(write_value), cudag::launch(1, 1), po, 1000 + k);
    bodies.push_back(body.build());
  }
  auto decide = b.kernel("decide", CUDAG_KERNEL(set_condition), cudag::launch(1, 1), cond, pc);
  auto sw = b.switch_case("pick", cond, std::move(bodies));
  b.edge(decide, sw);
  const cudag::binding binds[] = {cudag::bind("out", out.data()),
                                  cudag::bind("choice", static_cast<const unsigned*>(choice.data()))};
  auto e = cudag::instantiate(b.build(), binds);
  auto s = cudag::make_stream();
  for (unsigned pick = 0; pick < cases + 1; ++pick) {
    write_int(out.data(), -1);
    ASSERT_EQ(cudaMemcpy(choice.data(), &pick, sizeof pick, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the launch stream is non-blocking
    e.launch(s.get());
    e.synchronize(s.get());
    // A value past the last case runs no body.
    EXPECT_EQ(read_int(out.data()), pick < cases ? 1000 + static_cast<int>(pick) : -1) << pick;
  }
}
