#pragma once
// The compile-once cache of run-time compiled programs: what identifies a
// compilation (its key), and where compiled programs are kept (in memory for
// the whole process, and optionally in a directory shared between runs).
//
// The key covers the source text, its name, every option as given to NVRTC,
// the in-memory headers, the name expressions, the architecture and NVRTC's
// version. It does not cover files found through include paths: after
// editing such a header, clear the cache (or pass the header in memory).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cudag::rtc {

/// The NVRTC output a kernel is loaded from. Plain data: no GPU needed.
struct compiled_program {
  std::string program_name;
  std::string architecture;                                  ///< "sm_90"
  std::vector<char> cubin;
  std::vector<std::pair<std::string, std::string>> lowered;  ///< name expression -> mangled name
  std::string log;                                           ///< NVRTC's log (warnings)
  std::string key_hash;                                      ///< cache_key::hash() of its compilation
  /// The name expressions whose kernel waits for its grid dependencies: its
  /// PTX entry holds griddepcontrol.wait (cudaGridDependencySynchronize()).
  std::vector<std::string> grid_dependency_waiters;

  /// The mangled name of `name_expression`; throws cudag::error when the
  /// program was not compiled with that name expression.
  [[nodiscard]] const std::string& lowered_name(std::string_view name_expression) const;
  /// Whether the kernel of `name_expression` waits for its grid dependencies.
  [[nodiscard]] bool waits_for_grid_dependencies(std::string_view name_expression) const;
};

/// Everything a compilation's result depends on, serialised without ambiguity.
class cache_key {
 public:
  cache_key() = default;
  /// Appends one labelled field ("source", "option", ...).
  void add(std::string_view label, std::string_view value);

  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  /// 32 hex digits (two independent 64-bit FNV-1a hashes of text()), the
  /// file name of the program in a cache directory.
  [[nodiscard]] std::string hash() const;

  friend bool operator==(const cache_key&, const cache_key&) = default;

 private:
  std::string text_;
};

/// The process-wide cache. Thread-safe; entries stay until clear().
class program_cache {
 public:
  static program_cache& instance();

  /// The program for `key`: from memory, else from `directory` (when not
  /// empty and it holds a file for this key with the same full key inside),
  /// else nullptr.
  [[nodiscard]] std::shared_ptr<const compiled_program> find(const cache_key& key,
                                                             const std::filesystem::path& directory);
  /// Keeps `program` in memory and, when `directory` is not empty, writes it
  /// there (atomically: a reader never sees half a file). A failure to write
  /// the directory is not an error: the program is still usable.
  void store(const cache_key& key, std::shared_ptr<const compiled_program> program,
             const std::filesystem::path& directory);

  /// Forgets the in-memory entries (files in directories stay).
  void clear();
  [[nodiscard]] std::size_t size() const;
  /// Compilations served from memory or disk since the start (for tests).
  [[nodiscard]] std::uint64_t memory_hits() const;
  [[nodiscard]] std::uint64_t disk_hits() const;

  struct state;

 private:
  program_cache();
  std::shared_ptr<state> state_;
};

}  // namespace cudag::rtc
