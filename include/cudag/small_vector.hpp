#pragma once
// A vector that holds its first N elements in place and moves to the heap
// only beyond them. A spec's node owns a few dependencies and a kernel's few
// arguments: as std::vectors they cost two heap blocks per node, allocated
// by the builder and freed with the spec, which was a fifth of the builder
// path's time. The interface is std::vector's, for the members specs use.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudag {

// Elements must move without throwing: growing moves them, and a throw
// half-way would leave neither storage whole.
template <class T, std::size_t N>
  requires(N > 0 && std::is_nothrow_move_constructible_v<T>)
class small_vector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  small_vector() noexcept = default;
  small_vector(std::initializer_list<T> items) { append_copies(items.begin(), items.end()); }
  template <std::input_iterator It>
  small_vector(It first, It last) {
    append_copies(first, last);
  }
  explicit small_vector(size_type count) { resize(count); }
  small_vector(size_type count, const T& item) { assign(count, item); }
  // From and to std::vector: specs written before this type took vectors.
  small_vector(const std::vector<T>& items) { append_copies(items.begin(), items.end()); }
  small_vector(std::vector<T>&& items) {
    reserve(items.size());
    for (T& item : items) emplace_back(std::move(item));
  }
  small_vector(const small_vector& other) { append_copies(other.begin(), other.end()); }
  small_vector(small_vector&& other) noexcept {
    take(std::move(other));
  }
  small_vector& operator=(const small_vector& other) {
    if (this != &other) {
      clear();
      append_copies(other.begin(), other.end());
    }
    return *this;
  }
  small_vector& operator=(small_vector&& other) noexcept {
    if (this != &other) {
      release();
      take(std::move(other));
    }
    return *this;
  }
  small_vector& operator=(std::initializer_list<T> items) {
    clear();
    append_copies(items.begin(), items.end());
    return *this;
  }
  ~small_vector() { release(); }

  [[nodiscard]] operator std::vector<T>() const { return std::vector<T>(begin(), end()); }

  // ---------------------------------------------------------------- access --
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] size_type capacity() const noexcept { return capacity_; }
  [[nodiscard]] static constexpr size_type inline_capacity() noexcept { return N; }
  [[nodiscard]] bool is_inline() const noexcept { return data_ == in_place(); }
  [[nodiscard]] iterator begin() noexcept { return data_; }
  [[nodiscard]] iterator end() noexcept { return data_ + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return data_; }
  [[nodiscard]] const_iterator end() const noexcept { return data_ + size_; }
  [[nodiscard]] const_iterator cbegin() const noexcept { return data_; }
  [[nodiscard]] const_iterator cend() const noexcept { return data_ + size_; }
  [[nodiscard]] T& operator[](size_type i) noexcept { return data_[i]; }
  [[nodiscard]] const T& operator[](size_type i) const noexcept { return data_[i]; }
  [[nodiscard]] T& at(size_type i) {
    if (i >= size_) throw std::out_of_range("cudag::small_vector::at: index out of range");
    return data_[i];
  }
  [[nodiscard]] const T& at(size_type i) const {
    if (i >= size_) throw std::out_of_range("cudag::small_vector::at: index out of range");
    return data_[i];
  }
  [[nodiscard]] T& front() noexcept { return data_[0]; }
  [[nodiscard]] const T& front() const noexcept { return data_[0]; }
  [[nodiscard]] T& back() noexcept { return data_[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }

  // ------------------------------------------------------------- modifiers --
  void reserve(size_type wanted) {
    if (wanted > capacity_) relocate(wanted);
  }
  template <class... A>
  T& emplace_back(A&&... args) {
    if (size_ == capacity_) return grow_and_emplace(std::forward<A>(args)...);
    T* made = construct(data_ + size_, std::forward<A>(args)...);
    ++size_;
    return *made;
  }
  void push_back(const T& item) { emplace_back(item); }
  void push_back(T&& item) { emplace_back(std::move(item)); }
  void pop_back() noexcept { std::destroy_at(data_ + --size_); }
  void clear() noexcept {
    std::destroy(data_, data_ + size_);
    size_ = 0;
  }
  void resize(size_type count) {
    if (count < size_) {
      std::destroy(data_ + count, data_ + size_);
      size_ = static_cast<std::uint32_t>(count);
      return;
    }
    reserve(count);
    while (size_ < count) emplace_back();
  }
  void assign(size_type count, const T& item) {
    clear();
    reserve(count);
    for (size_type i = 0; i < count; ++i) emplace_back(item);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    append_copies(first, last);
  }
  void assign(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  iterator insert(const_iterator at, const T& item) { return insert(at, &item, &item + 1); }
  iterator insert(const_iterator at, T&& item) {
    const size_type position = static_cast<size_type>(at - data_);
    emplace_back(std::move(item));
    std::rotate(data_ + position, data_ + size_ - 1, data_ + size_);
    return data_ + position;
  }
  template <std::input_iterator It>
  iterator insert(const_iterator at, It first, It last) {
    const size_type position = static_cast<size_type>(at - data_);
    const size_type before = size_;
    // Copied to the end first (the source may be this vector's own
    // elements, which a reallocation moves), then rotated into place.
    std::vector<T> copies(first, last);
    reserve(size_ + copies.size());
    for (T& item : copies) emplace_back(std::move(item));
    std::rotate(data_ + position, data_ + before, data_ + size_);
    return data_ + position;
  }
  iterator erase(const_iterator at) { return erase(at, at + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T* const from = data_ + (first - data_);
    T* const to = data_ + (last - data_);
    T* const kept_end = std::move(to, end(), from);
    std::destroy(kept_end, end());
    size_ = static_cast<std::uint32_t>(kept_end - data_);
    return from;
  }

  friend bool operator==(const small_vector& a, const small_vector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  /// construct_at, or brace initialisation for an aggregate: compilers
  /// without C++20's parenthesised aggregate initialisation (clang before
  /// 16) cannot make a `value` from its members with construct_at.
  template <class... A>
  static T* construct(T* at, A&&... args) {
    if constexpr (std::is_constructible_v<T, A&&...>)
      return std::construct_at(at, std::forward<A>(args)...);
    else
      return ::new (static_cast<void*>(at)) T{std::forward<A>(args)...};
  }
  T* in_place() noexcept { return reinterpret_cast<T*>(in_place_); }
  const T* in_place() const noexcept { return reinterpret_cast<const T*>(in_place_); }

  template <class It>
  void append_copies(It first, It last) {
    if constexpr (std::forward_iterator<It>) reserve(size_ + static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }

  /// Sizes are 32-bit: a vector of more elements is refused.
  static void refuse_beyond_limit(size_type count) {
    if (count > UINT32_MAX) throw std::length_error("cudag::small_vector: more than 2^32 - 1 elements");
  }

  template <class... A>
  T& grow_and_emplace(A&&... args) {
    // The new element is made first: an argument may refer to an element.
    refuse_beyond_limit(size_type{size_} + 1);
    const size_type wanted = std::min<size_type>(std::max<size_type>(2 * size_type{capacity_}, size_ + 1), UINT32_MAX);
    T* fresh = std::allocator<T>().allocate(wanted);
    T* made = nullptr;
    try {
      made = construct(fresh + size_, std::forward<A>(args)...);
    } catch (...) {
      std::allocator<T>().deallocate(fresh, wanted);
      throw;
    }
    move_into(fresh, wanted);
    ++size_;
    return *made;
  }

  void relocate(size_type wanted) {
    refuse_beyond_limit(wanted);
    T* fresh = std::allocator<T>().allocate(wanted);
    move_into(fresh, wanted);
  }

  /// Moves the elements to `fresh` (room for `room`) and frees the old heap block.
  void move_into(T* fresh, size_type room) noexcept {
    std::uninitialized_move(data_, data_ + size_, fresh);
    std::destroy(data_, data_ + size_);
    if (!is_inline()) std::allocator<T>().deallocate(data_, capacity_);
    data_ = fresh;
    capacity_ = static_cast<std::uint32_t>(room);
  }

  void release() noexcept {
    std::destroy(data_, data_ + size_);
    if (!is_inline()) std::allocator<T>().deallocate(data_, capacity_);
    data_ = in_place();
    size_ = 0;
    capacity_ = N;
  }

  void take(small_vector&& other) noexcept {
    if (!other.is_inline()) {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.in_place();
      other.size_ = 0;
      other.capacity_ = N;
      return;
    }
    std::uninitialized_move(other.begin(), other.end(), in_place());
    size_ = other.size_;
    other.clear();
  }

  T* data_ = in_place();
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
  alignas(T) std::byte in_place_[N * sizeof(T)];
};

}  // namespace cudag
