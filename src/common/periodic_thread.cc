#include "common/periodic_thread.h"

namespace trainyard {

void PeriodicThread::Start(std::chrono::milliseconds interval, std::function<void()> fn) {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this, interval, fn = std::move(fn)] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      fn();
      lock.lock();
      wake_.wait_for(lock, interval, [this] { return stopping_; });
    }
  });
}

void PeriodicThread::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainyard
