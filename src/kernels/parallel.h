// A small persistent thread pool for the threaded builds (native, and WASM with pthreads).
// Single-threaded builds compile the same calls down to a plain loop.
#pragma once

#include <functional>

namespace attn {

// Threads the library may use (the calling thread counts as one). Returns the number in effect:
// 1 where threads are unavailable (builds without ATTN_THREADS).
int set_num_threads(int n);
int num_threads();

// Calls fn(begin, end, worker) on the chunks [0, grain), [grain, 2 grain), ... covering [0, n).
// The chunks are handed out one at a time from an atomic counter, so a thread that starts late
// or is descheduled simply takes fewer of them and nobody waits for a fixed share: callers make
// `grain` small enough for several chunks per thread (a tile of a GEMM, a block of queries).
// worker in [0, num_threads()) is unique per concurrent call, so callers can index per-thread
// scratch with it. Returns after every chunk is done. Not reentrant.
// Below this many multiply-adds, work is not worth waking other threads for.
constexpr double kParallelMinWork = 1 << 20;

using ChunkFn = std::function<void(int begin, int end, int worker)>;
void parallel_for(int n, int grain, const ChunkFn& fn);

// A grain giving each of the num_threads() threads about `per_thread` chunks of [0, n), rounded
// up to a multiple of `align` (e.g. 8 columns: whole SIMD panels).
int balanced_grain(int n, int per_thread, int align = 1);

// What the pool has done since the last reset_pool_stats(): the parallel dispatches that reached
// the workers (each one a barrier: the caller returns only when every chunk is done), and, when
// timing was asked for, the microseconds the caller spent in them in all and waiting for other
// threads after its own last chunk; their chunks, and how many of them the caller ran itself. For
// the decode benchmarks (barriers per token, wait per barrier, how the work was shared). Sleeps:
// how often a worker stopped polling and slept (a dispatch that finds it asleep has to wake it), and
// how often the caller slept waiting for the last chunk.
struct PoolStats {
  long dispatches = 0, chunks = 0, caller_chunks = 0, worker_sleeps = 0, caller_sleeps = 0;
  double dispatch_us = 0, wait_us = 0;
};
PoolStats pool_stats();
// Zeroes the counts; timing (two clock reads per dispatch) only when `timed`.
void reset_pool_stats(bool timed = false);

}  // namespace attn
