#include "kernels/parallel.h"

#include <atomic>

#if defined(ATTN_THREADS)
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attn {

int balanced_grain(int n, int per_thread, int align) {
  if (align < 1) align = 1;
  const long parts = static_cast<long>(num_threads()) * (per_thread < 1 ? 1 : per_thread);
  long g = (n + parts - 1) / parts;
  g = (g + align - 1) / align * align;
  return g < align ? align : static_cast<int>(g);
}

namespace {
PoolStats stats;  // (written by the calling thread only: dispatches are not reentrant)
bool stats_timed = false;
}  // namespace

std::atomic<long> worker_sleeps{0};  // (workers count their own sleeps)

PoolStats pool_stats() {
  PoolStats s = stats;
  s.worker_sleeps = worker_sleeps.load();
  return s;
}
void reset_pool_stats(bool timed) {
  stats = PoolStats();
  worker_sleeps.store(0);
  stats_timed = timed;
}

#if defined(ATTN_THREADS)
namespace {

using Clock = std::chrono::steady_clock;
inline double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// How long a worker (or the caller, waiting for the last chunk) polls before it sleeps. A model's
// forward pass dispatches dozens of parallel loops with a few microseconds of serial work between
// them; catching the next one by polling saves a futex wake-up (tens of microseconds in a WASM
// worker). Bounded, so an idle pool sleeps and leaves the core to others.
// In WebAssembly a wake-up goes through memory.atomic.notify to a worker the browser schedules,
// and a decoding step's serial stretches (a layer's attention, norms) outlast 20000 polls: at
// SmolLM2's shape the worker slept ~35 times a token. 200000 polls (a fraction of a millisecond)
// carry it across them (native llama_decode at 2 threads: 35 -> 0.3 sleeps a token; Chromium,
// 2 threads, three alternated runs: q8 48 -> 51 tok/s, q4 64 -> 66, medians).
#ifndef ATTN_SPIN_ITERATIONS
#if defined(ATTN_MAX_THREADS)
#define ATTN_SPIN_ITERATIONS 200000
#else
#define ATTN_SPIN_ITERATIONS 20000
#endif
#endif
constexpr int kSpinIterations = ATTN_SPIN_ITERATIONS;

constexpr std::uint32_t kClosed = 0xFFFFFFFFu;  // chunk index of a job that takes no more claims

inline std::uint32_t gen_of(std::uint64_t s) { return static_cast<std::uint32_t>(s >> 32); }
inline std::uint32_t index_of(std::uint64_t s) { return static_cast<std::uint32_t>(s); }
inline std::uint64_t make_state(std::uint32_t gen, std::uint32_t index) { return (std::uint64_t{gen} << 32) | index; }

// Workers sleep on a condition variable between jobs (a futex: memory.atomic.wait32 in WASM).
// A job is published as a new generation in state_; its chunks are claimed one by one with a
// compare-and-swap on (generation, next chunk), so a worker that read the job's description just
// as the job ended can never claim a chunk of the next one with the old description.
class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int n) {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mu_);
      wake_.notify_all();
    }
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_.store(false);
    // A new worker starts from the current generation: only jobs published later are its own.
    const std::uint32_t start = gen_;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, start] { loop(i, start); });
  }

  void run(int n, int grain, const ChunkFn& fn) {
    const Clock::time_point t0 = stats_timed ? Clock::now() : Clock::time_point();
    const int chunks = (n + grain - 1) / grain;
    fn_.store(&fn);
    n_.store(n);
    grain_.store(grain);
    chunks_.store(chunks);
    done_.store(0);
    ++gen_;
    state_.store(make_state(gen_, 0));  // publishes the fields above
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      wake_.notify_all();
    }
    const int mine = work(gen_, 0);
    const Clock::time_point t1 = stats_timed ? Clock::now() : Clock::time_point();
    if (done_.fetch_add(mine) + mine != chunks) wait_done(chunks);
    state_.store(make_state(gen_, kClosed));  // a late worker finds nothing to claim
    ++stats.dispatches, stats.chunks += chunks, stats.caller_chunks += mine;
    if (stats_timed) {
      const Clock::time_point t2 = Clock::now();
      stats.dispatch_us += us_between(t0, t2), stats.wait_us += us_between(t1, t2);
    }
  }

 private:
  // Claims and runs chunks of generation `gen` until none is left; returns how many it ran.
  int work(std::uint32_t gen, int worker) {
    const ChunkFn* fn = fn_.load();
    const int n = n_.load(), grain = grain_.load(), chunks = chunks_.load();
    int ran = 0;
    std::uint64_t s = state_.load();
    for (;;) {
      if (gen_of(s) != gen || index_of(s) >= static_cast<std::uint32_t>(chunks)) return ran;
      if (!state_.compare_exchange_weak(s, s + 1)) continue;  // s now holds the current state
      const int begin = static_cast<int>(index_of(s)) * grain;
      const int end = n - begin > grain ? begin + grain : n;
      (*fn)(begin, end, worker);
      ++ran;
      s = state_.load();
    }
  }

  // The caller waits for chunks still running on other threads: poll briefly, then sleep.
  void wait_done(int chunks) {
    for (int i = 0; i < kSpinIterations; ++i)
      if (done_.load() == chunks) return;
    std::unique_lock<std::mutex> lock(mu_);
    ++stats.caller_sleeps;
    caller_sleeping_.store(true);
    finished_.wait(lock, [&] { return done_.load() == chunks; });
    caller_sleeping_.store(false);
  }

  void loop(int index, std::uint32_t seen) {
    for (;;) {
      std::uint64_t s = state_.load();
      for (int i = 0; gen_of(s) == seen && !stop_.load(); ++i) {
        if (i < kSpinIterations) {
          s = state_.load();
          continue;
        }
        // Sleep. sleepers_ and state_ are sequentially consistent: either the publisher sees this
        // sleeper and notifies under the lock, or this check sees the new generation.
        std::unique_lock<std::mutex> lock(mu_);
        worker_sleeps.fetch_add(1, std::memory_order_relaxed);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return gen_of(state_.load()) != seen || stop_.load(); });
        sleepers_.fetch_sub(1);
        s = state_.load();
      }
      if (stop_.load()) return;
      seen = gen_of(s);
      const int ran = work(seen, index);
      if (ran == 0) continue;
      const int chunks = chunks_.load();
      // Our chunks were of generation `seen`, which cannot end before they are counted.
      if (done_.fetch_add(ran) + ran == chunks && caller_sleeping_.load()) {
        std::lock_guard<std::mutex> lock(mu_);
        finished_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::uint32_t gen_ = 0;  // the caller's count of published jobs
  std::atomic<std::uint64_t> state_{make_state(0, kClosed)};
  std::atomic<const ChunkFn*> fn_{nullptr};
  std::atomic<int> n_{0}, grain_{1}, chunks_{0}, done_{0}, sleepers_{0};
  std::atomic<bool> caller_sleeping_{false}, stop_{false};
  std::mutex mu_;
  std::condition_variable wake_, finished_;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int set_num_threads(int n) {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
#if defined(ATTN_MAX_THREADS)
  // WASM: workers are pre-spawned (a browser main thread cannot wait for a new one to start).
  const int limit = ATTN_MAX_THREADS;
  (void)hw;
#else
  const int limit = hw > 0 ? hw : 1;
#endif
  n = n < 1 ? 1 : (n > limit ? limit : n);
  if (n != pool().size()) pool().resize(n);
  return pool().size();
}

int num_threads() { return pool().size(); }

void parallel_for(int n, int grain, const ChunkFn& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (pool().size() == 1 || n <= grain) {
    fn(0, n, 0);
    return;
  }
  pool().run(n, grain, fn);
}

#else  // single-threaded build

int set_num_threads(int) { return 1; }
int num_threads() { return 1; }
void parallel_for(int n, int, const ChunkFn& fn) {
  if (n > 0) fn(0, n, 0);
}

#endif

}  // namespace attn
