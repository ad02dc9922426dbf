// The world as the LocalExecutor sees it: a clock and process operations, behind small interfaces
// so tests can replace them (STYLE.md §3). The real implementations use POSIX and /proc.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::executor {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time: deadlines are persisted and must survive a server restart.
  virtual std::chrono::system_clock::time_point Now() const = 0;
  static Clock& Real();
};

// A process identity that survives pid reuse: the pid plus its start time in clock ticks since
// boot (field 22 of /proc/<pid>/stat).
struct ProcessId {
  int64_t pid = 0;
  uint64_t start_ticks = 0;
  bool valid() const { return pid > 0; }
};

struct LaunchRequest {
  std::vector<std::string> argv;           // argv[0] absolute or looked up in env's PATH
  std::map<std::string, std::string> env;  // the complete environment
  std::filesystem::path cwd;
  std::filesystem::path output_file;  // stdout+stderr of the launched process (appended)
  bool new_session = true;            // setsid(): own session and process group
};

class ProcessOps {
 public:
  virtual ~ProcessOps() = default;
  // Starts a process. INVALID_ARGUMENT for an empty argv, UNAVAILABLE if the OS refuses.
  virtual StatusOr<ProcessId> Launch(const LaunchRequest& request) = 0;
  // True while the process exists, is not a zombie and has the same start time (no pid reuse).
  virtual bool IsAlive(const ProcessId& id) const = 0;
  // The identity of a running pid (start time read now); invalid if it does not exist.
  virtual ProcessId Identify(int64_t pid) const = 0;
  // kill(2) on the process (group=false) or its process group (group=true, pgid = id.pid), only
  // if IsAlive(id). Returns false if it was gone.
  virtual bool Signal(const ProcessId& id, int signal, bool group) = 0;
  // Collects the exit status of a process this object launched, if it exited (non-blocking;
  // avoids zombies). True once nothing is left to collect (reaped now or earlier, or not our
  // child); false while it still runs.
  virtual bool Reap(const ProcessId& id) = 0;
  // An fd that becomes readable (poll/epoll) once the process has exited; the caller owns it.
  // Works for any process, not only children (Linux pidfd). NOT_FOUND if the process is already
  // gone (or its pid now belongs to another process); UNIMPLEMENTED where the OS cannot do it
  // (the caller then notices exits by polling). The default is UNIMPLEMENTED.
  virtual StatusOr<int> OpenExitFd(const ProcessId& id);
  static ProcessOps& Real();
};

}  // namespace trainyard::executor
