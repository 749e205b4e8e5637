#include "cudag/rtc_cache.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "cudag/error.hpp"

namespace cudag::rtc {

bool compiled_program::waits_for_grid_dependencies(std::string_view name_expression) const {
  return std::find(grid_dependency_waiters.begin(), grid_dependency_waiters.end(), name_expression) !=
         grid_dependency_waiters.end();
}

const std::string& compiled_program::lowered_name(std::string_view name_expression) const {
  for (const auto& [expression, mangled] : lowered)
    if (expression == name_expression) return mangled;
  std::string known;
  for (const auto& entry : lowered) {
    if (!known.empty()) known += ", ";
    known += entry.first;
  }
  throw error("rtc: program '" + program_name + "' was not compiled with the name expression '" +
                  std::string(name_expression) + "' (it has: " + (known.empty() ? "none" : known) +
                  "); pass it to compile()",
              cudaSuccess, {}, std::string(name_expression));
}

// Each field as "label:length:value;" so that no two field lists serialise alike.
void cache_key::add(std::string_view label, std::string_view value) {
  text_ += label;
  text_ += ':';
  text_ += std::to_string(value.size());
  text_ += ':';
  text_ += value;
  text_ += ';';
}

namespace {
std::uint64_t fnv1a(std::string_view text, std::uint64_t basis) {
  std::uint64_t h = basis;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}
std::string hex64(std::uint64_t v) {
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(v));
  return digits;
}

// File format: magic, then length-prefixed fields (key text, program name,
// architecture, log, lowered-name pairs, cubin, the kernels that wait for
// their grid dependencies). Little-endian host order: a
// cache directory is not shared between machines of different byte order.
constexpr std::string_view file_magic = "cudag-rtc-program-2\n";

void write_field(std::ostream& out, std::string_view bytes) {
  const std::uint64_t size = bytes.size();
  out.write(reinterpret_cast<const char*>(&size), sizeof size);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
bool read_field(std::istream& in, std::string& bytes) {
  std::uint64_t size = 0;
  if (!in.read(reinterpret_cast<char*>(&size), sizeof size)) return false;
  if (size > (std::uint64_t(1) << 32)) return false;
  bytes.resize(size);
  return static_cast<bool>(in.read(bytes.data(), static_cast<std::streamsize>(size)));
}

std::shared_ptr<const compiled_program> read_program(const std::filesystem::path& file,
                                                     const cache_key& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return nullptr;
  std::string magic(file_magic.size(), '\0');
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != file_magic)
    return nullptr;
  std::string key_text, count_text, cubin;
  if (!read_field(in, key_text) || key_text != key.text()) return nullptr;  // a hash collision
  auto program = std::make_shared<compiled_program>();
  if (!read_field(in, program->program_name) || !read_field(in, program->architecture) ||
      !read_field(in, program->log) || !read_field(in, count_text))
    return nullptr;
  const std::size_t count = std::stoull(count_text);
  for (std::size_t i = 0; i < count; ++i) {
    std::pair<std::string, std::string> entry;
    if (!read_field(in, entry.first) || !read_field(in, entry.second)) return nullptr;
    program->lowered.push_back(std::move(entry));
  }
  if (!read_field(in, cubin) || cubin.empty()) return nullptr;
  program->cubin.assign(cubin.begin(), cubin.end());
  if (!read_field(in, count_text)) return nullptr;
  const std::size_t waiters = std::stoull(count_text);
  for (std::size_t i = 0; i < waiters; ++i) {
    std::string expression;
    if (!read_field(in, expression)) return nullptr;
    program->grid_dependency_waiters.push_back(std::move(expression));
  }
  program->key_hash = key.hash();
  return program;
}

void write_program(const std::filesystem::path& directory, const cache_key& key,
                   const compiled_program& program) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return;
  // A unique temporary name, then rename: concurrent writers of one key
  // each publish a whole file, and readers never see a partial one.
  std::random_device entropy;
  const std::filesystem::path temporary =
      directory / (key.hash() + ".tmp" + hex64((std::uint64_t(entropy()) << 32) | entropy()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(file_magic.data(), static_cast<std::streamsize>(file_magic.size()));
    write_field(out, key.text());
    write_field(out, program.program_name);
    write_field(out, program.architecture);
    write_field(out, program.log);
    write_field(out, std::to_string(program.lowered.size()));
    for (const auto& [expression, mangled] : program.lowered) {
      write_field(out, expression);
      write_field(out, mangled);
    }
    write_field(out, std::string_view(program.cubin.data(), program.cubin.size()));
    write_field(out, std::to_string(program.grid_dependency_waiters.size()));
    for (const std::string& expression : program.grid_dependency_waiters) write_field(out, expression);
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(temporary, ec);
      return;
    }
  }
  std::filesystem::rename(temporary, directory / (key.hash() + ".cubin"), ec);
  if (ec) std::filesystem::remove(temporary, ec);
}
}  // namespace

std::string cache_key::hash() const {
  return hex64(fnv1a(text_, 0xcbf29ce484222325ull)) + hex64(fnv1a(text_, 0x84222325cbf29ce4ull));
}

struct program_cache::state {
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const compiled_program>> programs;  // by key text
  std::atomic<std::uint64_t> memory_hits{0};
  std::atomic<std::uint64_t> disk_hits{0};
};

program_cache::program_cache() : state_(std::make_shared<state>()) {}

program_cache& program_cache::instance() {
  static program_cache cache;
  return cache;
}

std::shared_ptr<const compiled_program> program_cache::find(const cache_key& key,
                                                            const std::filesystem::path& directory) {
  {
    std::lock_guard lock(state_->mutex);
    if (auto it = state_->programs.find(key.text()); it != state_->programs.end()) {
      ++state_->memory_hits;
      return it->second;
    }
  }
  if (directory.empty()) return nullptr;
  auto program = read_program(directory / (key.hash() + ".cubin"), key);
  if (!program) return nullptr;
  ++state_->disk_hits;
  std::lock_guard lock(state_->mutex);
  return state_->programs.try_emplace(key.text(), std::move(program)).first->second;
}

void program_cache::store(const cache_key& key, std::shared_ptr<const compiled_program> program,
                          const std::filesystem::path& directory) {
  if (!directory.empty()) write_program(directory, key, *program);
  std::lock_guard lock(state_->mutex);
  state_->programs.insert_or_assign(key.text(), std::move(program));
}

void program_cache::clear() {
  std::lock_guard lock(state_->mutex);
  state_->programs.clear();
}

std::size_t program_cache::size() const {
  std::lock_guard lock(state_->mutex);
  return state_->programs.size();
}

std::uint64_t program_cache::memory_hits() const { return state_->memory_hits.load(); }
std::uint64_t program_cache::disk_hits() const { return state_->disk_hits.load(); }

}  // namespace cudag::rtc
