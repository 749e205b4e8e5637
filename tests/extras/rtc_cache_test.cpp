// rtc: cache keys, the in-memory and on-disk program cache, and compile
// errors. NVRTC runs on the CPU; an explicit architecture needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cudag/rtc.hpp"

namespace rtc = cudag::rtc;

namespace {
const rtc::source scale_source{"scale.cu", R"(
  template <class T>
  __global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
  })"};

rtc::options sm90() {
  rtc::options o;
  o.architecture = "sm_90";
  return o;
}

std::filesystem::path fresh_directory(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                    "-" + std::to_string(reinterpret_cast<std::uintptr_t>(&name)));
  std::filesystem::remove_all(dir);
  return dir;
}
}  // namespace

TEST(RtcCacheKey, SameInputsSameKey) {
  const auto a = rtc::make_cache_key(scale_source, {"scale<float>"}, sm90(), "sm_90");
  const auto b = rtc::make_cache_key(scale_source, {"scale<float>"}, sm90(), "sm_90");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash().size(), 32u);
}

TEST(RtcCacheKey, AnyChangeGivesAnotherKey) {
  const auto base = rtc::make_cache_key(scale_source, {"scale<float>"}, sm90(), "sm_90");
  std::vector<cudag::rtc::cache_key> changed;

  rtc::source other_text = scale_source;
  other_text.text += "\n";
  changed.push_back(rtc::make_cache_key(other_text, {"scale<float>"}, sm90(), "sm_90"));
  rtc::source other_name = scale_source;
  other_name.name = "scale2.cu";
  changed.push_back(rtc::make_cache_key(other_name, {"scale<float>"}, sm90(), "sm_90"));
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<double>"}, sm90(), "sm_90"));
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>", "scale<double>"}, sm90(), "sm_90"));
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, sm90(), "sm_80"));
  auto with_define = sm90();
  with_define.defines.push_back("N=4");
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, with_define, "sm_90"));
  auto with_include = sm90();
  with_include.include_paths.push_back("/opt/include");
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, with_include, "sm_90"));
  auto with_extra = sm90();
  with_extra.extra.push_back("-use_fast_math");
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, with_extra, "sm_90"));
  auto with_header = sm90();
  with_header.headers.push_back({"config.h", "#define N 4"});
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, with_header, "sm_90"));
  auto other_header_text = with_header;
  other_header_text.headers[0].text = "#define N 5";
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, other_header_text, "sm_90"));
  auto other_standard = sm90();
  other_standard.standard = "c++20";
  changed.push_back(rtc::make_cache_key(scale_source, {"scale<float>"}, other_standard, "sm_90"));

  for (std::size_t i = 0; i < changed.size(); ++i) {
    EXPECT_NE(changed[i], base) << "change " << i;
    EXPECT_NE(changed[i].hash(), base.hash()) << "change " << i;
    for (std::size_t j = i + 1; j < changed.size(); ++j)
      EXPECT_NE(changed[i].hash(), changed[j].hash()) << "changes " << i << " and " << j;
  }
}

TEST(RtcCacheKey, FieldBoundariesAreUnambiguous) {
  cudag::rtc::cache_key ab, a_b;
  ab.add("x", "ab");
  a_b.add("x", "a");
  a_b.add("x", "b");
  EXPECT_NE(ab, a_b);
  EXPECT_NE(ab.hash(), a_b.hash());
}

TEST(RtcCache, SecondCompileComesFromMemory) {
  auto& cache = rtc::program_cache::instance();
  const auto hits_before = cache.memory_hits();
  const auto first = rtc::compile(scale_source, {"scale<float>"}, sm90());
  const auto second = rtc::compile(scale_source, {"scale<float>"}, sm90());
  EXPECT_EQ(first.get(), second.get());
  EXPECT_GE(cache.memory_hits(), hits_before + 1);
  EXPECT_FALSE(first->cubin.empty());
  EXPECT_EQ(first->architecture, "sm_90");
  EXPECT_EQ(first->lowered_name("scale<float>"), "_Z5scaleIfEvPT_S0_i");
  EXPECT_THROW((void)first->lowered_name("scale<int>"), cudag::error);
}

TEST(RtcCache, ProgramsSurviveInADirectory) {
  const auto dir = fresh_directory("cudag-rtc-cache");
  auto opts = sm90();
  opts.cache_directory = dir;
  opts.defines.push_back("CUDAG_DISK_CACHE_TEST=1");  // a key no other test uses
  const auto compiled = rtc::compile(scale_source, {"scale<double>"}, opts);
  const auto key = rtc::make_cache_key(scale_source, {"scale<double>"}, opts, "sm_90");
  ASSERT_TRUE(std::filesystem::exists(dir / (key.hash() + ".cubin")));
  EXPECT_EQ(compiled->key_hash, key.hash());

  auto& cache = rtc::program_cache::instance();
  cache.clear();  // as if in a new process
  const auto disk_hits = cache.disk_hits();
  const auto reloaded = rtc::compile(scale_source, {"scale<double>"}, opts);
  EXPECT_EQ(cache.disk_hits(), disk_hits + 1);
  EXPECT_EQ(reloaded->cubin, compiled->cubin);
  EXPECT_EQ(reloaded->lowered, compiled->lowered);

  // A corrupt file is ignored and replaced.
  {
    std::ofstream corrupt(dir / (key.hash() + ".cubin"), std::ios::binary | std::ios::trunc);
    corrupt << "not a program";
  }
  cache.clear();
  const auto recompiled = rtc::compile(scale_source, {"scale<double>"}, opts);
  EXPECT_EQ(cache.disk_hits(), disk_hits + 1);
  EXPECT_EQ(recompiled->cubin, compiled->cubin);
  std::filesystem::remove_all(dir);
}

TEST(RtcCompile, SyntaxErrorCarriesLogAndKernelName) {
  const rtc::source broken{"broken.cu", R"(
    __global__ void broken_kernel(float* x) {
      x[0] = 1.0f +;   // the syntax error
    })"};
  try {
    (void)rtc::compile(broken, {"broken_kernel"}, sm90());
    FAIL() << "a source with a syntax error compiled";
  } catch (const rtc::compile_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("broken_kernel"), std::string::npos) << message;
    EXPECT_NE(message.find("broken.cu"), std::string::npos) << message;
    EXPECT_NE(message.find("expected an expression"), std::string::npos) << message;
    EXPECT_NE(e.log().find("broken.cu(3)"), std::string::npos) << e.log();
    EXPECT_EQ(e.node(), "broken_kernel");
  }
}

TEST(RtcCompile, OptionsReachNvrtc) {
  const rtc::source needs_define{"define.cu", R"(
    #include "width.h"
    #ifndef FACTOR
    #error FACTOR is not defined
    #endif
    __global__ void widen(float* x) { x[0] *= FACTOR * WIDTH; })"};
  auto opts = sm90();
  opts.headers.push_back({"width.h", "#define WIDTH 4"});
  EXPECT_THROW((void)rtc::compile(needs_define, {"widen"}, opts), rtc::compile_error);
  opts.defines.push_back("FACTOR=2");
  const auto program = rtc::compile(needs_define, {"widen"}, opts);
  EXPECT_EQ(program->lowered_name("widen"), "_Z5widenPf");
  const auto flags = rtc::nvrtc_options(opts, "sm_90");
  EXPECT_EQ(flags.front(), "--gpu-architecture=sm_90");
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--define-macro=FACTOR=2"), flags.end());
}

TEST(RtcCompile, SourceFromFile) {
  const auto dir = fresh_directory("cudag-rtc-file");
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "from_file.cu");
    out << scale_source.text;
  }
  const auto src = rtc::source::from_file(dir / "from_file.cu");
  EXPECT_EQ(src.name, "from_file.cu");
  EXPECT_EQ(src.text, scale_source.text);
  EXPECT_THROW((void)rtc::source::from_file(dir / "missing.cu"), cudag::error);
  std::filesystem::remove_all(dir);
}
