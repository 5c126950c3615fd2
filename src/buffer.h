// A float buffer whose allocation can fail gracefully. WASM builds have no C++ exceptions, so
// std::vector would abort the module on a huge request; callers here get a message instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace attn {

// Multiplies sizes, reporting overflow instead of wrapping. Limit: 2^31 floats (8 GiB) is far
// past any WASM heap, so anything above it is "too large" on every target.
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  constexpr std::size_t kLimit = std::size_t{1} << 31;
  if (a != 0 && b > kLimit / a) return false;
  *out = a * b;
  return *out <= kLimit;
}

inline std::size_t product_or_zero(std::initializer_list<std::size_t> dims, bool* ok) {
  std::size_t n = 1;
  for (std::size_t d : dims)
    if (!checked_mul(n, d, &n)) {
      *ok = false;
      return 0;
    }
  return n;
}

class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  ~Buffer() { std::free(data_); }

  // Makes the buffer hold n floats (contents unspecified); keeps the old block when it is big
  // enough, so repeated calls of the same shape do not allocate. False if memory ran out.
  bool resize(std::size_t n) {
    if (n > capacity_) {
      void* p = std::malloc((n ? n : 1) * sizeof(float));
      if (!p) return false;
      std::free(data_);
      data_ = static_cast<float*>(p);
      capacity_ = n;
    }
    size_ = n;
    return true;
  }
  void release() {
    std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

inline std::string out_of_memory(const char* what, std::size_t floats) {
  return std::string("out of memory: ") + what + " needs " +
         std::to_string((floats * sizeof(float) + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace attn
