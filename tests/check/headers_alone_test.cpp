// The check layer's public headers, each compiled alone in its own file.
#include <gtest/gtest.h>

#include <string>

namespace cudag::check_test {
std::size_t analysis_fields_from_check_header();
std::string dot_from_dot_header();
}  // namespace cudag::check_test

TEST(HeadersAlone, CheckAndDotHeadersCompileAlone) {
  EXPECT_EQ(cudag::check_test::analysis_fields_from_check_header(), 3u);
  EXPECT_EQ(cudag::check_test::dot_from_dot_header().rfind("digraph \"cudag\" {", 0), 0u);
}
