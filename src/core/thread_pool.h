#pragma once
// A persistent pool: n_threads - 1 workers plus the calling thread. run() hands every thread the same job and
// returns when all have finished it; the job splits its own work by thread index so no allocation happens per call.
// Workers spin briefly before sleeping, so back-to-back ops (one per layer) don't pay a futex wake each time.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kairo {

class ThreadPool {
 public:
  // job(thread_idx, n_threads)
  using Job = std::function<void(int, int)>;

  // Throws std::system_error when a worker cannot be started (the ones that did are stopped first).
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }
  // Once every thread has finished the job, rethrows the first exception a thread's share of it threw (a kernel's
  // scratch that could not grow): the job's state is on the caller's stack, so no thread may still be in it, and an
  // exception on a worker must not terminate the process.
  void run(const Job& job);

  // Splits [0, n) into contiguous chunks, one per thread: fn(begin, end).
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  // Number of hardware threads this process may use (respects the affinity mask).
  static int available_cores();

 private:
  void worker_loop(int thread_idx);
  void stop_workers();
  void run_share(const Job& job, int thread_idx) noexcept;  // job(thread_idx, n_threads_), keeping what it throws

  int n_threads_;
  std::vector<std::thread> workers_;
  const Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;  // written before pending_ drops, read after it reaches 0
};

}  // namespace kairo
