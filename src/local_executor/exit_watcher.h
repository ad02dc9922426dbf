// ExitWatcher: wakes the LocalExecutor the moment a watched process exits, so a replica's end
// is handled (and the next queued gang admitted) without waiting for the next poll tick.
//
// It watches "exit fds" (ProcessOps::OpenExitFd: a pidfd on Linux >= 5.3, which works for any
// pid, including wrappers re-adopted after a server restart that are not our children — unlike
// SIGCHLD) with epoll on one thread, and calls `on_exit` when one becomes readable. The fd is
// closed once it fired. It only wakes the executor: what happened is still read from the
// wrapper's status file, and the executor keeps polling as a fallback (kernels without pidfd,
// processes it could not open an fd for).
//
// Thread-safety: Add may be called from any thread, also while holding the caller's locks;
// `on_exit` runs on the watcher's thread with no watcher lock held.
#pragma once

#include <functional>
#include <mutex>
#include <set>
#include <thread>

namespace trainyard::executor {

class ExitWatcher {
 public:
  explicit ExitWatcher(std::function<void()> on_exit);
  ~ExitWatcher();  // stops the thread and closes every fd still watched

  // Takes ownership of `fd` and calls on_exit once it is readable. False (and fd closed) if it
  // cannot be watched (then only polling notices the exit).
  bool Add(int fd);

  // False when epoll or the thread could not be set up (every Add then fails).
  bool usable() const { return epoll_fd_ >= 0; }

 private:
  void Loop();

  std::function<void()> on_exit_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: wakes the loop for shutdown
  std::mutex mu_;
  std::set<int> fds_;  // watched, not yet fired; guarded by mu_
  std::thread thread_;
};

}  // namespace trainyard::executor
