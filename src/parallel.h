// A small persistent thread pool for the threaded builds (native, and WASM with pthreads).
// Single-threaded builds compile the same calls down to a plain loop.
#pragma once

#include <functional>

namespace attn {

// Threads the library may use (the calling thread counts as one). Returns the number in effect:
// 1 where threads are unavailable (builds without ATTN_THREADS).
int set_num_threads(int n);
int num_threads();

// Calls fn(begin, end, worker) on disjoint chunks covering [0, n), in parallel when more than
// one thread is enabled; worker in [0, num_threads()) is unique per concurrent call, so callers
// can index per-thread scratch with it. Chunks are `grain`-aligned (except the last) so callers
// keep SIMD panels whole. Returns after every chunk is done. Not reentrant.
// Below this many multiply-adds, work is not worth waking other threads for.
constexpr double kParallelMinWork = 1 << 20;

using ChunkFn = std::function<void(int begin, int end, int worker)>;
void parallel_for(int n, int grain, const ChunkFn& fn);

}  // namespace attn
