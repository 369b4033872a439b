#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "error.h"

namespace grpo {

namespace {

// How long a worker waiting for the next job, and a caller waiting for its workers, spin before they
// sleep: the fork-joins of one kernel call (a GEMM's pack and compute steps, a model layer's products)
// follow each other within microseconds, and a futex wake-up costs tens of them on a VM.
constexpr auto kSpin = std::chrono::microseconds(100);

// Spins until ready() holds or kSpin has passed; returns whether it holds.
template <typename Ready> bool spin_until(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return false;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_ia32_pause();
#endif
  }
}

int default_threads() {
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// A job is a list of blocks claimed through an atomic counter by the workers and the caller.
struct Job {
  const RangeFn* fn = nullptr;
  int64_t n = 0, grain = 1, blocks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::exception_ptr error;
  std::mutex error_mutex;
};

thread_local bool inside_block = false;

class Pool {
 public:
  ~Pool() { resize(0); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int threads) {
    stop_workers();
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    work_on(job);
    const auto finished = [&] { return job.done.load() == job.blocks && active_.load() == 0; };
    spin_until(finished);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, finished);
    job_ = nullptr;
  }

 private:
  static void work_on(Job& job) {
    inside_block = true;
    for (int64_t block; (block = job.next.fetch_add(1)) < job.blocks;) {
      int64_t begin = block * job.grain, end = std::min(job.n, begin + job.grain);
      try {
        (*job.fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(job.error_mutex);
        if (!job.error) job.error = std::current_exception();
      }
      job.done.fetch_add(1);
    }
    inside_block = false;
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      Job* job;
      spin_until([&] { return generation_.load() != seen || stopping_.load(); });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || (job_ != nullptr && generation_ != seen); });
        if (stopping_) return;
        seen = generation_;
        job = job_;
        ++active_;
      }
      work_on(*job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --active_;
      }
      finished_.notify_all();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
    workers_.clear();
    stopping_ = false;
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  // Written under mutex_; atomic so that spinning threads may read them without it.
  Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> stopping_{false};
};

// Serialises callers: two async kernel calls share the pool one after the other.
std::mutex pool_owner;
int requested_threads = default_threads();

Pool& pool() {
  static Pool instance;
  return instance;
}

// Blocks in order on the calling thread; nested parallel_for calls inside them stay serial too.
void run_serially(int64_t n, int64_t grain, const RangeFn& fn) {
  const bool was_inside = inside_block;
  inside_block = true;
  try {
    for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
  } catch (...) {
    inside_block = was_inside;
    throw;
  }
  inside_block = was_inside;
}

}  // namespace

int num_threads() { return requested_threads; }

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(pool_owner);
  requested_threads = n <= 0 ? default_threads() : n;
}

void parallel_for(int64_t n, int64_t grain, const RangeFn& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = 1;
  int64_t blocks = block_count(n, grain);
  if (inside_block || blocks == 1) return run_serially(n, grain, fn);
  std::lock_guard<std::mutex> lock(pool_owner);
  if (requested_threads == 1) return run_serially(n, grain, fn);
  if (pool().size() != requested_threads) pool().resize(requested_threads);
  Job job;
  job.fn = &fn;
  job.n = n;
  job.grain = grain;
  job.blocks = blocks;
  pool().run(job);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace grpo

extern "C" grpo_status grpo_set_num_threads(int n) {
  return grpo::guarded([&] {
    if (n > 1024) grpo::fail(GRPO_ERR_VALUE_RANGE, "threads must be at most 1024, got %d", n);
    grpo::set_num_threads(n);
  });
}

extern "C" int grpo_get_num_threads(void) { return grpo::num_threads(); }
