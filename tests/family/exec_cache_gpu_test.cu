// (being written)
#include <gtest/gtest.h>
#include "gpu_support.hpp"
TEST(ExecCacheGpu, Placeholder) { CUDAG_REQUIRE_GPU(); }
