#include "api/elastic_thread_pool.h"

#include <system_error>
#include <thread>

namespace trainyard::api {

ElasticThreadPool::ElasticThreadPool(ElasticThreadPoolOptions options) : options_(options) {}

ElasticThreadPool::~ElasticThreadPool() { Shutdown(); }

void ElasticThreadPool::Enqueue(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutdown_) return;
  tasks_.push_back(std::move(task));
  // idle_ counts threads that have not yet woken for earlier tasks too, so a burst of accepts
  // starts one thread per task instead of waking the same idle one for all of them.
  if (static_cast<int>(tasks_.size()) > idle_ && threads_ < options_.max_threads) {
    try {
      // Detached: a thread that ends after an idle spell has nobody to join it. Shutdown waits
      // for threads_ to reach 0 instead, and Work() touches nothing of the pool after that.
      std::thread([this] { Work(); }).detach();
      ++threads_;
    } catch (const std::system_error&) {
      // Out of threads (RLIMIT_NPROC, memory): the task waits for a running thread.
    }
  }
  work_cv_.notify_one();
}

void ElasticThreadPool::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (tasks_.empty()) {
      if (shutdown_) break;
      ++idle_;
      const bool woken = work_cv_.wait_for(lock, options_.idle_exit,
                                           [this] { return !tasks_.empty() || shutdown_; });
      --idle_;
      if (!woken && threads_ > options_.warm_threads) break;
      continue;
    }
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    ++busy_;
    lock.unlock();
    task();
    task = nullptr;  // what it captured goes now, outside the lock
    lock.lock();
    --busy_;
  }
  --threads_;
  ended_cv_.notify_all();  // under the lock: the pool may be destroyed right after it is released
}

void ElasticThreadPool::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  shutdown_ = true;
  work_cv_.notify_all();
  ended_cv_.wait(lock, [this] { return threads_ == 0; });
}

ElasticThreadPoolStats ElasticThreadPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {threads_, busy_, static_cast<int>(tasks_.size())};
}

}  // namespace trainyard::api
