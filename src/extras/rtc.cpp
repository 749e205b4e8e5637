#include "cudag/rtc.hpp"

#include <nvrtc.h>

#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace cudag::rtc {
namespace {

struct program_deleter {
  void operator()(nvrtcProgram p) const noexcept { (void)nvrtcDestroyProgram(&p); }
};
using unique_program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, program_deleter>;

void nvrtc_check(nvrtcResult result, const char* call, const std::string& program) {
  if (result == NVRTC_SUCCESS) return;
  throw error("rtc: " + std::string(call) + " failed for program '" + program +
                  "': " + nvrtcGetErrorString(result),
              cudaSuccess, call, program);
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string program_log(nvrtcProgram p) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

std::shared_ptr<const compiled_program> run_nvrtc(const source& src,
                                                  const std::vector<std::string>& name_expressions,
                                                  const options& opts, const std::string& architecture) {
  std::vector<const char*> header_texts, header_names;
  for (const header& h : opts.headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.name.c_str());
  }
  nvrtcProgram raw = nullptr;
  nvrtc_check(nvrtcCreateProgram(&raw, src.text.c_str(), src.name.c_str(),
                                 static_cast<int>(opts.headers.size()), header_texts.data(),
                                 header_names.data()),
              "nvrtcCreateProgram", src.name);
  unique_program program(raw);
  for (const std::string& expression : name_expressions)
    nvrtc_check(nvrtcAddNameExpression(raw, expression.c_str()), "nvrtcAddNameExpression", src.name);

  const std::vector<std::string> option_strings = nvrtc_options(opts, architecture);
  std::vector<const char*> option_pointers;
  for (const std::string& o : option_strings) option_pointers.push_back(o.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(raw, static_cast<int>(option_pointers.size()),
                                                   option_pointers.data());
  std::string log = program_log(raw);
  if (compiled != NVRTC_SUCCESS) {
    std::string message = "rtc: compiling program '" + src.name + "' (kernels: " +
                           join(name_expressions) + ") for " + architecture + " failed: " +
                           nvrtcGetErrorString(compiled);
    message += log.empty() ? std::string(" (NVRTC left no log)") : "\n" + log;
    throw compile_error(std::move(message), std::move(log),
                        name_expressions.empty() ? src.name : name_expressions.front());
  }

  auto result = std::make_shared<compiled_program>();
  result->program_name = src.name;
  result->architecture = architecture;
  result->log = std::move(log);
  for (const std::string& expression : name_expressions) {
    const char* lowered = nullptr;
    nvrtc_check(nvrtcGetLoweredName(raw, expression.c_str(), &lowered), "nvrtcGetLoweredName",
                src.name);
    result->lowered.emplace_back(expression, lowered);
  }
  // Which kernels wait for their grid dependencies, read from the PTX
  // (NVRTC gives it for an sm_ architecture too): each entry's body, up to
  // the next entry, holds griddepcontrol.wait or not. A wait inside a device
  // function that is not inlined is not seen.
  {
    std::size_t size = 0;
    nvrtc_check(nvrtcGetPTXSize(raw, &size), "nvrtcGetPTXSize", src.name);
    std::string ptx(size, '\0');
    nvrtc_check(nvrtcGetPTX(raw, ptx.data()), "nvrtcGetPTX", src.name);
    for (const auto& [expression, mangled] : result->lowered) {
      const std::size_t entry = ptx.find(".entry " + mangled + "(");
      if (entry == std::string::npos) continue;
      const std::size_t next = ptx.find(".entry ", entry + 1);
      const std::size_t wait = ptx.find("griddepcontrol.wait", entry);
      if (wait != std::string::npos && wait < next) result->grid_dependency_waiters.push_back(expression);
    }
  }
  // An sm_ architecture gives a cubin; a compute_ one only PTX, which the
  // runtime compiles at load time (the text is loaded with its terminator).
  if (architecture.starts_with("compute_")) {
    std::size_t size = 0;
    nvrtc_check(nvrtcGetPTXSize(raw, &size), "nvrtcGetPTXSize", src.name);
    result->cubin.resize(size);
    nvrtc_check(nvrtcGetPTX(raw, result->cubin.data()), "nvrtcGetPTX", src.name);
  } else {
    std::size_t size = 0;
    nvrtc_check(nvrtcGetCUBINSize(raw, &size), "nvrtcGetCUBINSize", src.name);
    result->cubin.resize(size);
    nvrtc_check(nvrtcGetCUBIN(raw, result->cubin.data()), "nvrtcGetCUBIN", src.name);
  }
  return result;
}

}  // namespace

void refuse_grid_dependency_marker(std::string_view name_expression, std::string_view program) {
  throw error("rtc kernel '" + std::string(name_expression) + "' of program '" + std::string(program) +
                  "' is marked as synchronizing its grid dependencies, but its PTX entry holds no "
                  "griddepcontrol.wait: call cudaGridDependencySynchronize() (or that instruction) "
                  "in the kernel itself before it reads what its predecessors wrote",
              cudaSuccess, {}, std::string(name_expression));
}

source source::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("rtc: cannot read kernel source file '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return source{path.filename().string(), text.str()};
}

std::string current_architecture() {
  int device = 0, major = 0, minor = 0;
  CUDAG_CUDA(cudaGetDevice(&device));
  CUDAG_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDAG_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::vector<std::string> nvrtc_options(const options& opts, std::string_view architecture) {
  std::vector<std::string> list;
  list.push_back("--gpu-architecture=" + std::string(architecture));
  if (!opts.standard.empty()) list.push_back("--std=" + opts.standard);
  for (const auto& path : opts.include_paths) list.push_back("--include-path=" + path.string());
  for (const auto& define : opts.defines) list.push_back("--define-macro=" + define);
  for (const auto& extra : opts.extra) list.push_back(extra);
  return list;
}

cache_key make_cache_key(const source& src, const std::vector<std::string>& name_expressions,
                         const options& opts, std::string_view architecture) {
  cache_key key;
  key.add("nvrtc", nvrtc_version());
  key.add("name", src.name);
  key.add("source", src.text);
  for (const std::string& option : nvrtc_options(opts, architecture)) key.add("option", option);
  for (const header& h : opts.headers) {
    key.add("header", h.name);
    key.add("header-text", h.text);
  }
  for (const std::string& expression : name_expressions) key.add("expression", expression);
  key.add("architecture", architecture);
  return key;
}

std::shared_ptr<const compiled_program> compile(const source& src,
                                                const std::vector<std::string>& name_expressions,
                                                const options& opts) {
  const std::string architecture =
      opts.architecture.empty() ? current_architecture() : opts.architecture;
  const cache_key key = make_cache_key(src, name_expressions, opts, architecture);
  program_cache& cache = program_cache::instance();
  if (opts.use_cache)
    if (auto found = cache.find(key, opts.cache_directory)) return found;
  auto fresh = run_nvrtc(src, name_expressions, opts, architecture);
  std::const_pointer_cast<compiled_program>(fresh)->key_hash = key.hash();
  cache.store(key, fresh, opts.cache_directory);
  return fresh;
}

// ------------------------------------------------------------------ module --
namespace {
// Loaded libraries by program, so that kernels of one program share one
// library while any of them is in use.
struct loaded_libraries {
  std::mutex mutex;
  std::unordered_map<const compiled_program*, std::weak_ptr<const module>> by_program;
};
loaded_libraries& libraries() {
  static loaded_libraries all;
  return all;
}
}  // namespace

std::shared_ptr<const module> module::load(std::shared_ptr<const compiled_program> program) {
  if (!program || program->cubin.empty()) throw error("rtc: module::load of an empty program");
  loaded_libraries& all = libraries();
  std::lock_guard lock(all.mutex);
  if (auto it = all.by_program.find(program.get()); it != all.by_program.end())
    if (auto alive = it->second.lock()) return alive;
  cudaLibrary_t library = nullptr;
  CUDAG_CUDA_NODE(cudaLibraryLoadData(&library, program->cubin.data(), nullptr, nullptr, 0, nullptr,
                                      nullptr, 0),
                  program->program_name);
  std::shared_ptr<const module> loaded(new module(program, library));
  all.by_program[program.get()] = loaded;
  return loaded;
}

module::~module() {
  if (library_) (void)cudaLibraryUnload(library_);
}

cudaKernel_t module::kernel(std::string_view name_expression) const {
  const std::string& lowered = program_->lowered_name(name_expression);
  cudaKernel_t k = nullptr;
  CUDAG_CUDA_NODE(cudaLibraryGetKernel(&k, library_, lowered.c_str()), std::string(name_expression));
  return k;
}

}  // namespace cudag::rtc
