// WASM memory bandwidth probe: how fast one thread moves bytes through buffers much larger than
// the caches (the bench uses 128 MiB; the L3 here is 32 MiB), the limit a one-token decode step
// meets when it reads every weight once.
//  - bw_copy: memcpy, which -mbulk-memory lowers to memory.copy (the engine's own copy loop);
//  - bw_read: a v128.load stream with four independent accumulators, the access pattern of a
//    one-row matrix product over its weights.
// Built with -O3 -msimd128 -mbulk-memory as a standalone module: no imports. Buffers come from
// memory.grow directly, so no allocator is linked in.
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#define EXPORT(name) extern "C" __attribute__((export_name(#name), noinline))

// Grows memory by `bytes` (rounded up to pages) and returns the new region's address, filled with
// a pattern (untouched pages would read as zero-page mappings, not DRAM). 0 when growth fails.
EXPORT(bw_alloc) uint32_t bw_alloc(uint32_t bytes) {
  const uint32_t pages = (bytes + 65535) / 65536;
  const int32_t old = __builtin_wasm_memory_grow(0, pages);
  if (old < 0) return 0;
  uint8_t* p = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(old) * 65536u);
  for (uint32_t i = 0; i < bytes; i++) p[i] = static_cast<uint8_t>(i * 131u + 7u);
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
}

EXPORT(bw_copy) void bw_copy(uint32_t dst, uint32_t src, uint32_t bytes, int reps) {
  for (int r = 0; r < reps; r++) {
    memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    // Keeps the copies from being merged: each one depends on the last.
    reinterpret_cast<volatile uint8_t*>(src)[r & 63] ^= 1;
  }
}

// Sums the buffer as i32x4 lanes (integer adds: one cycle, never the bottleneck) in four chains,
// 64 bytes a step; bytes must be a multiple of 64. The sum is returned so nothing is dead code.
EXPORT(bw_read) int32_t bw_read(uint32_t src, uint32_t bytes, int reps) {
  v128_t a0 = wasm_i32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (int r = 0; r < reps; r++) {
    const v128_t* p = reinterpret_cast<const v128_t*>(src);
    const v128_t* end = p + bytes / 16;
    for (; p < end; p += 4) {
      a0 = wasm_i32x4_add(a0, wasm_v128_load(p));
      a1 = wasm_i32x4_add(a1, wasm_v128_load(p + 1));
      a2 = wasm_i32x4_add(a2, wasm_v128_load(p + 2));
      a3 = wasm_i32x4_add(a3, wasm_v128_load(p + 3));
    }
  }
  const v128_t s = wasm_i32x4_add(wasm_i32x4_add(a0, a1), wasm_i32x4_add(a2, a3));
  return wasm_i32x4_extract_lane(s, 0) + wasm_i32x4_extract_lane(s, 1) + wasm_i32x4_extract_lane(s, 2) + wasm_i32x4_extract_lane(s, 3);
}
