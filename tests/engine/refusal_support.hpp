#pragma once
// What the engine's cpu tests share about refusals: check() refusing a spec
// with an exact message, naming exact nodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudag/check.hpp"

namespace engine_test {

/// Expects check() to refuse `spec` with `message`, naming `nodes`.
inline void expect_refused(const cudag::graph_spec& spec, const std::string& message,
                           const std::vector<std::string>& nodes) {
  try {
    cudag::check(spec);
    FAIL() << "accepted; expected: " << message;
  } catch (const cudag::check_error& e) {
    EXPECT_EQ(e.what(), message);
    EXPECT_EQ(e.nodes(), nodes);
  }
}

}  // namespace engine_test
