#include "executor/process_ops.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainyard::executor {
namespace {

class RealClock : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
};

// Field 3 (state) and field 22 (starttime) of /proc/<pid>/stat. The command name (field 2) may
// contain spaces and parentheses, so parsing starts after the last ')'.
bool ReadStat(int64_t pid, char* state, uint64_t* start_ticks) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string stat = ss.str();
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  // After ')' come fields 3, 4, ...; starttime is field 22, the 20th of these.
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return false;
    if (i == 3) *state = field.empty() ? '?' : field[0];
  }
  *start_ticks = std::strtoull(field.c_str(), nullptr, 10);
  return true;
}

std::string FindInPath(const std::string& name, const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  auto it = env.find("PATH");
  std::string path = it != env.end() ? it->second : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

class RealProcessOps : public ProcessOps {
 public:
  StatusOr<ProcessId> Launch(const LaunchRequest& request) override {
    if (request.argv.empty()) return InvalidArgumentError("cannot launch an empty command line");
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : request.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> argv;
    for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string program = FindInPath(request.argv[0], request.env);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!request.output_file.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, request.output_file.c_str(),
                                       O_WRONLY | O_CREAT | O_APPEND, 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    // Nothing of the server (listening sockets, databases) leaks into the child.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (!request.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, request.cwd.c_str());
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (request.new_session) flags |= POSIX_SPAWN_SETSID;
    posix_spawnattr_setflags(&attr, flags);
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &all);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      return UnavailableError("cannot start '" + program + "': " + std::strerror(rc));
    }
    ProcessId id = Identify(pid);
    id.pid = pid;  // even if it already exited, the pid is ours to reap
    return id;
  }

  bool IsAlive(const ProcessId& id) const override {
    if (!id.valid()) return false;
    char state = '?';
    uint64_t ticks = 0;
    if (!ReadStat(id.pid, &state, &ticks)) return false;
    if (state == 'Z' || state == 'X') return false;
    return id.start_ticks == 0 || ticks == id.start_ticks;
  }

  ProcessId Identify(int64_t pid) const override {
    char state = '?';
    uint64_t ticks = 0;
    if (pid <= 0 || !ReadStat(pid, &state, &ticks)) return {};
    return {pid, ticks};
  }

  bool Signal(const ProcessId& id, int signal, bool group) override {
    if (!IsAlive(id)) return false;
    return ::kill(group ? -static_cast<pid_t>(id.pid) : static_cast<pid_t>(id.pid), signal) == 0;
  }

  bool Reap(const ProcessId& id) override {
    if (!id.valid()) return true;
    return ::waitpid(static_cast<pid_t>(id.pid), nullptr, WNOHANG) != 0;  // pid, or -1 ECHILD
  }

  StatusOr<int> OpenExitFd(const ProcessId& id) override {
    if (!id.valid()) return NotFoundError("no process");
#ifdef SYS_pidfd_open
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(id.pid), 0));
    if (fd < 0) {
      if (errno == ESRCH) return NotFoundError("process " + std::to_string(id.pid) + " is gone");
      return UnimplementedError(std::string("pidfd_open: ") + std::strerror(errno));
    }
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    // Checked after opening: the pidfd now pins this pid, so if the start time still matches it
    // refers to our process and not to a later one that reused the pid.
    if (!IsAlive(id)) {
      ::close(fd);
      return NotFoundError("process " + std::to_string(id.pid) + " is gone");
    }
    return fd;
#else
    return UnimplementedError("pidfd_open is not available on this system");
#endif
  }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* clock = new RealClock();
  return *clock;
}

StatusOr<int> ProcessOps::OpenExitFd(const ProcessId&) {
  return UnimplementedError("exit notification is not supported by this ProcessOps");
}

ProcessOps& ProcessOps::Real() {
  static RealProcessOps* ops = new RealProcessOps();
  return *ops;
}

}  // namespace trainyard::executor
