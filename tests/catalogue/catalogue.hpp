#pragma once
// Shared by the bad-input catalogue's tests (docs/bad-input-catalogue.md):
// each test feeds one bad input and asserts the exact error type and the
// exact message the catalogue quotes.
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cudag/error.hpp"
#include "cudag/native_recorder.hpp"
#include "engine/recorder_support.hpp"

namespace catalogue {

using strings = std::vector<std::string>;

inline std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? name.get() : type.name();
}

/// Runs `call` and returns the exception it threw, which must be of type E
/// exactly (not a type derived from it); adds a failure and returns nothing
/// when the call succeeds or throws anything else.
template <class E, class Call>
std::optional<E> refusal(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const E& e) {
    if (typeid(e) != typeid(E)) {
      ADD_FAILURE() << "threw " << type_name(typeid(e)) << ", expected " << type_name(typeid(E))
                    << ": " << e.what();
      return std::nullopt;
    }
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw " << type_name(typeid(e)) << ", expected " << type_name(typeid(E))
                  << ": " << e.what();
    return std::nullopt;
  } catch (...) {
    ADD_FAILURE() << "threw something that is not a std::exception, expected "
                  << type_name(typeid(E));
    return std::nullopt;
  }
  ADD_FAILURE() << "the bad input was accepted, expected " << type_name(typeid(E));
  return std::nullopt;
}

/// After everything made under `rec` is gone: nothing left alive, no misuse.
inline void expect_no_leak(const cudag::native::recorder& rec) {
  EXPECT_EQ(rec.live_graphs(), 0u) << rec.transcript();
  EXPECT_EQ(rec.live_execs(), 0u) << rec.transcript();
  EXPECT_EQ(rec.live_streams(), 0u) << rec.transcript();
  EXPECT_TRUE(rec.misuse().empty()) << rec.misuse().front();
}

// Kernels: host functions stand in (only their signatures matter).
inline void scale(float* x, float a, int n) { (void)x, (void)a, (void)n; }
inline void set_flag(cudaGraphConditionalHandle h) { (void)h; }

// Stand-in device addresses, above 4 GiB (recorder_support.hpp).
using engine_test::dev_x;
inline float* const dev_x2 = engine_test::dev_z;

}  // namespace catalogue
