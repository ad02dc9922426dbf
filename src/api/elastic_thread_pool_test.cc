#include "api/elastic_thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

namespace trainyard::api {
namespace {

// Tasks that block until released, so the test sees the pool with all of them running.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

std::string Describe(const ElasticThreadPoolStats& s) {
  return "threads=" + std::to_string(s.threads) + " busy=" + std::to_string(s.busy) +
         " queued=" + std::to_string(s.queued);
}

// Until `busy` tasks run; bounded by ctest's timeout.
void AwaitBusy(const ElasticThreadPool& pool, int busy) {
  while (pool.stats().busy < busy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(ElasticThreadPoolTest, EveryTaskGetsAThreadUpToTheMaxThenTheyQueue) {
  ElasticThreadPool pool({.max_threads = 5, .warm_threads = 1});
  Gate gate;
  std::atomic<int> ran{0};
  for (int i = 0; i < 7; ++i) {
    pool.Enqueue([&] {
      gate.Wait();
      ++ran;
    });
  }
  AwaitBusy(pool, 5);
  const std::string blocked = Describe(pool.stats());
  gate.Open();
  pool.Shutdown();
  EXPECT_EQ(blocked + "; ran " + std::to_string(ran) + "; after " + Describe(pool.stats()),
            "threads=5 busy=5 queued=2; ran 7; after threads=0 busy=0 queued=0");
}

TEST(ElasticThreadPoolTest, IdleThreadsAboveTheWarmOnesEnd) {
  ElasticThreadPool pool(
      {.max_threads = 4, .warm_threads = 1, .idle_exit = std::chrono::milliseconds(1)});
  Gate gate;
  for (int i = 0; i < 4; ++i) pool.Enqueue([&] { gate.Wait(); });
  AwaitBusy(pool, 4);
  gate.Open();
  while (pool.stats().threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(Describe(pool.stats()), "threads=1 busy=0 queued=0");
}

TEST(ElasticThreadPoolTest, TasksAfterShutdownAreDropped) {
  ElasticThreadPool pool({.max_threads = 2});
  pool.Shutdown();
  bool ran = false;
  pool.Enqueue([&] { ran = true; });
  pool.Shutdown();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace trainyard::api
