#include "parallel.h"

#if defined(ATTN_THREADS)
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attn {

#if defined(ATTN_THREADS)
namespace {

// Workers sleep on a condition variable; each job is one chunk per thread, published under a
// generation number so a worker never runs the same job twice.
class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stop_ = false;
    // A new worker starts from the current generation: only jobs published later are its own.
    const long start = generation_;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, start] { loop(i, start); });
  }

  void run(int n, int grain, const ChunkFn& fn) {
    const int threads = size();
    const int chunks_of_grain = (n + grain - 1) / grain;
    const int per = (chunks_of_grain + threads - 1) / threads * grain;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      n_ = n;
      per_ = per;
      pending_ = threads - 1;
      ++generation_;
    }
    wake_.notify_all();
    chunk(0, fn);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void chunk(int index, const ChunkFn& fn) const {
    const int begin = index * per_;
    const int end = begin + per_ < n_ ? begin + per_ : n_;
    if (begin < end) fn(begin, end, index);
  }

  void loop(int index, long seen) {
    for (;;) {
      const ChunkFn* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        job = job_;
      }
      chunk(index, *job);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --pending_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const ChunkFn* job_ = nullptr;
  int n_ = 0, per_ = 0, pending_ = 0;
  long generation_ = 0;
  bool stop_ = false;
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
