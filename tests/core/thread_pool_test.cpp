// ThreadPool::run hands every thread the job and returns when all are done; what a share throws (a kernel's scratch
// that could not grow) comes back to the caller after that, not as a std::terminate on a worker.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace kairo {
namespace {

TEST(ThreadPool, EveryThreadRunsItsShare) {
  ThreadPool pool(4);
  std::atomic<int> mask{0};
  pool.run([&](int t, int n) {
    EXPECT_EQ(n, 4);
    mask |= 1 << t;
  });
  EXPECT_EQ(mask.load(), 0xF);
}

TEST(ThreadPool, AShareThatThrowsIsRethrownOnceEveryShareHasFinished) {
  ThreadPool pool(4);
  for (int thrower : {0, 3}) {  // the caller's own share, and a worker's
    std::atomic<int> finished{0};
    try {
      pool.run([&](int t, int) {
        if (t == thrower) throw std::runtime_error("share " + std::to_string(t));
        ++finished;
      });
      ADD_FAILURE() << "run() returned normally";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "share " + std::to_string(thrower));
    }
    EXPECT_EQ(finished.load(), 3);  // the others ran to the end before run() threw
  }
  // And the pool works on.
  std::atomic<int> count{0};
  pool.run([&](int, int) { ++count; });
  EXPECT_EQ(count.load(), 4);
}

TEST(ThreadPool, WhenSeveralSharesThrowOneExceptionComesBack) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.run([](int, int) { throw std::bad_alloc(); }), std::bad_alloc);
  std::atomic<int> count{0};
  pool.run([&](int, int) { ++count; });
  EXPECT_EQ(count.load(), 3);
}

}  // namespace
}  // namespace kairo
