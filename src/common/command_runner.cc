#include "common/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>

extern char** environ;

namespace trainyard {
namespace {

std::string Errno() { return std::strerror(errno); }

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// Reaps `pid` if it exited; stores the wait status. True once reaped.
bool TryReap(pid_t pid, int* status) {
  pid_t r = ::waitpid(pid, status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

class RealBackgroundCommand : public BackgroundCommand {
 public:
  explicit RealBackgroundCommand(pid_t pid) : pid_(pid) {}
  ~RealBackgroundCommand() override { Terminate(); }

  bool Done() override {
    if (!reaped_) reaped_ = TryReap(pid_, &status_);
    return reaped_;
  }
  bool Wait(std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  void Terminate() override {
    if (Done()) return;
    ::kill(pid_, SIGTERM);
    if (Wait(std::chrono::seconds(1))) return;
    ::kill(pid_, SIGKILL);
    while (!Done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
  int status_ = 0;
};

class RealCommandRunner : public CommandRunner {
 public:
  StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout,
                              const std::function<void(std::string_view)>& stderr_line) override {
    if (argv.empty()) return InvalidArgumentError("empty command");
    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) return UnavailableError("pipe: " + Errno());
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
      ::close(out_pipe[0]);
      ::close(out_pipe[1]);
      return UnavailableError("pipe: " + Errno());
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    auto cargv = CArgv(argv);
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (rc != 0) {
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      return UnavailableError("cannot run " + argv[0] + ": " + std::strerror(rc));
    }
    CommandResult result;
    bool timed_out = !Collect(pid, out_pipe[0], err_pipe[0], timeout, stderr_line, &result);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return DeadlineExceededError(argv[0] + " " + (argv.size() > 1 ? argv[1] + " " : "") +
                                   "did not finish within " + std::to_string(timeout.count()) +
                                   " ms and was killed");
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
  }

  StatusOr<std::unique_ptr<BackgroundCommand>> Start(
      const std::vector<std::string>& argv, const std::filesystem::path& output_file) override {
    if (argv.empty()) return InvalidArgumentError("empty command");
    int fd = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return UnavailableError("cannot open " + output_file.string() + ": " + Errno());
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fd, 1);
    posix_spawn_file_actions_adddup2(&actions, fd, 2);
    auto cargv = CArgv(argv);
    pid_t pid = 0;
    int rc = ::posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fd);
    if (rc != 0) return UnavailableError("cannot run " + argv[0] + ": " + std::strerror(rc));
    return std::unique_ptr<BackgroundCommand>(new RealBackgroundCommand(pid));
  }

 private:
  // Reads both pipes until EOF; false when `timeout` passed first (the child is then killed).
  static bool Collect(pid_t pid, int out_fd, int err_fd, std::chrono::milliseconds timeout,
                      const std::function<void(std::string_view)>& stderr_line,
                      CommandResult* result) {
    std::string* sinks[2] = {&result->out, &result->err};
    int fds[2] = {out_fd, err_fd};
    bool open[2] = {true, true};
    size_t err_line_start = 0;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool in_time = true;
    char buf[16384];
    while (open[0] || open[1]) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        in_time = false;
        ::kill(pid, SIGKILL);
        break;
      }
      pollfd pfds[2];
      int which[2];
      nfds_t n = 0;
      for (int s = 0; s < 2; ++s) {
        if (open[s]) {
          pfds[n] = {fds[s], POLLIN, 0};
          which[n++] = s;
        }
      }
      int ready = ::poll(pfds, n, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) break;
      for (nfds_t k = 0; ready > 0 && k < n; ++k) {
        if (pfds[k].revents == 0) continue;
        ssize_t got = ::read(fds[which[k]], buf, sizeof(buf));
        if (got > 0) {
          sinks[which[k]]->append(buf, static_cast<size_t>(got));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          open[which[k]] = false;
        }
      }
      // Hand over complete stderr lines as they arrive (pull progress).
      for (size_t nl;
           stderr_line && (nl = result->err.find('\n', err_line_start)) != std::string::npos;
           err_line_start = nl + 1) {
        stderr_line(std::string_view(result->err).substr(err_line_start, nl - err_line_start));
      }
    }
    if (stderr_line && in_time && err_line_start < result->err.size()) {
      stderr_line(std::string_view(result->err).substr(err_line_start));
    }
    ::close(out_fd);
    ::close(err_fd);
    return in_time;
  }
};

}  // namespace

CommandRunner& CommandRunner::Real() {
  static RealCommandRunner runner;
  return runner;
}

std::string LastNonEmptyLine(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace trainyard
