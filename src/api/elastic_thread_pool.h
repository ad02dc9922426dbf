// ElasticThreadPool: the threads that serve HTTP connections (api_server.cc hands it to
// cpp-httplib as its TaskQueue).
//
// Why not httplib's own ThreadPool: it starts a fixed number of threads, and cpp-httplib runs a
// whole connection as one task, so a connection holds its thread for its keep-alive life and a
// long-poll holds one for its wait. Once that many clients wait or sit idle, every new
// connection, /healthz included, queues behind them. This pool instead gives each task a thread
// of its own, starting one when no thread is idle, up to `max_threads`; only beyond that do tasks
// queue (first in, first out). What bounds the threads that clients can hold (long-poll slots,
// keep-alive timeout) is the ApiServer's business; this class only runs tasks.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace trainyard::api {

struct ElasticThreadPoolOptions {
  int max_threads = 512;  // >= 1 (a programmer error otherwise: ApiServer validates its flag)
  int warm_threads = 8;   // idle threads kept; threads above this exit after `idle_exit`
  std::chrono::milliseconds idle_exit{30000};
};

// A snapshot of the pool, for tests, benchmarks and /metrics.
struct ElasticThreadPoolStats {
  int threads = 0;  // alive
  int busy = 0;     // running a task
  int queued = 0;   // waiting for a thread (only when threads == max_threads)
};

class ElasticThreadPool {
 public:
  explicit ElasticThreadPool(ElasticThreadPoolOptions options);
  // Shutdown().
  ~ElasticThreadPool();
  ElasticThreadPool(const ElasticThreadPool&) = delete;
  ElasticThreadPool& operator=(const ElasticThreadPool&) = delete;

  // Runs `task` on an idle thread, on a new one if none is idle and fewer than max_threads run,
  // else once a thread is free. After Shutdown() the task is dropped (not run). If the system
  // refuses a new thread the task waits for a running one (and never runs if there is none).
  void Enqueue(std::function<void()> task);
  // Runs the tasks already queued, then waits until every thread has ended. Idempotent.
  void Shutdown();
  ElasticThreadPoolStats stats() const;

 private:
  void Work();

  const ElasticThreadPoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // a task was queued, or shutdown
  std::condition_variable ended_cv_;  // a thread ended
  std::deque<std::function<void()>> tasks_;
  int threads_ = 0;
  int idle_ = 0;  // threads waiting for a task
  int busy_ = 0;
  bool shutdown_ = false;
};

}  // namespace trainyard::api
