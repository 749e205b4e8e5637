// rtc: cache keys, the in-memory and on-disk program cache, and compile
// errors. NVRTC runs on the CPU; an explicit architecture needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
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
  // Each field is written as label:length:value; (what a cache file holds).
  EXPECT_EQ(ab.text(), "x:2:ab;");
  EXPECT_EQ(a_b.text(), "x:1:a;x:1:b;");
  EXPECT_EQ(cudag::rtc::cache_key{}.text(), "");
  cudag::rtc::cache_key tricky;
  tricky.add("x", "1:a;x:1:b");  // a value that looks like two fields
  EXPECT_NE(tricky.text(), a_b.text());
  // The hash is 32 hex digits of the text alone.
  cudag::rtc::cache_key same;
  same.add("x", "ab");
  EXPECT_EQ(same.hash(), ab.hash());
  EXPECT_EQ(ab.hash().find_first_not_of("0123456789abcdef"), std::string::npos) << ab.hash();
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

TEST(RtcCache, UseCacheOffCompilesAgainAndStillStores) {
  auto& cache = rtc::program_cache::instance();
  auto opts = sm90();
  opts.defines.push_back("CUDAG_USE_CACHE_OFF_TEST=1");  // a key no other test uses
  opts.use_cache = false;
  const auto hits = cache.memory_hits();
  const auto first = rtc::compile(scale_source, {"scale<float>"}, opts);
  const auto second = rtc::compile(scale_source, {"scale<float>"}, opts);
  EXPECT_NE(first.get(), second.get()) << "use_cache = false was served from the cache";
  EXPECT_EQ(cache.memory_hits(), hits);
  EXPECT_EQ(first->cubin, second->cubin);  // the same compilation, done twice
  // The last result went to the cache: with the cache on, it is served.
  opts.use_cache = true;
  EXPECT_EQ(rtc::compile(scale_source, {"scale<float>"}, opts).get(), second.get());
  EXPECT_EQ(cache.memory_hits(), hits + 1);
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

namespace {
/// A program as NVRTC would leave it, made by hand: the cache stores bytes
/// and names, whatever they are.
std::shared_ptr<rtc::compiled_program> handmade_program(const std::string& name, char fill) {
  auto p = std::make_shared<rtc::compiled_program>();
  p->program_name = name;
  p->architecture = "sm_90";
  p->cubin.assign(300, fill);
  p->cubin[7] = '\0';  // binary, not text
  p->lowered = {{"scale<float>", "_Z5scaleIfEvPT_S0_i"}, {"axpy", "_Z4axpyPKfPffi"}};
  p->log = "warning: none";
  return p;
}
cudag::rtc::cache_key handmade_key(const std::string& tag) {
  cudag::rtc::cache_key key;
  key.add("test", "program_cache::store");
  key.add("tag", tag + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  return key;
}
}  // namespace

TEST(RtcCache, StoreKeepsTheProgramInMemory) {
  auto& cache = rtc::program_cache::instance();
  const auto key = handmade_key("memory");
  ASSERT_EQ(cache.find(key, {}), nullptr) << "test design: the key must be new";
  const std::size_t size_before = cache.size();
  const auto program = handmade_program("memory.cu", 'm');
  cache.store(key, program, {});
  EXPECT_EQ(cache.size(), size_before + 1);
  const auto hits = cache.memory_hits();
  const auto found = cache.find(key, {});
  EXPECT_EQ(found.get(), program.get());
  EXPECT_EQ(cache.memory_hits(), hits + 1);

  // Storing under the same key replaces the entry; other keys are untouched.
  const auto replacement = handmade_program("memory2.cu", 'r');
  cache.store(key, replacement, {});
  EXPECT_EQ(cache.size(), size_before + 1);
  EXPECT_EQ(cache.find(key, {}).get(), replacement.get());
  EXPECT_EQ(cache.find(handmade_key("another"), {}), nullptr);

  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.find(key, {}), nullptr);
}

TEST(RtcCache, StoreWritesAWholeFileThatFindReadsBack) {
  const auto dir = fresh_directory("cudag-rtc-store") / "nested" / "dir";  // created by store
  auto& cache = rtc::program_cache::instance();
  const auto key = handmade_key("disk");
  const auto program = handmade_program("disk.cu", 'd');
  cache.store(key, program, dir);
  const auto file = dir / (key.hash() + ".cubin");
  ASSERT_TRUE(std::filesystem::exists(file));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path(), file) << "a temporary file was left behind";

  cache.clear();  // as if in a new process
  const auto disk_hits = cache.disk_hits();
  const auto reloaded = cache.find(key, dir);
  ASSERT_NE(reloaded, nullptr);
  EXPECT_EQ(cache.disk_hits(), disk_hits + 1);
  EXPECT_NE(reloaded.get(), program.get());
  EXPECT_EQ(reloaded->program_name, "disk.cu");
  EXPECT_EQ(reloaded->architecture, "sm_90");
  EXPECT_EQ(reloaded->cubin, program->cubin);
  EXPECT_EQ(reloaded->lowered, program->lowered);
  EXPECT_EQ(reloaded->log, "warning: none");
  EXPECT_EQ(reloaded->key_hash, key.hash());
  EXPECT_EQ(reloaded->lowered_name("axpy"), "_Z4axpyPKfPffi");
  // Now in memory too.
  EXPECT_EQ(cache.find(key, {}).get(), reloaded.get());

  // A file under this key's name but written for another key is not used.
  cache.clear();
  const auto other_key = handmade_key("other");
  const auto other_dir = fresh_directory("cudag-rtc-store-other");
  cache.store(other_key, handmade_program("other.cu", 'o'), other_dir);
  std::filesystem::copy_file(other_dir / (other_key.hash() + ".cubin"), other_dir / (key.hash() + ".cubin"));
  cache.clear();
  EXPECT_EQ(cache.find(key, other_dir), nullptr);
  std::filesystem::remove_all(dir.parent_path().parent_path());
  std::filesystem::remove_all(other_dir);
}

TEST(RtcCache, StoreIntoAnUnwritableDirectoryStillKeepsTheProgram) {
  const auto dir = fresh_directory("cudag-rtc-unwritable");
  std::filesystem::create_directories(dir);
  const auto blocked = dir / "a-file";
  { std::ofstream(blocked) << "not a directory"; }
  auto& cache = rtc::program_cache::instance();
  const auto key = handmade_key("unwritable");
  const auto program = handmade_program("unwritable.cu", 'u');
  EXPECT_NO_THROW(cache.store(key, program, blocked / "cache"));
  EXPECT_EQ(cache.find(key, {}).get(), program.get());
  std::filesystem::remove_all(dir);
}

TEST(RtcCompile, OptionsBecomeNvrtcFlagsInOrder) {
  rtc::options opts;
  opts.include_paths = {"/opt/a", "/opt/b"};
  opts.defines = {"N=4", "FAST"};
  opts.extra = {"-use_fast_math"};
  opts.standard = "c++20";
  EXPECT_EQ(rtc::nvrtc_options(opts, "sm_80"),
            (std::vector<std::string>{"--gpu-architecture=sm_80", "--std=c++20",
                                      "--include-path=/opt/a", "--include-path=/opt/b",
                                      "--define-macro=N=4", "--define-macro=FAST",
                                      "-use_fast_math"}));
  opts.standard.clear();  // NVRTC's default: no flag
  EXPECT_EQ(rtc::nvrtc_options(opts, "compute_90").front(), "--gpu-architecture=compute_90");
  EXPECT_EQ(rtc::nvrtc_options(opts, "compute_90").size(), 6u);
}

TEST(RtcModule, LoadRefusesAnEmptyProgram) {
  // Refused before any CUDA call, so this runs without a GPU.
  EXPECT_THROW((void)rtc::module::load(nullptr), cudag::error);
  auto empty = std::make_shared<rtc::compiled_program>();
  empty->program_name = "empty.cu";
  try {
    (void)rtc::module::load(empty);
    FAIL() << "a program without code was loaded";
  } catch (const cudag::error& e) {
    EXPECT_NE(std::string(e.what()).find("empty program"), std::string::npos) << e.what();
  }
}

// Which kernels wait for their grid dependencies is read from the PTX, per
// entry, for a real and a virtual architecture, and kept in the disk cache.
TEST(RtcCompile, TheKernelsThatWaitForTheirGridDependenciesAreKnown) {
  const rtc::source chained{"chained.cu", R"(
    extern "C" __global__ void waits(float* x) {
      asm volatile("griddepcontrol.wait;" ::: "memory");
      x[threadIdx.x] += 1.0f;
    }
    extern "C" __global__ void plain(float* x) { x[threadIdx.x] *= 2.0f; }
    extern "C" __global__ void also_waits(float* x) {
      asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
      asm volatile("griddepcontrol.wait;" ::: "memory");
      x[threadIdx.x] -= 1.0f;
    })"};
  const auto dir = fresh_directory("cudag-rtc-waiters");
  for (const char* architecture : {"sm_90", "compute_90"}) {
    SCOPED_TRACE(architecture);
    rtc::options opts;
    opts.architecture = architecture;
    opts.cache_directory = dir;
    const auto program = rtc::compile(chained, {"waits", "plain", "also_waits"}, opts);
    EXPECT_TRUE(program->waits_for_grid_dependencies("waits"));
    EXPECT_FALSE(program->waits_for_grid_dependencies("plain"));
    EXPECT_TRUE(program->waits_for_grid_dependencies("also_waits"));
    EXPECT_FALSE(program->waits_for_grid_dependencies("unknown"));
    rtc::program_cache::instance().clear();  // read back from the directory
    const auto reloaded = rtc::compile(chained, {"waits", "plain", "also_waits"}, opts);
    EXPECT_EQ(reloaded->grid_dependency_waiters, program->grid_dependency_waiters);
  }
  std::filesystem::remove_all(dir);
}
