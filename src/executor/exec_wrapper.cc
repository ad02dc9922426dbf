#include "executor/exec_wrapper.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/disk_fault.h"
#include "common/file_util.h"
#include "executor/job_log.h"
#include "executor/process_ops.h"
#include "executor/replica_status_file.h"

namespace trainyard::executor {
namespace {

// The longest wait between two tries to store the exit code on a full disk.
constexpr std::chrono::milliseconds kStatusRetryMax{2000};

volatile sig_atomic_t g_signals = 0;
volatile sig_atomic_t g_last_signal = SIGTERM;

void OnSignal(int sig) {
  g_last_signal = sig;
  g_signals = g_signals + 1;
}

struct Args {
  std::string log_dir, pid_file, status_file;
  int pool = 0, replica = 0;
  LogLimits limits;
  std::vector<int> cpus;  // --cpus: pin the replica to these CPU ids
  // --cgroup, repeatable: cgroup directories the replica joins (one on cgroup v2; on v1 one per
  // hierarchy, e.g. memory and cpu).
  std::vector<std::string> cgroups;
  // --supervisor-cgroup, repeatable: cgroup directories the wrapper itself joins first (the
  // server's delegated mode: out of the server's own cgroup; cgroup_limits.h).
  std::vector<std::string> supervisor_cgroups;
  bool switch_user = false;  // --user UID:GID[:G1,G2...]: run the replica as this identity
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
  std::vector<std::string> command;
};

// A decimal id below 2^32-1 (which is (uid_t)-1, "no change" to setuid); false otherwise.
bool ParseId(const std::string& text, unsigned long* id) {
  char* stop = nullptr;
  errno = 0;
  *id = std::strtoul(text.c_str(), &stop, 10);
  return !text.empty() && text[0] != '-' && *stop == '\0' && errno == 0 && *id < 0xFFFFFFFFul;
}

// "1000:1000" or "1000:1000:27,100" -> uid, gid, supplementary groups; false for anything else.
bool ParseUser(const std::string& text, Args* a) {
  const size_t c1 = text.find(':');
  if (c1 == std::string::npos) return false;
  const size_t c2 = text.find(':', c1 + 1);
  unsigned long uid = 0, gid = 0;
  if (!ParseId(text.substr(0, c1), &uid)) return false;
  if (!ParseId(text.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1),
               &gid)) {
    return false;
  }
  std::vector<gid_t> groups;
  if (c2 != std::string::npos) {
    const std::string list = text.substr(c2 + 1);
    size_t i = 0;
    while (true) {
      const size_t comma = list.find(',', i);
      unsigned long g = 0;
      if (!ParseId(list.substr(i, comma == std::string::npos ? std::string::npos : comma - i), &g))
        return false;
      groups.push_back(static_cast<gid_t>(g));
      if (comma == std::string::npos) break;
      i = comma + 1;
    }
  }
  a->switch_user = true;
  a->uid = static_cast<uid_t>(uid);
  a->gid = static_cast<gid_t>(gid);
  a->groups = std::move(groups);
  return true;
}

// "0,2,5" -> {0, 2, 5}; false for anything else.
bool ParseCpuList(const std::string& text, std::vector<int>* out) {
  size_t i = 0;
  while (i < text.size()) {
    size_t comma = text.find(',', i);
    std::string item = text.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
    char* end = nullptr;
    long id = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || id < 0 || id >= CPU_SETSIZE) return false;
    out->push_back(static_cast<int>(id));
    if (comma == std::string::npos) break;
    i = comma + 1;
  }
  return !out->empty();
}

// A note from the forked child on its stderr (the pipe into the job log); plain write(2).
void ChildNote(const char* what, const char* detail) {
  const char* parts[] = {"[trainyard] ", what, detail, "\n"};
  for (const char* p : parts) {
    ssize_t ignored = ::write(2, p, std::strlen(p));
    (void)ignored;
  }
}

bool ParseArgs(int argc, char** argv, Args* a, std::string* error) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) {
      *error = "flag " + flag + " needs a value";
      return false;
    }
    std::string value = argv[++i];
    if (flag == "--log-dir") {
      a->log_dir = value;
    } else if (flag == "--pid-file") {
      a->pid_file = value;
    } else if (flag == "--status-file") {
      a->status_file = value;
    } else if (flag == "--pool") {
      a->pool = std::atoi(value.c_str());
    } else if (flag == "--replica") {
      a->replica = std::atoi(value.c_str());
    } else if (flag == "--segment-bytes") {
      a->limits.segment_bytes = std::atoll(value.c_str());
    } else if (flag == "--max-segments") {
      a->limits.max_segments = std::atoi(value.c_str());
    } else if (flag == "--cpus") {
      if (!ParseCpuList(value, &a->cpus)) {
        *error = "--cpus: '" + value + "' is not a comma-separated list of CPU ids";
        return false;
      }
    } else if (flag == "--cgroup") {
      a->cgroups.push_back(value);
    } else if (flag == "--supervisor-cgroup") {
      a->supervisor_cgroups.push_back(value);
    } else if (flag == "--user") {
      if (!ParseUser(value, a)) {
        *error = "--user: '" + value + "' is not UID:GID or UID:GID:GROUP,GROUP...";
        return false;
      }
    } else {
      *error = "unknown flag " + flag;
      return false;
    }
  }
  for (; i < argc; ++i) a->command.push_back(argv[i]);
  if (a->log_dir.empty() || a->pid_file.empty() || a->status_file.empty() || a->command.empty()) {
    *error = "--log-dir, --pid-file, --status-file and a command after -- are required";
    return false;
  }
  return true;
}

// The replica's output on its way into the job log. Lines the disk refuses (full, no inodes,
// read-only) are counted, not kept: the job log says how many were lost, once a write succeeds
// again ("[trainyard] 3 log lines were lost: disk full").
class Output {
 public:
  explicit Output(const Args& args) : args_(args) {}

  void Add(bool is_stderr, std::vector<std::string> lines) {
    auto now = std::chrono::system_clock::now();
    for (auto& line : lines) {
      pending_.push_back({now, args_.pool, args_.replica, is_stderr, std::move(line)});
    }
  }
  // Appends what is pending; true when nothing is left unsaid (no lines, no lost-lines note).
  bool Flush() {
    if (pending_.empty() && lost_ == 0) return true;
    std::vector<LogRecord> records;
    if (lost_ > 0) {
      records.push_back(
          {std::chrono::system_clock::now(), args_.pool, args_.replica, true,
           "[trainyard] " + std::to_string(lost_) + " log lines were lost: " + lost_reason_});
    }
    records.insert(records.end(), pending_.begin(), pending_.end());
    Status s = AppendJobLog(args_.log_dir, args_.limits, records);
    if (s.ok()) {
      lost_ = 0;
    } else {
      lost_ += static_cast<int64_t>(pending_.size());
      lost_reason_ = ReasonOf(s);
      if (!reported_) std::fprintf(stderr, "trainyard-exec-wrapper: %s\n", s.ToString().c_str());
      reported_ = true;
    }
    pending_.clear();
    return s.ok();
  }

 private:
  // The short reason for the note ("disk full"), from the OS's words in the error.
  std::string ReasonOf(const Status& s) const {
    const DiskFault fault = DiskFaultOf(s, args_.log_dir);
    return fault == DiskFault::kNone ? "the job log could not be written"
                                     : std::string(DiskFaultReason(fault));
  }

  const Args& args_;
  std::vector<LogRecord> pending_;
  int64_t lost_ = 0;
  std::string lost_reason_;
  bool reported_ = false;  // the first failure goes to the wrapper's own log, not every one
};

// Records the replica's exit. The wrapper's exit is what tells the executor to look for this
// file, and an exit without it would make a finished replica "lost": so while the disk has no
// room (or is read-only) it waits and tries again, with the lost-lines note, until both are
// stored. Only SIGKILL (a cancel's grace running out) ends the wait.
Status WriteStatusWhenPossible(const Args& args, Output& output, int exit_code) {
  const auto end_time = std::chrono::system_clock::now();
  bool said = false;
  for (auto wait = std::chrono::milliseconds(100);; wait = std::min(wait * 2, kStatusRetryMax)) {
    const bool logged = output.Flush();
    Status s = WriteReplicaStatusFile(args.status_file, exit_code, end_time);
    if (s.ok() && logged) return s;
    if (!s.ok() && !IsDiskFault(s)) return s;
    if (!said && !s.ok()) {
      std::fprintf(stderr, "trainyard-exec-wrapper: %s; retrying until there is room\n",
                   s.ToString().c_str());
      said = true;
    }
    if (s.ok() && !logged) {
      // The exit code is stored; the note about lost lines is not worth holding the job for.
      return s;
    }
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace

namespace {

// What the forked child needs, prepared before fork: the child only makes async-signal-safe calls.
struct ChildSetup {
  std::vector<char*> argv;  // null-terminated, pointing into Args::command
  cpu_set_t cpus;
  bool pin = false;
  std::vector<std::string> cgroup_procs;  // the cgroup.procs files to join; empty = none
  const Args* identity = nullptr;         // switch to its uid/gid/groups; nullptr = stay
};

// Drops to the replica's identity: supplementary groups, then gid, then uid (the order in which
// each step still has the privilege for the next). False, with errno, if any step fails: the
// replica must then not run at all rather than run as the supervisor's user.
bool SwitchIdentity(const Args& id) {
  if (::setgroups(id.groups.size(), id.groups.data()) != 0) return false;
  if (::setgid(id.gid) != 0) return false;
  if (::setuid(id.uid) != 0) return false;
  // Dropping to a non-root uid must be irreversible; if uid 0 can be regained, something is off.
  if (id.uid != 0 && ::setuid(0) == 0) {
    errno = EPERM;
    return false;
  }
  return true;
}

// In the child: its own process group, stdin from /dev/null, the pipes as stdout/stderr, the
// cgroup and CPU pinning, default signal handling, then exec. Never returns.
[[noreturn]] void RunChild(const ChildSetup& setup, int out_fd, int err_fd) {
  ::setpgid(0, 0);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  // Limits apply to the replica (and what it starts), not to the wrapper: an OOM kill inside
  // the cgroup cannot take the exit-code writer with it. A limit that cannot be applied is
  // reported in the log and the replica runs without it.
  for (const std::string& procs : setup.cgroup_procs) {
    int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0\n", 2) != 2) {
      ChildNote("cannot join cgroup (memory/CPU limits not applied): ", std::strerror(errno));
    }
    if (fd >= 0) ::close(fd);
  }
  if (setup.pin && ::sched_setaffinity(0, sizeof(setup.cpus), &setup.cpus) != 0) {
    ChildNote("cannot pin to CPUs (sched_setaffinity): ", std::strerror(errno));
  }
  if (setup.identity && !SwitchIdentity(*setup.identity)) {
    ChildNote("cannot switch to the replica's user (setgroups/setgid/setuid): ",
              std::strerror(errno));
    ::_exit(126);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvp(setup.argv[0], setup.argv.data());
  int err = errno;
  const char* msg1 = "[trainyard] cannot execute '";
  const char* msg2 = "': ";
  const char* reason = std::strerror(err);
  ssize_t ignored = ::write(2, msg1, std::strlen(msg1));
  ignored = ::write(2, setup.argv[0], std::strlen(setup.argv[0]));
  ignored = ::write(2, msg2, std::strlen(msg2));
  ignored = ::write(2, reason, std::strlen(reason));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  ::_exit(err == ENOENT ? 127 : 126);
}

// The child's pid and start time, for re-adoption. No fsync: the pid only matters while the
// replica lives, i.e. not after a power loss.
// True once written; on a full disk the pump below tries again on every pass (the executor
// needs the replica's pid to re-adopt it after a server restart).
bool WritePidFile(const std::string& pid_file, pid_t child, bool say_why) {
  ProcessId id = ProcessOps::Real().Identify(child);
  nlohmann::json pid_json{{"pid", child}, {"start_ticks", id.start_ticks}};
  std::string tmp = pid_file + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f != nullptr && std::fputs((pid_json.dump() + "\n").c_str(), f) >= 0;
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), pid_file.c_str()) != 0) {
    if (say_why) {
      std::fprintf(stderr, "trainyard-exec-wrapper: cannot write %s: %s\n", pid_file.c_str(),
                   std::strerror(errno));
    }
    ::unlink(tmp.c_str());  // a torn temp file must not stay behind
    return false;
  }
  return true;
}

// Non-blocking reap: true with *exit_code once `child` exited; its group is killed first.
bool Reaped(pid_t child, int* exit_code) {
  siginfo_t info{};
  // WNOWAIT: the child stays a zombie, so its pid (= the group id) cannot be reused before the
  // group is killed below.
  if (::waitid(P_PID, child, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != child) {
    return false;
  }
  // Like a VM going away on Vertex: nothing of the replica outlives it. Processes left in its
  // group would also keep the pipes open.
  ::kill(-child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

// Copies the child's stdout/stderr lines into `output` and forwards our signals to its group
// until it exited and its pipes are drained (2 s at most after the exit). Returns its exit code.
int PumpUntilExit(pid_t child, int out_fd, int err_fd, Output& output, const Args& args) {
  bool pid_written = WritePidFile(args.pid_file, child, /*say_why=*/true);
  // Readable when the replica exits, so its exit is handled at once even after both pipes
  // closed (otherwise the poll below would sleep its full timeout). -1: rely on the timeout.
  int exit_fd = -1;
#ifdef SYS_pidfd_open
  exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
#endif
  LineSplitter splitters[2];
  int fds[2] = {out_fd, err_fd};
  bool open_fds[2] = {true, true};
  bool exited = false;
  int exit_code = 0;
  int forwarded = 0;
  auto drain_deadline = std::chrono::steady_clock::time_point::max();
  std::vector<char> buf(64 * 1024);
  while (!exited ||
         ((open_fds[0] || open_fds[1]) && std::chrono::steady_clock::now() < drain_deadline)) {
    pollfd pfds[3];
    nfds_t n = 0;
    int which[3];
    for (int s = 0; s < 2; ++s) {
      if (open_fds[s]) {
        pfds[n] = {fds[s], POLLIN, 0};
        which[n++] = s;
      }
    }
    if (exit_fd >= 0 && !exited) {
      pfds[n] = {exit_fd, POLLIN, 0};
      which[n++] = 2;
    }
    if (::poll(pfds, n, 100) > 0) {
      for (nfds_t k = 0; k < n; ++k) {
        if (pfds[k].revents == 0 || which[k] == 2) continue;  // exit: handled by Reaped below
        int s = which[k];
        ssize_t got = ::read(fds[s], buf.data(), buf.size());
        if (got > 0) {
          output.Add(s == 1, splitters[s].Feed(std::string_view(buf.data(), got)));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          open_fds[s] = false;
          output.Add(s == 1, splitters[s].Flush());
        }
      }
    }
    output.Flush();
    if (!pid_written && !exited) pid_written = WritePidFile(args.pid_file, child, false);
    if (g_signals > forwarded && !exited) {
      ::kill(-child, g_last_signal);
      forwarded = g_signals;
    }
    if (!exited && Reaped(child, &exit_code)) {
      exited = true;
      drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    }
  }
  if (exit_fd >= 0) ::close(exit_fd);
  for (int s = 0; s < 2; ++s) output.Add(s == 1, splitters[s].Flush());
  output.Flush();
  return exit_code;
}

}  // namespace

int ExecWrapperMain(int argc, char** argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argc, argv, &args, &error)) {
    std::fprintf(stderr, "trainyard-exec-wrapper: %s\n", error.c_str());
    return 2;
  }
  // First of all, out of the server's cgroup: a kill of everything in it must miss this process.
  for (const std::string& dir : args.supervisor_cgroups) {
    int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0\n", 2) != 2) {
      std::fprintf(stderr, "trainyard-exec-wrapper: cannot join cgroup %s: %s\n", dir.c_str(),
                   std::strerror(errno));
    }
    if (fd >= 0) ::close(fd);
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  Output output(args);
  if (g_signals > 0) {  // stopped before the replica started
    output.Add(true, {"[trainyard] stopped before the replica started"});
    output.Flush();
    return WriteStatusWhenPossible(args, output, 128 + g_last_signal).ok() ? 0 : 2;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    std::perror("trainyard-exec-wrapper: pipe");
    return 2;
  }
  ChildSetup setup;
  for (auto& c : args.command) setup.argv.push_back(c.data());
  setup.argv.push_back(nullptr);
  CPU_ZERO(&setup.cpus);
  for (int id : args.cpus) CPU_SET(id, &setup.cpus);
  setup.pin = !args.cpus.empty();
  for (const auto& dir : args.cgroups) setup.cgroup_procs.push_back(dir + "/cgroup.procs");
  setup.identity = args.switch_user ? &args : nullptr;

  // Stop signals are blocked across fork: the child keeps one pending until RunChild has reset
  // the handlers to SIG_DFL, so a stop sent to the replica's group while it starts is not
  // swallowed by this process's OnSignal in the child (the replica would then run on until the
  // kill grace ends in SIGKILL).
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, sig);
  ::sigprocmask(SIG_BLOCK, &stop_signals, &previous);
  pid_t child = ::fork();
  if (child == 0) RunChild(setup, out_pipe[1], err_pipe[1]);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (child < 0) {
    std::perror("trainyard-exec-wrapper: fork");
    return 2;
  }
  ::setpgid(child, child);  // also here, so the group exists before anyone signals it
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  const int exit_code = PumpUntilExit(child, out_pipe[0], err_pipe[0], output, args);
  if (Status s = WriteStatusWhenPossible(args, output, exit_code); !s.ok()) {
    std::fprintf(stderr, "trainyard-exec-wrapper: %s\n", s.ToString().c_str());
    return 2;
  }
  return 0;
}

}  // namespace trainyard::executor
