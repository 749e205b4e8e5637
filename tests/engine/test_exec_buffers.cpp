// What a program reads back from an instantiated graph, checked without a
// GPU: graph-owned buffers' device addresses by name, and the error a
// process without a usable device gets.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "cudag/builder.hpp"
#include "cudag/exec.hpp"
#include "cudag/native_recorder.hpp"

namespace {

void fill(float* out, int n) { (void)out, (void)n; }

std::string hex(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return text;
}

/// The first recorded call holding `needle`.
std::string line_of(const std::vector<std::string>& calls, const std::string& needle) {
  for (const std::string& c : calls)
    if (c.find(needle) != std::string::npos) return c;
  return {};
}

TEST(ExecBuffers, AddressOfATopLevelAndANestedBufferIsTheOneTheirReadersGet) {
  cudag::native::recorder rec;
  rec.name_kernel(&fill, "fill");

  cudag::builder inner("inner");
  auto scratch = inner.alloc<float>("scratch", 64);
  auto use_scratch = inner.kernel("use", &fill, cudag::launch(1, 64), scratch.buffer, 64);
  auto drop = inner.free("drop", scratch.buffer);
  inner.chain(scratch.node, use_scratch, drop);

  cudag::builder b("reader");
  auto out = b.alloc<float>("out", 256);
  auto write = b.kernel("write", &fill, cudag::launch(1, 256), out.buffer + 16, 240);
  auto stage = b.child("stage", inner.build());
  b.chain(out.node, write, stage);
  auto e = cudag::instantiate(b.build(), {});

  float* top = e.buffer(out.buffer);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(e.buffer_address("out"), static_cast<void*>(top));
  // The offset of the handle is applied, in elements, up to one past the
  // last element; a view past that is refused, naming the buffer.
  EXPECT_EQ(e.buffer(out.buffer + 16), top + 16);
  EXPECT_EQ(e.buffer(out.buffer + 256), top + 256);
  try {
    (void)e.buffer(out.buffer + 257);
    FAIL() << "a view past the end of 'out' was handed out";
  } catch (const cudag::error& err) {
    EXPECT_EQ(std::string(err.what()),
              "buffer 'out': a view at element 257 of 4 bytes is past the end of its 1024-byte "
              "allocation (256 elements)");
  }
  // The same bytes seen as doubles: 128 of them.
  EXPECT_EQ(e.buffer(cudag::buffer_handle<double>{"out", 128}), reinterpret_cast<double*>(top) + 128);
  EXPECT_THROW((void)e.buffer(cudag::buffer_handle<double>{"out", 129}), cudag::error);
  void* nested = e.buffer_address("stage/scratch");
  ASSERT_NE(nested, nullptr);
  EXPECT_NE(nested, static_cast<void*>(top));
  // A nested buffer is named by its full path, nothing else.
  EXPECT_THROW((void)e.buffer_address("scratch"), cudag::error);
  EXPECT_THROW((void)e.buffer_address("other/scratch"), cudag::error);

  // The addresses are the ones CUDA handed the alloc nodes and the ones the
  // kernels were given ("write" reads out + 16 floats, "use" the scratch).
  const std::string write_line = line_of(rec.calls(), "block=(256,1,1)");
  EXPECT_NE(write_line.find("args=[" + hex(top + 16) + ","), std::string::npos) << write_line;
  // The recorder shows an exact graph-owned address as "mem@<alloc node>":
  // the scratch buffer (64 floats) is the one its reader got.
  const std::string scratch_alloc = line_of(rec.calls(), "bytes=256 ");
  ASSERT_EQ(scratch_alloc.rfind("add_mem_alloc_node n", 0), 0u) << scratch_alloc;
  const std::string scratch_node = scratch_alloc.substr(19, scratch_alloc.find(' ', 19) - 19);
  const std::string use_line = line_of(rec.calls(), "block=(64,1,1)");
  EXPECT_NE(use_line.find("args=[mem@" + scratch_node + ","), std::string::npos) << use_line;
  EXPECT_EQ(static_cast<char*>(nested) - reinterpret_cast<char*>(top), 0x100000)
      << "the recorder hands out addresses 1 MiB apart, in creation order";
}

TEST(ExecBuffers, AnUnknownBufferIsRefusedNamingTheGraphAndTheBuffer) {
  cudag::native::recorder rec;
  cudag::builder b("reader");
  auto out = b.alloc<float>("out", 8);
  b.free("release", out.buffer);
  b.edge("out", "release");
  auto e = cudag::instantiate(b.build(), {});
  try {
    (void)e.buffer_address("outt");
    FAIL() << "an unknown buffer was accepted";
  } catch (const cudag::error& err) {
    EXPECT_STREQ(err.what(),
                 "graph 'reader' has no graph-owned buffer 'outt' (no mem_alloc node produces it)");
  }
  // A node's name is not a buffer's: "release" frees, it allocates nothing.
  EXPECT_THROW((void)e.buffer_address("release"), cudag::error);
  EXPECT_NE(e.buffer_address("out"), nullptr);
}

// ------------------------------------------------------------ no device --
TEST(NoDevice, ADriverOrDeviceProblemIsReportedAsNoUsableDevice) {
  cudag::native::recorder rec;
  cudag::builder b("g");
  b.empty("only");
  const cudag::graph_spec spec = b.build();
  for (cudaError_t code : {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary}) {
    rec.fail_next("graph_create", code);
    try {
      (void)cudag::instantiate(spec, {});
      FAIL() << "instantiate succeeded with " << cudaGetErrorName(code) << " injected";
    } catch (const cudag::error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("no usable CUDA device was found: cudaGraphCreate failed: ", 0), 0u)
          << what;
      EXPECT_NE(what.find(cudaGetErrorName(code)), std::string::npos) << what;
      EXPECT_EQ(e.code(), code);
    }
  }
  // Any other failure keeps CUDA's own words.
  rec.fail_next("graph_create", cudaErrorMemoryAllocation);
  try {
    (void)cudag::instantiate(spec, {});
    FAIL() << "instantiate succeeded with an injected failure";
  } catch (const cudag::error& e) {
    EXPECT_EQ(std::string(e.what()).find("no usable CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
