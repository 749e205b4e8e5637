// Bad-input catalogue, environment: no usable GPU. No recorder here: the
// real CUDA runtime answers, as on a machine without a GPU or a driver.
#include <string>

#include "catalogue.hpp"
#include "cudag/builder.hpp"
#include "cudag/exec.hpp"

namespace {

using catalogue::refusal;

TEST(Catalogue, NoGpuSaysSoAndNamesTheCall) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a device is present";
  (void)cudaGetLastError();
  cudag::builder b("g");
  b.empty("a");
  auto e = refusal<cudag::error>([&] { (void)cudag::instantiate(b.build(), {}); });
  ASSERT_TRUE(e);
  // Without a driver CUDA answers cudaErrorInsufficientDriver; with a driver
  // and no GPU, cudaErrorNoDevice. Either message is pinned whole.
  if (e->code() == cudaErrorInsufficientDriver) {
    EXPECT_EQ(std::string(e->what()),
              "no usable CUDA device was found: cudaGraphCreate failed: "
              "cudaErrorInsufficientDriver (CUDA driver version is insufficient for CUDA runtime "
              "version)");
  } else {
    EXPECT_EQ(e->code(), cudaErrorNoDevice) << e->what();
    EXPECT_EQ(std::string(e->what()),
              "no usable CUDA device was found: cudaGraphCreate failed: cudaErrorNoDevice (no "
              "CUDA-capable device is detected)");
  }
  EXPECT_EQ(e->call(), "cudaGraphCreate");
}

}  // namespace
