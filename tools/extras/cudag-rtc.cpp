// cudag-rtc: compiles a kernel file with NVRTC (no GPU needed) and prints,
// for each name expression, its mangled name and the signature cudag reads
// from it, so that a declaration rtc::kernel<void(...)> can be written or
// checked offline. With --cache DIR the program lands in that cache
// directory, ready for a later run to load without compiling.
//
//   cudag-rtc [--arch sm_90] [--cache DIR] [-I PATH] [-D NAME=VALUE] FILE EXPRESSION...
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cudag/rtc.hpp"

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: cudag-rtc [--arch sm_XY] [--cache DIR] [-I PATH] [-D NAME[=VALUE]] FILE "
               "EXPRESSION...\n");
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  namespace rtc = cudag::rtc;
  rtc::options opts;
  opts.architecture = "sm_90";
  std::string file;
  std::vector<std::string> expressions;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--arch" && has_value) opts.architecture = argv[++i];
    else if (arg == "--cache" && has_value) opts.cache_directory = argv[++i];
    else if (arg == "-I" && has_value) opts.include_paths.emplace_back(argv[++i]);
    else if (arg == "-D" && has_value) opts.defines.emplace_back(argv[++i]);
    else if (arg.starts_with("-")) return usage();
    else if (file.empty()) file = arg;
    else expressions.push_back(arg);
  }
  if (file.empty() || expressions.empty()) return usage();
  try {
    const auto program = rtc::compile(rtc::source::from_file(file), expressions, opts);
    if (!program->log.empty()) std::fprintf(stderr, "%s\n", program->log.c_str());
    for (const auto& [expression, mangled] : program->lowered) {
      const auto signature = rtc::parse_lowered_name(mangled);
      std::printf("%s\t%s\t%s\n", expression.c_str(), mangled.c_str(),
                  signature ? signature->to_string().c_str() : "(extern \"C\": no types to check)");
    }
    std::printf("cubin: %zu bytes for %s, key %s\n", program->cubin.size(),
                program->architecture.c_str(), program->key_hash.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
