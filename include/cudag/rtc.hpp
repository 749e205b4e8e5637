#pragma once
// Run-time compiled kernels: NVRTC compiles CUDA C++ source to a cubin for
// one architecture, the CUDA runtime loads it as a library
// (cudaLibraryLoadData, no driver API), and a typed handle makes each kernel
// usable as a kernel node like any nvcc-compiled kernel.
//
//   const cudag::rtc::source src{"scale.cu", R"(
//     template <class T>
//     __global__ void scale(T* x, T a, int n) {
//       int i = blockIdx.x * blockDim.x + threadIdx.x;
//       if (i < n) x[i] *= a;
//     })"};
//   auto scale = cudag::rtc::compile_kernel<void(float*, float, int)>(src, "scale<float>");
//   b.kernel("scale", scale, cudag::launch_over(n, 256), x, 2.0f, n);
//
// Compile time: the builder checks node arguments against the declared
// signature, as for any kernel_ref. Load time: the declared signature is
// checked against the one the compiler mangled into the kernel's name; a
// mismatch throws with both signatures. An `extern "C"` kernel's name holds
// no types and is accepted unchecked: prefer C++ linkage.
//
// Compile once: programs are cached by everything they depend on (see
// rtc_cache.hpp), in memory and optionally in a directory. A kernel handle
// keeps its loaded library alive, and so does every spec and exec that uses
// it (kernel_node::keep_alive).
#include <cuda_runtime_api.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cudag/arguments.hpp"
#include "cudag/error.hpp"
#include "cudag/rtc_cache.hpp"
#include "cudag/rtc_signature.hpp"

namespace cudag::rtc {

/// CUDA C++ source text and the name NVRTC shows in its messages.
struct source {
  std::string name = "kernel.cu";
  std::string text;

  /// Reads a file; the file's name becomes the program name. Throws
  /// cudag::error when it cannot be read.
  [[nodiscard]] static source from_file(const std::filesystem::path& path);
};

/// A header given to NVRTC from memory (part of the cache key, unlike
/// headers found through include paths).
struct header {
  std::string name;  ///< as written in #include "name"
  std::string text;
};

struct options {
  /// "sm_90", "compute_90" (PTX is then JIT-compiled at load)...; empty: the
  /// architecture of the current device.
  std::string architecture;
  std::vector<std::filesystem::path> include_paths;
  std::vector<std::string> defines;  ///< "N=4" or "USE_FAST_PATH"
  std::vector<std::string> extra;    ///< passed to NVRTC as they are ("-use_fast_math")
  std::vector<header> headers;
  /// Language standard; empty: NVRTC's default.
  std::string standard = "c++17";
  /// Where compiled programs are kept between runs; empty: memory only.
  std::filesystem::path cache_directory;
  /// Off: always compile (the result still goes to the cache).
  bool use_cache = true;
};

/// A compilation that NVRTC refused: what() names the program and the
/// kernels and holds the full log; log() is the log alone.
class compile_error : public error {
 public:
  compile_error(std::string message, std::string log, std::string program)
      : error(std::move(message), cudaSuccess, "nvrtcCompileProgram", std::move(program)),
        log_(std::move(log)) {}
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

/// "sm_XY" of the current device (cudaGetDevice + compute capability).
[[nodiscard]] std::string current_architecture();

/// The key of a compilation, for tests and tools (compile() computes it).
[[nodiscard]] cache_key make_cache_key(const source& src,
                                       const std::vector<std::string>& name_expressions,
                                       const options& opts, std::string_view architecture);

/// The NVRTC options compile() passes for `opts` and `architecture`.
[[nodiscard]] std::vector<std::string> nvrtc_options(const options& opts,
                                                     std::string_view architecture);

/// Compiles `src` with NVRTC (or takes it from the cache). Every kernel to be
/// loaded later must be among `name_expressions` ("scale<float>", "axpy").
/// Needs no GPU when opts.architecture is given. Throws compile_error.
[[nodiscard]] std::shared_ptr<const compiled_program> compile(
    const source& src, const std::vector<std::string>& name_expressions, const options& opts = {});

/// A compiled program loaded into the CUDA runtime (a cudaLibrary_t, usable
/// on every device of the architecture). Unloaded when the last user goes.
class module {
 public:
  /// Loads `program` with cudaLibraryLoadData.
  [[nodiscard]] static std::shared_ptr<const module> load(
      std::shared_ptr<const compiled_program> program);

  module(const module&) = delete;
  module& operator=(const module&) = delete;
  ~module();

  /// The kernel compiled for `name_expression` (cudaLibraryGetKernel).
  [[nodiscard]] cudaKernel_t kernel(std::string_view name_expression) const;
  [[nodiscard]] const compiled_program& program() const noexcept { return *program_; }
  [[nodiscard]] cudaLibrary_t native() const noexcept { return library_; }

 private:
  module(std::shared_ptr<const compiled_program> program, cudaLibrary_t library)
      : program_(std::move(program)), library_(library) {}
  std::shared_ptr<const compiled_program> program_;
  cudaLibrary_t library_ = nullptr;
};

/// A run-time compiled kernel with a declared signature. It is a kernel_ref,
/// so the builder (and the DSL) take it wherever they take a kernel.
template <class Signature>
class kernel;
template <class... P>
class kernel<void(P...)> : public kernel_ref<void(P...)> {
 public:
  /// Looks `name_expression` up in `loaded` and checks its mangled signature
  /// against void(P...); throws cudag::error showing both on a mismatch.
  kernel(std::shared_ptr<const module> loaded, std::string name_expression) {
    const std::string& lowered = loaded->program().lowered_name(name_expression);
    check_signature(name_expression, lowered, declared_parameters<void(P...)>::get());
    this->function = reinterpret_cast<const void*>(loaded->kernel(name_expression));
    this->name = std::move(name_expression);
    this->keep_alive = loaded;
    module_ = std::move(loaded);
  }

  [[nodiscard]] const kernel_ref<void(P...)>& ref() const noexcept { return *this; }
  [[nodiscard]] cudaKernel_t native() const noexcept {
    return reinterpret_cast<cudaKernel_t>(const_cast<void*>(this->function));
  }
  [[nodiscard]] const std::shared_ptr<const module>& loaded_module() const noexcept { return module_; }

 private:
  std::shared_ptr<const module> module_;
};

/// compile() + module::load() + kernel<Signature>, for one kernel.
template <class Signature>
[[nodiscard]] kernel<Signature> compile_kernel(const source& src, std::string name_expression,
                                               const options& opts = {}) {
  auto program = compile(src, {name_expression}, opts);
  // Refuse a wrong declaration before anything is loaded.
  check_signature(name_expression, program->lowered_name(name_expression),
                  declared_parameters<Signature>::get());
  return kernel<Signature>(module::load(std::move(program)), std::move(name_expression));
}

[[noreturn]] void refuse_grid_dependency_marker(std::string_view name_expression,
                                                std::string_view program);

}  // namespace cudag::rtc

namespace cudag {

/// The marker for a run-time compiled kernel: its PTX is read first, and a
/// kernel without griddepcontrol.wait (cudaGridDependencySynchronize()) in
/// its entry is refused, naming it, before any edge can trust the mark.
template <class... P>
[[nodiscard]] rtc::kernel<void(P...)> synchronizes_grid_dependencies(rtc::kernel<void(P...)> k) {
  const rtc::compiled_program& program = k.loaded_module()->program();
  if (!program.waits_for_grid_dependencies(k.name))
    rtc::refuse_grid_dependency_marker(k.name, program.program_name);
  k.synchronizes_grid_dependencies = true;
  return k;
}

}  // namespace cudag
