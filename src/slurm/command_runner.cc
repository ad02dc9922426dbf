#include "slurm/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace trainyard::slurm {
namespace {

class RealCommandRunner : public CommandRunner {
 public:
  StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout) override {
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
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
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
    std::string* sinks[2] = {&result.out, &result.err};
    int fds[2] = {out_pipe[0], err_pipe[0]};
    bool open[2] = {true, true};
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    char buf[16384];
    while (open[0] || open[1]) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
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
    }
    ::close(fds[0]);
    ::close(fds[1]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return UnavailableError(argv[0] + " did not finish within " +
                              std::to_string(timeout.count()) + " ms (is slurmctld reachable?)");
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
  }

 private:
  static std::string Errno() { return std::strerror(errno); }
};

}  // namespace

CommandRunner& CommandRunner::Real() {
  static RealCommandRunner runner;
  return runner;
}

}  // namespace trainyard::slurm
