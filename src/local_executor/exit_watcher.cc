#include "local_executor/exit_watcher.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace trainyard::executor {

ExitWatcher::ExitWatcher(std::function<void()> on_exit) : on_exit_(std::move(on_exit)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = stop_fd_;
  if (epoll_fd_ < 0 || stop_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev) != 0) {
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    epoll_fd_ = stop_fd_ = -1;
    return;
  }
  thread_ = std::thread([this] { Loop(); });
}

ExitWatcher::~ExitWatcher() {
  if (epoll_fd_ < 0) return;
  uint64_t one = 1;
  ssize_t ignored = ::write(stop_fd_, &one, sizeof(one));
  (void)ignored;
  if (thread_.joinable()) thread_.join();
  for (int fd : fds_) ::close(fd);  // processes still running: they are not ours to wait for
  ::close(epoll_fd_);
  ::close(stop_fd_);
}

bool ExitWatcher::Add(int fd) {
  if (fd < 0) return false;
  epoll_event ev{};
  // One-shot: a pidfd stays readable after the exit; the loop closes it after the first event.
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.fd = fd;
  std::lock_guard<std::mutex> lock(mu_);
  if (epoll_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    return false;
  }
  fds_.insert(fd);
  return true;
}

void ExitWatcher::Loop() {
  epoll_event events[64];
  while (true) {
    int n = ::epoll_wait(epoll_fd_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bool fired = false;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == stop_fd_) return;
      std::lock_guard<std::mutex> lock(mu_);
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      ::close(fd);
      fds_.erase(fd);
      fired = true;
    }
    if (fired && on_exit_) on_exit_();
  }
}

}  // namespace trainyard::executor
