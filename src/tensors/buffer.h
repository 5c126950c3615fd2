// Buffers whose allocation can fail gracefully. WASM builds have no C++ exceptions, so
// std::vector would abort the module on a huge request; callers here get a message instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace attn {

// The most floats one tensor may hold: 2^29 (2 GiB, the whole heap) on 32-bit targets such as
// wasm32, where a larger byte count would wrap size_t; 2^31 on 64-bit ones. Keeping every size
// below it also keeps every element index inside a 32-bit long.
constexpr std::size_t kMaxFloats = sizeof(std::size_t) >= 8 ? std::size_t{1} << 31 : std::size_t{1} << 29;

// Multiplies sizes, reporting a product above kMaxFloats instead of wrapping.
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > kMaxFloats / a) return false;
  *out = a * b;
  return *out <= kMaxFloats;
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

// A buffer of T (float, or the raw 16-bit halves a tied embedding keeps). Element counts are
// bounded by kMaxFloats whatever T is.
template <typename T>
class BasicBuffer {
 public:
  BasicBuffer() = default;
  BasicBuffer(const BasicBuffer&) = delete;
  BasicBuffer& operator=(const BasicBuffer&) = delete;
  BasicBuffer(BasicBuffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  BasicBuffer& operator=(BasicBuffer&& o) noexcept {
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
  ~BasicBuffer() { std::free(data_); }

  // Makes the buffer hold n elements (contents unspecified); keeps the old block when it is big
  // enough, so repeated calls of the same shape do not allocate. False if memory ran out.
  bool resize(std::size_t n) {
    if (n > kMaxFloats) return false;  // n * sizeof(float) would not fit the address space
    if (n > capacity_) {
      void* p = std::malloc((n ? n : 1) * sizeof(T));
      if (!p) return false;
      std::free(data_);
      data_ = static_cast<T*>(p);
      capacity_ = n;
    }
    size_ = n;
    return true;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

using Buffer = BasicBuffer<float>;
// IEEE 754 binary16 values as stored (bits), read through half_to_float (half.h).
using HalfBuffer = BasicBuffer<std::uint16_t>;

inline std::string out_of_memory(const char* what, std::size_t floats) {
  return std::string("out of memory: ") + what + " needs " +
         std::to_string((floats * sizeof(float) + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace attn
