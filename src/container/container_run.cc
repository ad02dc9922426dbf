#include "container/container_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/beneath.h"
#include "common/file_util.h"
#include "container/log_tail.h"
#include "container/orphan_guard.h"
#include "container/podman_engine.h"

extern char** environ;

namespace trainyard::container {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

volatile sig_atomic_t g_signals = 0;
volatile sig_atomic_t g_last_signal = SIGTERM;

void OnSignal(int sig) {
  g_last_signal = sig;
  g_signals = g_signals + 1;
}

std::vector<std::string> Paths(const std::vector<fs::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.string());
  return out;
}

Json OptionalList(const std::optional<std::vector<std::string>>& list) {
  return list ? Json(*list) : Json(nullptr);
}

std::optional<std::vector<std::string>> OptionalListFrom(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<std::vector<std::string>>();
}

void Say(const std::string& text) { std::cerr << "[trainyard] " << text << std::endl; }

// How many bytes of the container's stdout and stderr have reached our own stdout/stderr (the
// wrapper's pipes into the job log). `podman logs` prints a container's whole log the same way
// each time, so a later run skips exactly these bytes: nothing is repeated, nothing lost.
struct Relayed {
  uint64_t out = 0, err = 0;
};

// `podman logs [--follow] NAME` in a new process group (the wrapper forwards SIGTERM to our group,
// and the output of a container that is being stopped must still reach the log), its stdout and
// stderr into `out_fd`/`err_fd`. -1 if it cannot be started.
pid_t StartLogs(const ContainerRunSpec& spec, bool follow, int out_fd, int err_fd) {
  std::vector<std::string> args{spec.podman.podman};
  args.insert(args.end(), spec.podman.global_args.begin(), spec.podman.global_args.end());
  args.push_back("logs");
  if (follow) args.push_back("--follow");
  args.push_back(spec.container.name);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, cargs[0], &actions, &attr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

// Writes `data` to `fd` after skipping what `*done` says was written before; advances `*done`.
void RelayNew(int fd, std::string_view data, uint64_t seen_before, uint64_t* done) {
  const uint64_t end = seen_before + data.size();
  if (end <= *done) return;
  std::string_view fresh = data.substr(static_cast<size_t>(*done - seen_before));
  while (!fresh.empty()) {
    ssize_t n = ::write(fd, fresh.data(), fresh.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the job log's pipe is gone: nothing more can be kept
    fresh.remove_prefix(static_cast<size_t>(n));
  }
  *done = end;
}

// Relays a LogTail's records to our stdout/stderr, counting them in `relayed`.
LogTail::Sink RelaySink(Relayed* relayed) {
  return [relayed](int stream, std::string_view data) {
    uint64_t* done = stream == 1 ? &relayed->out : &relayed->err;
    RelayNew(stream, data, *done, done);
  };
}

// Runs `podman logs [--follow]` to its end, relaying only bytes not relayed before, and calling
// `tick` at least every 50 ms; when `tick` returns false the follower is stopped (SIGTERM to its
// group) and what it printed so far is still relayed. Its wait status, or -1 if it could not be
// started.
int RelayLogs(const ContainerRunSpec& spec, bool follow, Relayed* relayed,
              const std::function<bool()>& tick) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return -1;
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return -1;
  }
  pid_t pid = StartLogs(spec, follow, out_pipe[1], err_pipe[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  uint64_t seen[2] = {0, 0};
  bool stopped = false;
  int fds[2] = {out_pipe[0], err_pipe[0]};
  uint64_t* done[2] = {&relayed->out, &relayed->err};
  char buf[65536];
  while (pid > 0 && (fds[0] >= 0 || fds[1] >= 0)) {
    pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    int ready = ::poll(p, 2, 50);
    if (!tick() && !stopped) {
      ::kill(-pid, SIGTERM);
      stopped = true;
    }
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || p[i].revents == 0) continue;
      ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i]);
        fds[i] = -1;
        continue;
      }
      RelayNew(i == 0 ? 1 : 2, std::string_view(buf, static_cast<size_t>(n)), seen[i], done[i]);
      seen[i] += static_cast<uint64_t>(n);
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  if (pid <= 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) (void)tick();
  return status;
}

// Passes every signal we received since `*handled` on to the container's PID 1.
void ForwardSignals(ContainerEngine& engine, const std::string& name, int* handled) {
  if (g_signals <= *handled) return;
  *handled = g_signals;
  int sig = g_last_signal;
  if (Status s = engine.Signal(name, sig); !s.ok())
    Say("could not signal the container: " + s.message());
}

// True while the container's PID 1 (`pid`, from podman when it started; 0 = unknown) may still
// run. Once it has been gone for a few seconds, podman is trusted no longer: something outside
// (a `podman system reset`, a killed conmon) can lose a container's exit, after which podman
// reports it as "created" and `podman logs --follow` / `podman wait` never return.
// As the subreaper of what podman starts (ContainerRunMain), this process is conmon's parent, and
// PID 1's once conmon is gone: each look collects them when they have exited, and PID 1's own
// exit status is kept (ReapedExitCode), the one exit code left when conmon died before recording
// it.
class ExitWatch {
 public:
  ExitWatch(int64_t pid, int64_t conmon_pid) : pid_(pid), conmon_pid_(conmon_pid) {}
  // The pids once they are known (an inspect beside the follower: FollowAndRemove).
  void Adopt(int64_t pid, int64_t conmon_pid) {
    if (pid_ == 0) pid_ = pid;
    if (conmon_pid_ == 0) conmon_pid_ = conmon_pid;
  }
  bool MayRun() {
    ReapConmon();
    if (pid_ <= 0) return true;
    if (!reaped_exit_code_) {
      int status = 0;
      if (::waitpid(static_cast<pid_t>(pid_), &status, WNOHANG) == static_cast<pid_t>(pid_)) {
        reaped_exit_code_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      } else if (::kill(static_cast<pid_t>(pid_), 0) == 0 || errno != ESRCH) {
        return true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (!gone_since_) gone_since_ = now;
    return now - *gone_since_ < std::chrono::seconds(5);
  }
  // Collects conmon if it has exited; waits up to `patience` for that. A conmon that is not this
  // process's child (ECHILD) is init's to collect.
  void ReapConmon(std::chrono::milliseconds patience = std::chrono::milliseconds(0)) {
    const auto until = std::chrono::steady_clock::now() + patience;
    while (conmon_pid_ > 0) {
      pid_t r = ::waitpid(static_cast<pid_t>(conmon_pid_), nullptr, WNOHANG);
      if (r < 0 && errno == EINTR) continue;
      if (r != 0) {
        conmon_pid_ = 0;  // collected, or not ours
        return;
      }
      if (std::chrono::steady_clock::now() >= until) return;
      ::usleep(20000);
    }
  }
  // PID 1's exit code (128+N when killed by signal N) if this process collected it.
  std::optional<int> ReapedExitCode() const { return reaped_exit_code_; }

 private:
  int64_t pid_;
  int64_t conmon_pid_;
  std::optional<int> reaped_exit_code_;
  std::optional<std::chrono::steady_clock::time_point> gone_since_;
};

// Relays the container's output while it runs, forwarding signals meanwhile. Slurm signals every
// process of a step, not just our group, and podman logs may exit on SIGTERM without saying so;
// so when a signal arrived during a follower's life, or the container still runs, a new follower
// starts (from the log's beginning, skipping what was relayed). Returns the container's state
// when the look that ended the follow found it exited (its exit code then needs no `podman wait`
// and second inspect: each podman call costs ~50 ms of the job's end).
std::optional<ContainerState> FollowUntilExit(const ContainerRunSpec& spec, ContainerEngine& engine,
                                              int* handled, Relayed* relayed, ExitWatch* watch,
                                              const std::function<void()>& on_tick) {
  const std::string& name = spec.container.name;
  auto tick = [&] {
    on_tick();
    ForwardSignals(engine, name, handled);
    return watch->MayRun();
  };
  for (int start = 0; start < 20; ++start) {
    const int signals_before = g_signals;
    const int status = RelayLogs(spec, /*follow=*/true, relayed, tick);
    if (status < 0) {
      Say("cannot follow the container's output: podman logs did not start");
      return std::nullopt;
    }
    if (!tick()) return std::nullopt;  // ended without podman noticing (ExitCodeOf says so)
    auto state = engine.Inspect(name);
    bool running = state.ok() && state->status == ContainerStatus::kRunning;
    bool signalled = g_signals != signals_before || WIFSIGNALED(status);
    if (!running && !signalled) {
      if (state.ok() && state->status == ContainerStatus::kExited) return *state;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// conmon's pid from --conmon-pidfile (podman has written it when `run --detach` returns); 0 when
// there is none.
pid_t ConmonPidOf(const ContainerRunSpec& spec) {
  if (spec.container.conmon_pidfile.empty()) return 0;
  auto text = ReadFile(spec.container.conmon_pidfile);
  if (!text.ok()) return 0;
  const long pid = std::strtol(text->c_str(), nullptr, 10);
  return pid > 1 ? static_cast<pid_t>(pid) : 0;
}

// Where conmon records the container's exit: <--exit-dir>/<-c container id>, from its command
// line (podman's own source of the exit code; `podman container cleanup` consumes the file, so it
// may be gone already). {} when its command line has neither.
struct ExitFile {
  std::string path;
  std::string id;
};
ExitFile ConmonExitFile(pid_t conmon) {
  auto cmdline = ReadFile("/proc/" + std::to_string(conmon) + "/cmdline");
  if (!cmdline.ok()) return {};
  std::vector<std::string> args;
  for (size_t at = 0; at < cmdline->size();) {
    const size_t end = std::min(cmdline->find('\0', at), cmdline->size());
    args.push_back(cmdline->substr(at, end - at));
    at = end + 1;
  }
  std::string dir, id;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--exit-dir") dir = args[i + 1];
    if (args[i] == "-c" || args[i] == "--cid") id = args[i + 1];
  }
  if (dir.empty() || id.empty() || id.find('/') != std::string::npos) return {};
  return {dir + "/" + id, id};
}

// The exit code conmon recorded, when its file is still there; an OOM kill's 137 is confirmed by
// an inspect (which says whether the kernel's OOM killer did it).
std::optional<ContainerState> ExitRecordedByConmon(const ExitFile& file) {
  if (file.path.empty()) return std::nullopt;
  auto text = ReadFile(file.path);
  if (!text.ok() || text->empty()) return std::nullopt;
  char* end = nullptr;
  const long code = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || code < 0 || code > 255 || code == 137) return std::nullopt;
  ContainerState state;
  state.status = ContainerStatus::kExited;
  state.exit_code = static_cast<int>(code);
  state.id = file.id;
  return state;
}

// A container podman still lists as 'created' after its supervisor was stopped: the stop came
// while podman was starting it, it never ran and nothing ever will (`podman logs --follow` and
// `podman wait` would wait on it forever). Returns the exit code to record then, 128+signal (255
// when no signal came: conmon died first), or nullopt for any other state.
std::optional<int> NeverStartedExit(const std::string& name,
                                    const StatusOr<ContainerState>& state) {
  if (!state.ok() || state->status != ContainerStatus::kCreated) return std::nullopt;
  Say("container " + name + " never started: it was stopped while starting");
  return g_signals > 0 ? 128 + static_cast<int>(g_last_signal) : 255;
}

// Follows the container through its log file (LogTail) until its conmon exits, which it does
// once the container has exited and its output is in the log; then conmon's exit file (or, once
// `podman container cleanup` has consumed it, one inspect) gives the exit code. Nothing on this
// path starts a process: the container's output and end reach the job log as soon as conmon writes
// them. Returns the exited state, or nullopt when this way is not available (no log path or conmon
// pid, an old podman) or podman does not say "exited" yet: the caller then follows with `podman
// logs` from where this left off (`relayed`).
std::optional<ContainerState> FollowLogFile(const ContainerRunSpec& spec, ContainerEngine& engine,
                                            int* handled, LogTail& tail, Relayed* relayed) {
  const pid_t conmon = ConmonPidOf(spec);
  if (conmon <= 0 || spec.container.log_path.empty()) return std::nullopt;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, conmon, 0));
  if (pidfd < 0 && errno != ESRCH) return std::nullopt;
  const ExitFile exit_file = ConmonExitFile(conmon);
  const LogTail::Sink sink = RelaySink(relayed);
  // conmon writes the exit file once the container's output is drained into the log, then runs
  // `podman container cleanup` and waits for it (~40 ms) before it exits itself: the file, watched
  // in its directory, ends the follow that much sooner (and spares the inspect the cleanup would
  // otherwise need, as it consumes the file).
  UniqueFd exit_watch(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (exit_watch.valid() && !exit_file.path.empty()) {
    (void)::inotify_add_watch(exit_watch.get(), fs::path(exit_file.path).parent_path().c_str(),
                              IN_CLOSE_WRITE | IN_MOVED_TO);
  }
  bool exited = pidfd < 0;  // ESRCH: conmon is already gone
  std::optional<ContainerState> recorded;
  while (!exited) {
    (void)tail.Poll(sink);
    ForwardSignals(engine, spec.container.name, handled);
    recorded = ExitRecordedByConmon(exit_file);
    if (recorded) break;
    pollfd p[3] = {{pidfd, POLLIN, 0}, {exit_watch.get(), POLLIN, 0}, {tail.wait_fd(), POLLIN, 0}};
    const int n = ::poll(p, 3, 50);
    exited = n > 0 && (p[0].revents & POLLIN) != 0;
    if (n > 0 && (p[1].revents & POLLIN) != 0) {
      char buf[4096];
      while (::read(exit_watch.get(), buf, sizeof buf) > 0) {
      }
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  (void)tail.Poll(sink);
  if (recorded) return recorded;        // conmon ends after the cleanup; its new parent collects it
  ::waitpid(conmon, nullptr, WNOHANG);  // this process is its subreaper: collect it
  if (auto recorded = ExitRecordedByConmon(exit_file)) return recorded;
  auto state = engine.Inspect(spec.container.name);
  if (std::optional<int> code = NeverStartedExit(spec.container.name, state)) {
    ContainerState ended = *state;  // conmon is gone and the container never ran
    ended.status = ContainerStatus::kExited;
    ended.exit_code = *code;
    return ended;
  }
  if (!state.ok() || state->status != ContainerStatus::kExited) return std::nullopt;
  return *state;
}

// Removes the exited container (by id, so that a next attempt's container of the same name is
// never hit) and its log file after this process has exited: the job's end is recorded when it
// exits, and a removal (~50 ms of podman) need not come first. Executor::Release removes whatever
// a lost removal leaves.
void RemoveAfterExit(const ContainerRunSpec& spec, const std::string& id) {
  std::vector<std::string> args = {"/bin/sh",
                                   "-c",
                                   "log=$1; pid=$2; shift 2; \"$@\" >/dev/null 2>&1; "
                                   "rm -f -- \"$log\" \"$pid\"",
                                   "sh",
                                   spec.container.log_path.string(),
                                   spec.container.conmon_pidfile.string(),
                                   spec.podman.podman};
  args.insert(args.end(), spec.podman.global_args.begin(), spec.podman.global_args.end());
  args.insert(args.end(), {"rm", "--force", id.empty() ? spec.container.name : id});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    // A new session, and the grandchild's parent gone: neither the wrapper's signal to our group
    // nor a wait for our children holds it.
    ::setsid();
    if (::fork() == 0) {
      const int devnull = ::open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
      ::execv(argv[0], argv.data());
    }
    ::_exit(0);
  }
  if (child > 0) ::waitpid(child, nullptr, 0);
}

// The exit code recorded in an exited container's state (255 when out of range).
int ExitCodeIn(const ContainerState& state) {
  if (state.oom_killed) Say("the container was killed by the kernel's OOM killer");
  return state.exit_code >= 0 && state.exit_code <= 255 ? state.exit_code : 255;
}

int ExitCodeOf(const ContainerRunSpec& spec, ContainerEngine& engine, int* handled,
               ExitWatch* watch) {
  const std::string& name = spec.container.name;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    ForwardSignals(engine, name, handled);
    // podman wait is killed too when the wrapper forwards a signal to our group; ask again.
    auto state = engine.Wait(name, std::chrono::seconds(10));
    if (state.ok() && state->status == ContainerStatus::kExited) return ExitCodeIn(*state);
    if (g_signals > 0) {
      if (std::optional<int> code = NeverStartedExit(name, state)) return *code;
    }
    if (!state.ok() && state.status().code() == StatusCode::kNotFound) {
      Say("container " + name + " disappeared before its exit code was read (removed by hand?)");
      return 255;
    }
    if (!watch->MayRun()) {
      const std::string says = state.ok() ? "not exited" : state.status().message();
      if (auto code = watch->ReapedExitCode()) {
        Say("container " + name + " ended with exit code " + std::to_string(*code) +
            " after its conmon did (podman's state says '" + says +
            "'); this process, its subreaper, collected it");
        return *code;
      }
      Say("container " + name + " has ended but podman lost its exit code (its state says '" +
          says + "'; was podman's state reset meanwhile?); recording 255");
      return 255;
    }
  }
  return 255;
}

}  // namespace

std::string ContainerRunSpecToJson(const ContainerRunSpec& s) {
  const ContainerSpec& c = s.container;
  Json j;
  j["version"] = 1;
  j["podman"] = {{"podman", s.podman.podman},
                 {"global_args", s.podman.global_args},
                 {"command_timeout_ms", s.podman.command_timeout.count()},
                 {"pull_timeout_ms", s.podman.pull_timeout.count()},
                 {"cdi_dirs", Paths(s.podman.cdi_dirs)},
                 {"dev_dir", s.podman.dev_dir.string()}};
  j["runtime"] = {{"runtime", s.runtime.runtime},
                  {"ulimits", s.runtime.ulimits},
                  {"rootless", s.runtime.rootless},
                  {"summary", s.runtime.summary}};
  j["requested_image"] = s.requested_image;
  j["pull"] = s.pull == PullPolicy::kAlways ? "always" : "missing";
  j["container"] = {{"name", c.name},
                    {"image", c.image},
                    {"job_id", c.job_id},
                    {"pool_index", c.pool_index},
                    {"replica_index", c.replica_index},
                    {"command", OptionalList(c.command)},
                    {"args", OptionalList(c.args)},
                    {"env", c.env},
                    {"bucket_root", c.bucket_root.string()},
                    {"hp_metric_file", c.hp_metric_file.string()},
                    {"extra_mounts", Paths(c.extra_mounts)},
                    {"read_only_mounts", Paths(c.read_only_mounts)},
                    {"cpus", c.cpus},
                    {"memory_bytes", c.memory_bytes},
                    {"gpus", c.gpus},
                    {"replace_existing", c.replace_existing},
                    {"log_path", c.log_path.string()},
                    {"conmon_pidfile", c.conmon_pidfile.string()}};
  if (c.uid && c.gid) {
    j["container"]["user"] = {{"uid", *c.uid}, {"gid", *c.gid}, {"groups", c.groups}};
  }
  j["error_file"] = s.error_file.string();
  return j.dump(1) + "\n";
}

StatusOr<ContainerRunSpec> ContainerRunSpecFromJson(const std::string& text) {
  ContainerRunSpec s;
  try {
    Json j = Json::parse(text);
    const Json& p = j.at("podman");
    s.podman.podman = p.at("podman").get<std::string>();
    s.podman.global_args = p.at("global_args").get<std::vector<std::string>>();
    s.podman.command_timeout = std::chrono::milliseconds(p.at("command_timeout_ms").get<int64_t>());
    s.podman.pull_timeout = std::chrono::milliseconds(p.at("pull_timeout_ms").get<int64_t>());
    s.podman.cdi_dirs.clear();
    for (const auto& d : p.at("cdi_dirs")) s.podman.cdi_dirs.push_back(d.get<std::string>());
    s.podman.dev_dir = p.at("dev_dir").get<std::string>();
    const Json& r = j.at("runtime");
    s.runtime.runtime = r.at("runtime").get<std::string>();
    s.runtime.ulimits = r.at("ulimits").get<std::vector<std::string>>();
    s.runtime.rootless = r.at("rootless").get<bool>();
    s.runtime.summary = r.at("summary").get<std::string>();
    s.requested_image = j.at("requested_image").get<std::string>();
    s.pull =
        j.at("pull").get<std::string>() == "always" ? PullPolicy::kAlways : PullPolicy::kMissing;
    const Json& c = j.at("container");
    ContainerSpec& out = s.container;
    out.name = c.at("name").get<std::string>();
    out.image = c.at("image").get<std::string>();
    out.job_id = c.at("job_id").get<std::string>();
    out.pool_index = c.at("pool_index").get<int>();
    out.replica_index = c.at("replica_index").get<int>();
    out.command = OptionalListFrom(c, "command");
    out.args = OptionalListFrom(c, "args");
    out.env = c.at("env").get<std::map<std::string, std::string>>();
    out.bucket_root = c.at("bucket_root").get<std::string>();
    out.hp_metric_file = c.at("hp_metric_file").get<std::string>();
    for (const auto& m : c.at("extra_mounts")) out.extra_mounts.push_back(m.get<std::string>());
    // Absent from the spec files of servers before read-only mounts existed.
    for (const auto& m : c.value("read_only_mounts", Json::array()))
      out.read_only_mounts.push_back(m.get<std::string>());
    out.cpus = c.at("cpus").get<double>();
    out.memory_bytes = c.at("memory_bytes").get<int64_t>();
    out.gpus = c.at("gpus").get<std::vector<int>>();
    out.replace_existing = c.at("replace_existing").get<bool>();
    // Absent from the spec files of servers before container-run followed the log itself.
    out.log_path = c.value("log_path", "");
    out.conmon_pidfile = c.value("conmon_pidfile", "");
    if (c.contains("user")) {
      out.uid = c["user"].at("uid").get<uint32_t>();
      out.gid = c["user"].at("gid").get<uint32_t>();
      out.groups = c["user"].at("groups").get<std::vector<uint32_t>>();
    }
    s.error_file = j.at("error_file").get<std::string>();
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("container run spec: ") + e.what());
  }
  return s;
}

Status WriteContainerStartError(const fs::path& path, const ContainerStartError& error) {
  Json j{{"failure", error.failure}, {"message", error.message}};
  return WriteFileAtomic(path, j.dump() + "\n");
}

StatusOr<ContainerStartError> ReadContainerStartError(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    Json j = Json::parse(text);
    return ContainerStartError{j.at("failure").get<std::string>(),
                               j.at("message").get<std::string>()};
  } catch (const std::exception& e) {
    return DataLossError("corrupt " + path.string() + ": " + e.what());
  }
}

namespace {

// Says why the container did not start and records it in spec.error_file for the wrapper.
// Returns the exit code for that, or 128+signal when a signal stopped us meanwhile (stopped,
// not failed).
int StartFailed(const ContainerRunSpec& spec, const std::string& failure, const Status& s) {
  if (g_signals > 0) return 128 + static_cast<int>(g_last_signal);
  // Name the image as the job wrote it; the pull error names the reference actually pulled.
  const std::string& image = spec.container.image;
  std::string message =
      spec.requested_image == image
          ? s.message()
          : "image '" + spec.requested_image + "' (rewritten to '" + image + "'): " + s.message();
  Say(message);
  if (Status w = WriteContainerStartError(spec.error_file, {failure, message}); !w.ok()) {
    Say("cannot record the failure: " + w.message());
  }
  return kContainerStartFailedExit;
}

// Relays the started container's output and signals until it exits, then removes it. Returns
// its exit code.
int FollowAndRemove(const ContainerRunSpec& spec, PodmanEngine& engine, LogTail& tail,
                    Relayed& relayed) {
  int handled = 0;
  if (std::optional<ContainerState> exited =
          FollowLogFile(spec, engine, &handled, tail, &relayed)) {
    const int code = ExitCodeIn(*exited);
    if (std::getenv("SLURM_JOB_ID") == nullptr && g_signals == 0) {
      RemoveAfterExit(spec, exited->id);
    } else {
      // A Slurm step's end kills what it started, a detached remover too, and nothing on the
      // node would remove the container later; and a stopped job (cancel) promises that no
      // container is left once it reads CANCELLED: remove it before exiting.
      if (Status removed = engine.Remove(spec.container.name); !removed.ok()) {
        Say("could not remove container " + spec.container.name + ": " + removed.message());
      }
      std::error_code ec;
      std::filesystem::remove(spec.container.log_path, ec);
    }
    return code;
  }
  if (g_signals > 0) {
    // Before the fallback follow, which would wait on a container left 'created' forever.
    if (std::optional<int> code =
            NeverStartedExit(spec.container.name, engine.Inspect(spec.container.name))) {
      (void)engine.Remove(spec.container.name);
      return *code;
    }
  }
  // The follower starts at once: the pids ExitWatch needs come from an inspect beside it (in
  // series it would delay the first line by one more podman call, ~50 ms).
  ExitWatch watch(0, 0);
  std::future<StatusOr<ContainerState>> started =
      std::async(std::launch::async, [&] { return engine.Inspect(spec.container.name); });
  auto adopt = [&](bool wait) {
    if (!started.valid()) return;
    if (!wait && started.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    StatusOr<ContainerState> state = started.get();
    if (state.ok()) watch.Adopt(state->pid, state->conmon_pid);
  };
  const std::optional<ContainerState> exited =
      FollowUntilExit(spec, engine, &handled, &relayed, &watch, [&] { adopt(/*wait=*/false); });
  adopt(/*wait=*/true);
  int code = exited ? ExitCodeIn(*exited) : ExitCodeOf(spec, engine, &handled, &watch);
  // `podman logs --follow` can stop at the container's exit before printing the last lines its
  // log holds; the finished log, read once more, gives what is missing.
  auto forward = [&] {
    ForwardSignals(engine, spec.container.name, &handled);
    return true;
  };
  if (RelayLogs(spec, /*follow=*/false, &relayed, forward) < 0) {
    Say("cannot read the container's final output: podman logs did not start");
  }
  if (Status removed = engine.Remove(spec.container.name); !removed.ok()) {
    Say("could not remove container " + spec.container.name + ": " + removed.message());
  }
  watch.ReapConmon(std::chrono::seconds(2));
  return code;
}

// Pulls the image, starts the container and follows it (FollowAndRemove). Returns its exit
// code, or StartFailed's when it never ran.
int PullAndRun(const ContainerRunSpec& spec, PodmanEngine& engine) {
  const std::string& image = spec.container.image;
  if (spec.requested_image != image) {
    Say("image " + spec.requested_image + " resolves to " + image + " (image rewrite table)");
  }
  // conmon leaves podman's process tree (it daemonizes). As the subreaper, this process becomes
  // its parent instead of init, so the container stays in the tree of whatever runs us: Slurm's
  // process tracking (proctrack/linuxproc, jobacct_gather/linux) then counts its memory and CPU
  // in the step (sstat, sacct) and signals it with the step. ExitWatch collects conmon.
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    Say(std::string("cannot become the container's subreaper (") + std::strerror(errno) +
        "); it runs outside this process tree");
  }
  // podman's pull progress is the platform's note, not the replica's words: prefixed like Say's,
  // so a failure's reason (executor/job_log.h LastStderrLine) is never "Storing signatures".
  auto progress = [](std::string_view line) { Say("pull: " + std::string(line)); };
  // The container's first lines are relayed while `podman run --detach` is still returning (its
  // exit takes ~10 ms after the start): the log is followed from before the run.
  Relayed relayed;
  LogTail tail(spec.container.log_path);
  std::optional<BackgroundTail> early;
  if (!spec.container.log_path.empty()) early.emplace(tail, RelaySink(&relayed));
  auto follow = [&] {
    early.reset();
    return FollowAndRemove(spec, engine, tail, relayed);
  };
  // One podman call, as `podman run` alone: an image already present is run at once (asking
  // whether it is there first would cost every warm start a call), a missing one is pulled by
  // that run. Only when that pull failed does the pull below retry it and name the cause.
  if (spec.pull == PullPolicy::kMissing) {
    Status ran = engine.RunPullingMissing(spec.container, progress);
    if (ran.ok()) return follow();
    if (ran.code() == StatusCode::kDeadlineExceeded) {
      return StartFailed(spec, "IMAGE_UNAVAILABLE", ran);
    }
    if (ran.code() != StatusCode::kNotFound) return StartFailed(spec, "START_FAILED", ran);
    if (g_signals > 0) return 128 + static_cast<int>(g_last_signal);
  }
  Status pulled = engine.Pull(image, PullPolicy::kAlways, progress);
  if (!pulled.ok()) return StartFailed(spec, "IMAGE_UNAVAILABLE", pulled);
  if (g_signals > 0) return 128 + static_cast<int>(g_last_signal);
  if (Status ran = engine.Run(spec.container); !ran.ok()) {
    return StartFailed(
        spec, ran.code() == StatusCode::kNotFound ? "IMAGE_UNAVAILABLE" : "START_FAILED", ran);
  }
  return follow();
}

}  // namespace

int ContainerRunMain(int argc, char** argv) {
  // `--guard FD --spec FILE`: the orphan guard (orphan_guard.h), started by a supervisor below.
  int guard_fd = -1;
  if (argc == 5 && std::strcmp(argv[1], "--guard") == 0) {
    guard_fd = std::atoi(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc != 3 || std::strcmp(argv[1], "--spec") != 0) {
    std::cerr << "usage: trainyard-container-run --spec FILE\n";
    return 2;
  }
  auto text = ReadFile(argv[2]);
  if (!text.ok()) {
    std::cerr << "trainyard-container-run: " << text.status().ToString() << "\n";
    return 2;
  }
  auto parsed = ContainerRunSpecFromJson(*text);
  if (!parsed.ok()) {
    std::cerr << "trainyard-container-run: " << parsed.status().ToString() << "\n";
    return 2;
  }
  const ContainerRunSpec& spec = *parsed;
  if (guard_fd >= 0) return OrphanGuardMain(guard_fd, spec);
  // Removes the container if this process is killed before it has (Slurm's SIGKILL of a step);
  // disarmed when it returns.
  auto guard = OrphanGuard::Start(argv[2]);
  if (!guard.ok()) Say("runs without an orphan guard: " + guard.status().message());
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);

  PodmanOptions podman = spec.podman;
  // A stop (cancel, timeout) ends a pull's wait to retry at once.
  podman.interrupted = [] { return g_signals > 0; };
  PodmanEngine engine(CommandRunner::Real(), podman, spec.runtime);
  return PullAndRun(spec, engine);
}

}  // namespace trainyard::container
