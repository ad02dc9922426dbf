// PeriodicThread: one background thread that runs a function, then waits `interval` (or until
// Stop), and again — the control loop of a controller whose steps are PollOnce() passes.
//
// Start() after Stop() starts a new thread. Stop() wakes the wait at once and joins; the running
// pass (if any) is finished first, so `fn` never runs after Stop() returns. The destructor stops.
// Thread-safety: Start/Stop from any thread, not concurrently with each other; `fn` runs on the
// background thread only, one pass at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace trainyard {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Runs `fn` now and then every `interval` until Stop(). A no-op while running.
  void Start(std::chrono::milliseconds interval, std::function<void()> fn);
  void Stop();
  bool running() const { return thread_.joinable(); }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard
