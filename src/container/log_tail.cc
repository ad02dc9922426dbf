#include "container/log_tail.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>

namespace trainyard::container {

LogTail::~LogTail() {
  if (fd_ >= 0) ::close(fd_);
  if (inotify_ >= 0) ::close(inotify_);
}

int LogTail::wait_fd() {
  if (inotify_ == -2) {
    inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_ >= 0 &&
        ::inotify_add_watch(inotify_, path_.parent_path().c_str(), IN_MODIFY | IN_CREATE) < 0) {
      ::close(inotify_);
      inotify_ = -1;
    }
  }
  if (inotify_ >= 0) {  // drain the events: Poll reads what they announce
    char buf[4096];
    while (::read(inotify_, buf, sizeof buf) > 0) {
    }
  }
  return inotify_;
}

bool LogTail::Relay(std::string_view record, const Sink& sink) {
  // <time> <stream> <F|P> <content>
  const size_t a = record.find(' ');
  const size_t b = a == std::string_view::npos ? a : record.find(' ', a + 1);
  const size_t c = b == std::string_view::npos ? b : record.find(' ', b + 1);
  const std::string_view stream =
      b == std::string_view::npos ? "" : record.substr(a + 1, b - a - 1);
  const std::string_view tag = c == std::string_view::npos ? "" : record.substr(b + 1, c - b - 1);
  if ((stream != "stdout" && stream != "stderr") || (tag != "F" && tag != "P")) {
    sink(1, std::string(record) + "\n");
    return false;
  }
  std::string data(record.substr(c + 1));
  if (tag == "F") data += '\n';
  sink(stream == "stdout" ? 1 : 2, data);
  return true;
}

bool LogTail::Poll(const Sink& sink) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) return false;
  }
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending_.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      Relay(std::string_view(pending_).substr(start, nl - start), sink);
    }
    pending_.erase(0, start);
  }
  return true;
}

BackgroundTail::BackgroundTail(LogTail& tail, LogTail::Sink sink)
    : stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this, &tail, sink = std::move(sink)] {
    while (!stop_.load()) {
      (void)tail.Poll(sink);
      pollfd p[2] = {{stop_fd_, POLLIN, 0}, {tail.wait_fd(), POLLIN, 0}};
      (void)::poll(p, 2, stop_fd_ >= 0 && p[1].fd >= 0 ? -1 : 10);
    }
    (void)tail.Poll(sink);
  });
}

void BackgroundTail::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
  }
  thread_.join();
  if (stop_fd_ >= 0) ::close(stop_fd_);
  stop_fd_ = -1;
}

}  // namespace trainyard::container
