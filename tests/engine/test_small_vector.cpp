// small_vector: the container of a spec node's dependencies and a kernel's
// arguments. Every member against std::vector's answer, with an element that
// counts its live copies (a leak or a double destruction shows as a count
// that does not return to zero), across the inline and heap states.
#include "cudag/small_vector.hpp"  // first: it compiles alone

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudag/spec.hpp"

namespace {

/// A string that counts how many of it are alive.
struct counted {
  static inline int alive = 0;
  std::string text;
  counted() { ++alive; }
  counted(std::string t) : text(std::move(t)) { ++alive; }  // NOLINT: implicit, for brace lists
  counted(const counted& o) : text(o.text) { ++alive; }
  counted(counted&& o) noexcept : text(std::move(o.text)) { ++alive; }
  counted& operator=(const counted&) = default;
  counted& operator=(counted&&) noexcept = default;
  ~counted() { --alive; }
  friend bool operator==(const counted&, const counted&) = default;
};

using two = cudag::small_vector<counted, 2>;

std::vector<std::string> texts(const two& v) {
  std::vector<std::string> out;
  for (const counted& c : v) out.push_back(c.text);
  return out;
}

// Long enough that no string keeps it in place: a moved-from element's heap
// text would show up twice if an element were copied bitwise.
std::string word(int i) { return "element-with-a-long-text-" + std::to_string(i); }

class SmallVector : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(counted::alive, 0) << "elements leaked or destroyed twice"; }
};

TEST_F(SmallVector, StaysInPlaceUpToItsCapacityThenMovesToTheHeap) {
  two v;
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.capacity(), 2u);
  v.push_back(counted(word(0)));
  v.emplace_back(word(1));
  EXPECT_TRUE(v.is_inline());
  const counted third(word(2));
  v.push_back(third);
  EXPECT_FALSE(v.is_inline());
  EXPECT_GE(v.capacity(), 3u);
  EXPECT_EQ(texts(v), (std::vector<std::string>{word(0), word(1), word(2)}));
  EXPECT_EQ(v.front().text, word(0));
  EXPECT_EQ(v.back().text, word(2));
  EXPECT_EQ(v.at(1).text, word(1));
  EXPECT_THROW((void)v.at(3), std::out_of_range);
  // Sizes are 32-bit: more is refused before anything is allocated.
  EXPECT_THROW(v.reserve(std::size_t{UINT32_MAX} + 1), std::length_error);
  EXPECT_EQ(v.size(), 3u);
  v.pop_back();
  EXPECT_EQ(v.size(), 2u);
}

TEST_F(SmallVector, AnElementOfItsOwnSurvivesTheGrowthItCauses) {
  two v{counted(word(0)), counted(word(1))};
  v.push_back(v[0]);  // the source lives in the storage being replaced
  v.emplace_back(v[1]);
  EXPECT_EQ(texts(v), (std::vector<std::string>{word(0), word(1), word(0), word(1)}));
  v.insert(v.begin() + 1, v.begin() + 2, v.end());  // from itself, growing again
  EXPECT_EQ(texts(v),
            (std::vector<std::string>{word(0), word(0), word(1), word(1), word(0), word(1)}));
}

TEST_F(SmallVector, CopiesAndMovesInBothStates) {
  for (int count : {1, 2, 5}) {
    two source;
    for (int i = 0; i < count; ++i) source.emplace_back(word(i));
    const std::vector<std::string> expected = texts(source);

    two copy(source);
    EXPECT_EQ(texts(copy), expected) << count;
    two assigned{counted("before")};
    assigned = source;
    EXPECT_EQ(texts(assigned), expected) << count;
    EXPECT_TRUE(assigned == source);

    two moved(std::move(copy));
    EXPECT_EQ(texts(moved), expected) << count;
    EXPECT_TRUE(copy.empty()) << count;  // NOLINT: the moved-from state is specified
    EXPECT_TRUE(copy.is_inline()) << count;
    two move_assigned{counted("a"), counted("b"), counted("c")};
    move_assigned = std::move(moved);
    EXPECT_EQ(texts(move_assigned), expected) << count;
    EXPECT_EQ(move_assigned.is_inline(), count <= 2) << count;

    // Reused after being moved from.
    copy.emplace_back("again");
    EXPECT_EQ(texts(copy), std::vector<std::string>{"again"});
  }
}

TEST_F(SmallVector, EditsAgreeWithStdVector) {
  for (int count : {0, 1, 2, 3, 8}) {
    std::vector<counted> expected;
    two v;
    for (int i = 0; i < count; ++i) {
      expected.emplace_back(word(i));
      v.emplace_back(word(i));
    }
    const auto same = [&](const char* what) {
      ASSERT_EQ(v.size(), expected.size()) << what << ", " << count;
      for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], expected[i]) << what << ", " << i;
    };
    v.insert(v.begin(), counted("first"));
    expected.insert(expected.begin(), counted("first"));
    same("insert at the front");
    const counted last("last");
    v.insert(v.end(), last);
    expected.insert(expected.end(), last);
    same("insert at the end");
    const std::vector<counted> more{counted("x"), counted("y")};
    v.insert(v.begin() + 1, more.begin(), more.end());
    expected.insert(expected.begin() + 1, more.begin(), more.end());
    same("insert a range");
    v.erase(v.begin() + 2);
    expected.erase(expected.begin() + 2);
    same("erase one");
    v.erase(v.begin(), v.begin() + 2);
    expected.erase(expected.begin(), expected.begin() + 2);
    same("erase a range");
    v.resize(v.size() + 3);
    expected.resize(expected.size() + 3);
    same("resize up");
    v.resize(1);
    expected.resize(1);
    same("resize down");
    v.assign(3, counted("same"));
    expected.assign(3, counted("same"));
    same("assign copies");
    v.assign(more.begin(), more.end());
    expected.assign(more.begin(), more.end());
    same("assign a range");
    v.assign({counted("p"), counted("q"), counted("r")});
    expected.assign({counted("p"), counted("q"), counted("r")});
    same("assign a list");
    v = {counted("s")};
    expected = {counted("s")};
    same("a list assigned");
    v.reserve(20);
    EXPECT_GE(v.capacity(), 20u);
    same("reserve");
    v.clear();
    expected.clear();
    same("clear");
  }
}

TEST_F(SmallVector, ConvertsToAndFromStdVector) {
  const std::vector<counted> list{counted(word(0)), counted(word(1)), counted(word(2))};
  const two from_copy(list);
  EXPECT_EQ(texts(from_copy), (std::vector<std::string>{word(0), word(1), word(2)}));
  std::vector<counted> movable = list;
  const two from_move(std::move(movable));
  EXPECT_TRUE(from_move == from_copy);
  const two from_range(list.begin(), list.begin() + 2);
  EXPECT_EQ(texts(from_range), (std::vector<std::string>{word(0), word(1)}));
  const two sized(3);
  EXPECT_EQ(sized.size(), 3u);
  const two filled(2, counted("f"));
  EXPECT_EQ(texts(filled), (std::vector<std::string>{"f", "f"}));
  const std::vector<counted> back = from_copy;
  EXPECT_EQ(back, list);
  EXPECT_FALSE(from_range == from_copy);
}

TEST_F(SmallVector, HoldsASpecNodesDependenciesAndArguments) {
  // What the spec's two uses need of it: names written as lists, and values.
  cudag::node n{"k", cudag::kernel_node{}, {"a", "b"}};
  n.deps.push_back("c");
  EXPECT_EQ(n.deps.size(), 3u);
  EXPECT_EQ(n.deps[2], "c");
  auto& kernel = std::get<cudag::kernel_node>(n.params);
  EXPECT_EQ(cudag::kernel_arguments::inline_capacity(), 3u);
  kernel.args.push_back(cudag::make_literal(1.5f));
  kernel.args.push_back(cudag::value{cudag::type_of<int>(), cudag::param_ref{"n"}});
  EXPECT_TRUE(kernel.args.is_inline());
  const cudag::node copy = n;
  EXPECT_EQ(std::get<cudag::kernel_node>(copy.params).args, kernel.args);
  EXPECT_EQ(copy.deps, n.deps);
  std::vector<cudag::node> nodes;
  for (int i = 0; i < 100; ++i) nodes.push_back(n);  // relocated as the vector grows
  EXPECT_EQ(std::get<cudag::kernel_node>(nodes.front().params).args, kernel.args);
  EXPECT_EQ(nodes.back().deps, n.deps);
}

}  // namespace
