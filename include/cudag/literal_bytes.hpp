#pragma once
// The bytes of a literal argument. Every scalar and pointer a kernel takes
// fits inline, so that writing a spec makes no allocation per literal; a
// larger struct passed by value goes to the heap.
#include <cstddef>
#include <cstring>

#include "cudag/lean_std.hpp"

namespace cudag {

class literal_bytes {
 public:
  static constexpr std::size_t inline_capacity = 16;

  literal_bytes() noexcept = default;
  literal_bytes(const void* data, std::size_t size) { assign(data, size); }
  literal_bytes(const literal_bytes& other) { assign(other.data(), other.size_); }
  literal_bytes(literal_bytes&& other) noexcept
      : heap_(std::move(other.heap_)), size_(other.size_) {
    std::memcpy(inline_, other.inline_, inline_capacity);
    other.size_ = 0;
  }
  literal_bytes& operator=(const literal_bytes& other) {
    if (this != &other) assign(other.data(), other.size_);
    return *this;
  }
  literal_bytes& operator=(literal_bytes&& other) noexcept {
    heap_ = std::move(other.heap_);
    size_ = other.size_;
    std::memcpy(inline_, other.inline_, inline_capacity);
    other.size_ = 0;
    return *this;
  }
  ~literal_bytes() = default;

  /// Resizes to `size` bytes; the contents are unspecified afterwards.
  void resize(std::size_t size) {
    if (size > inline_capacity) heap_ = std::make_unique<std::byte[]>(size);
    else heap_.reset();
    size_ = size;
  }
  void assign(const void* data, std::size_t size) {
    resize(size);
    if (size) std::memcpy(this->data(), data, size);
  }

  [[nodiscard]] std::byte* data() noexcept { return heap_ ? heap_.get() : inline_; }
  [[nodiscard]] const std::byte* data() const noexcept { return heap_ ? heap_.get() : inline_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] const std::byte* begin() const noexcept { return data(); }
  [[nodiscard]] const std::byte* end() const noexcept { return data() + size_; }

  friend bool operator==(const literal_bytes& a, const literal_bytes& b) noexcept {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_) == 0);
  }

 private:
  std::unique_ptr<std::byte[]> heap_;
  std::size_t size_ = 0;
  alignas(8) std::byte inline_[inline_capacity]{};
};

}  // namespace cudag
