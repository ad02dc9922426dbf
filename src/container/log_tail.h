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

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

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

}  // namespace trainyard::container
