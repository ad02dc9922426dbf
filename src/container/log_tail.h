// Follows a container's k8s-file log as conmon writes it (podman run --log-driver k8s-file
// --log-opt path=FILE), so trainyard-container-run relays output without a `podman logs --follow`
// process: that follower takes ~30 ms to start and notices the container's exit only at its next
// poll, ~250 ms later (measured on podman 4.3), and both sit on every container job's path.
//
// The format (CRI's): one record per line, "<RFC 3339 time> <stdout|stderr> <F|P> <content>\n";
// F ends a line of the container's output, P is a part of a longer line (the next record goes on
// with it, no newline between). Relayed as `podman logs` prints the log: content, plus "\n" after
// an F record, to stdout or stderr; so its byte counts are the ones a `podman logs` fallback
// skips (container_run.cc Relayed).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace trainyard::container {

class LogTail {
 public:
  // stream: 1 = stdout, 2 = stderr; data: the bytes to relay.
  using Sink = std::function<void(int stream, std::string_view data)>;

  explicit LogTail(std::filesystem::path path) : path_(std::move(path)) {}
  ~LogTail();
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;

  // Reads what was appended since the last call and passes every complete record to `sink`.
  // False while the file cannot be opened (not created yet); a partly written last record
  // waits for its newline.
  bool Poll(const Sink& sink);
  // The fd to wait on for appends (an inotify watch), -1 when none could be made (poll on a
  // timer instead).
  int wait_fd();

  // One record's relay (exposed for tests): false for a malformed record, which is relayed as
  // it is, to stdout.
  static bool Relay(std::string_view record, const Sink& sink);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  int inotify_ = -2;  // -2: not tried yet
  std::string pending_;
};

// Polls `tail` into `sink` on a thread of its own, waking on the tail's watch, from construction
// until Stop() (or destruction): output a container writes while `podman run --detach` has not
// yet returned is relayed as it comes instead of after podman's own exit. `tail` and whatever
// `sink` touches belong to that thread until Stop() returns; both must outlive it.
class BackgroundTail {
 public:
  BackgroundTail(LogTail& tail, LogTail::Sink sink);
  ~BackgroundTail() { Stop(); }
  BackgroundTail(const BackgroundTail&) = delete;
  BackgroundTail& operator=(const BackgroundTail&) = delete;

  // Ends the thread after a last Poll and waits for it. Idempotent.
  void Stop();

 private:
  std::atomic<bool> stop_{false};
  int stop_fd_ = -1;  // an eventfd that wakes the thread; without one it polls every 10 ms
  std::thread thread_;
};

}  // namespace trainyard::container
