// A user-defined op (cublasSaxpy, see saxpy_op.hpp) as a node, run on a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "cudag/exec.hpp"
#include "cudag/handles.hpp"
#include "cudag/op.hpp"
#include "gpu_support.hpp"
#include "saxpy_op.hpp"

TEST(UserOpGpu, SaxpyOpRunsAndRebinds) {
  CUDAG_REQUIRE_GPU();
  constexpr int count = 3000;
  std::vector<float> hx(count), hy(count);
  for (int i = 0; i < count; ++i) {
    hx[i] = 1.0f + float(i % 7);
    hy[i] = 0.5f * float(i % 3) - 4.0f;
  }
  cudag::device_buffer<float> dx(count), dy(count);
  CUDAG_EXPECT_CUDA(cudaMemcpy(dx.data(), hx.data(), dx.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaMemcpy(dy.data(), hy.data(), dy.bytes(), cudaMemcpyHostToDevice));
  CUDAG_EXPECT_CUDA(cudaDeviceSynchronize());  // the launch stream is non-blocking

  cudag::builder b("user_op");
  auto alpha = b.param<float>("alpha");
  auto x = b.param<const float*>("x");
  auto y = b.param<float*>("y");
  auto first = cudag::add_op(b, "saxpy", user_ops::saxpy{count}, alpha, x, y);
  auto second = cudag::add_op(b, "saxpy_again", user_ops::saxpy{count}, 1.0f, x, y);
  b.edge(first, second);
  const std::vector<cudag::binding> bindings{cudag::bind("alpha", 2.0f),
                                             cudag::bind("x", static_cast<const float*>(dx.data())),
                                             cudag::bind("y", dy.data())};
  auto stream = cudag::make_stream();
  auto exec = cudag::instantiate(b.build(), bindings);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());

  std::vector<float> ry(count, -1.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(ry.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  // y += 2 x, then y += 1 x: exact in float (small integers and halves), and
  // different from the input y everywhere (x >= 1).
  for (int i = 0; i < count; ++i) ASSERT_EQ(ry[i], (hy[i] + 2.0f * hx[i]) + hx[i]) << i;

  // alpha 0.5: y += (0.5 + 1) x. Every expected value differs from what y
  // holds now (x >= 1), so a rebind that changed nothing, or a launch that
  // did not run, fails; the values are exact in float (halves of small
  // integers), so the comparison is exact.
  std::vector<float> expected(count);
  for (int i = 0; i < count; ++i) {
    expected[i] = (ry[i] + 0.5f * hx[i]) + hx[i];
    ASSERT_NE(expected[i], ry[i]) << "test design: the rebind must change the output, " << i;
  }
  exec.rebind("alpha", 0.5f);
  exec.launch(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  exec.synchronize(stream.get());
  CUDAG_EXPECT_CUDA(cudaGetLastError());
  std::vector<float> again(count, -1.0f);
  CUDAG_EXPECT_CUDA(cudaMemcpy(again.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(again[i], expected[i]) << i << ": expected y + 1.5 x after rebinding alpha to 0.5";
}
