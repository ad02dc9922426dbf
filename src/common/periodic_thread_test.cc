#include "common/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

TEST(PeriodicThreadTest, RunsAtOnceThenStopsWithoutWaitingTheInterval) {
  PeriodicThread thread;
  std::atomic<int> runs{0};
  std::mutex mu;
  std::condition_variable ran;
  thread.Start(1h, [&] {
    {
      std::lock_guard lock(mu);  // so the waiter cannot miss the notification
      runs++;
    }
    ran.notify_all();
  });
  {
    std::unique_lock lock(mu);
    ran.wait(lock, [&] { return runs.load() > 0; });
  }
  thread.Stop();  // would hang for an hour if the wait were not woken
  EXPECT_EQ(std::to_string(runs.load()) + " " + std::to_string(thread.running()), "1 0");
}

TEST(PeriodicThreadTest, RepeatsEveryIntervalAndCanBeRestarted) {
  PeriodicThread thread;
  std::atomic<int> runs{0};
  std::mutex mu;
  std::condition_variable ran;
  auto fn = [&] {
    {
      std::lock_guard lock(mu);  // so the waiter cannot miss the notification
      runs++;
    }
    ran.notify_all();
  };
  for (int round = 1; round <= 2; ++round) {
    thread.Start(1ms, fn);
    std::unique_lock lock(mu);
    ran.wait(lock, [&] { return runs.load() >= 3 * round; });
    lock.unlock();
    thread.Stop();
  }
  EXPECT_GE(runs.load(), 6);
}

}  // namespace
}  // namespace trainyard
