#pragma once
// A fixed-size array of trivially copyable elements for the check layer's
// per-call scratch of a large graph (the name table, dependency keys).
//
// Past a few megabytes it is mapped on its own, aligned to 2 MiB and marked
// for transparent huge pages before it is first touched: a million-node
// graph's lookups land at random in a table of 32 MiB, which in 4 KiB pages
// is a TLB miss on nearly every probe (a two-level page walk under a
// hypervisor), and faulting it in takes thousands of faults instead of
// sixteen. Where huge pages are not granted it behaves as plain memory.
// Smaller arrays come from the heap.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudag::check_detail {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
/// Arrays of at least this many bytes are worth huge pages.
inline constexpr std::size_t huge_pages_from = std::size_t{4} << 20;

/// Marks the whole 2 MiB pages inside [data, data + bytes) for transparent
/// huge pages, for memory not yet touched there (a fresh heap block of
/// that size is its own mapping; already-touched pages stay as they are).
/// Does nothing below huge_pages_from bytes.
inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
  if (bytes < huge_pages_from) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge_page_bytes - 1) /
                     huge_page_bytes * huge_page_bytes;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / huge_page_bytes * huge_page_bytes;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

/// v.reserve(size), a new block's huge-page part advised before anything is
/// written to it (for a vector filled by push_back).
template <class T>
void reserve_in_huge_pages(std::vector<T>& v, std::size_t size) {
  if (v.capacity() < size) {
    v.reserve(size);
    advise_huge_pages(v.data(), size * sizeof(T));
  }
}

/// v.resize(size), with a new block's huge-page part advised before the
/// new elements are written (the per-call arrays that Boost.Graph or a
/// plan keep as std::vector: fewer page faults and TLB misses).
template <class T>
void resize_in_huge_pages(std::vector<T>& v, std::size_t size) {
  reserve_in_huge_pages(v, size);
  v.resize(size);
}

template <class T>
class large_array {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  large_array() = default;
  /// `size` elements, each a copy of `fill`.
  large_array(std::size_t size, const T& fill) : large_array(size) {
    for (std::size_t i = 0; i < size; ++i) data_[i] = fill;
  }
  /// `size` elements left uninitialized, for the caller to write before
  /// reading.
  explicit large_array(std::size_t size) : size_(size) {
    const std::size_t bytes = size * sizeof(T);
    if (bytes >= mapped_from) {
      mapped_ = (bytes + huge_page - 1) / huge_page * huge_page + huge_page;
      void* at = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (at == MAP_FAILED) throw std::bad_alloc();
      base_ = at;
      const auto address = reinterpret_cast<std::uintptr_t>(at);
      void* aligned = reinterpret_cast<void*>((address + huge_page - 1) / huge_page * huge_page);
      madvise(aligned, mapped_ - huge_page, MADV_HUGEPAGE);
      data_ = static_cast<T*>(aligned);
    } else if (size > 0) {
      data_ = static_cast<T*>(std::malloc(bytes));
      if (!data_) throw std::bad_alloc();
    }
  }
  large_array(const large_array&) = delete;
  large_array& operator=(const large_array&) = delete;
  large_array(large_array&& other) noexcept { swap(other); }
  large_array& operator=(large_array&& other) noexcept {
    large_array(std::move(other)).swap(*this);
    return *this;
  }
  ~large_array() {
    if (mapped_ != 0)
      munmap(base_, mapped_);
    else
      std::free(data_);
  }

  void swap(large_array& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(base_, other.base_);
    std::swap(mapped_, other.mapped_);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static constexpr std::size_t mapped_from = std::size_t{4} << 20;
  T* data_ = nullptr;
  std::size_t size_ = 0;
  void* base_ = nullptr;    // the mapping, when mapped
  std::size_t mapped_ = 0;  // its length in bytes; 0 when from the heap
};

}  // namespace cudag::check_detail
