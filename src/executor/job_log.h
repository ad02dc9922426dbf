// Durable, timestamped, size-bounded logs of one job (all replicas, stdout and stderr).
//
// On disk: <log_dir>/segment-<start>.log files, where <start> (20 digits) is the global byte
// offset of the segment's first byte. Each line is one record:
//   2026-11-22T02:41:52.123456Z <pool> <replica> <O|E> <text>\n
// The global offset of a record (segment start + position) is its LogLine::offset cursor, so
// cursors increase monotonically across rotation and survive restarts.
//
// Several processes append at once (one trainyard-exec-wrapper per replica plus the executor's own
// "[trainyard] ..." lines): every append holds an exclusive flock on <log_dir>/.lock, so records
// never interleave and rotation is race-free.
//
// Bounds: a segment is closed once it reaches segment_bytes; at most max_segments are kept. The
// first segment (the job's start, where setup errors show) is always kept; the oldest of the
// others are deleted. ReadJobLog reports a deleted range as one line "[trainyard] N bytes of log
// were rotated away". Lines longer than kMaxLineBytes are split. Durability: appends are plain
// write(2)s, so captured output survives a crash of any process (not a power loss).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"

namespace trainyard::executor {

struct LogLimits {
  int64_t segment_bytes = 8 << 20;  // 8 MiB
  int max_segments = 8;             // so at most 64 MiB per job
};

inline constexpr size_t kMaxLineBytes = 64 * 1024;

struct LogRecord {
  std::chrono::system_clock::time_point time;
  int pool_index = 0;
  int replica_index = 0;
  bool is_stderr = false;
  std::string text;  // one line, no '\n'
};

// "2026-11-22T02:41:52.123456Z" (UTC, microseconds): common/time.h FormatTimestamp.
inline std::string FormatLogTime(std::chrono::system_clock::time_point t) {
  return FormatTimestamp(t);
}

// Appends records to a job's log under the lock, rotating as needed. Creates log_dir.
Status AppendJobLog(const std::filesystem::path& log_dir, const LogLimits& limits,
                    const std::vector<LogRecord>& records);

// Records with offset > after (-1 = from the start), at most `limit`, in order. A cursor inside a
// rotated-away range resumes at the oldest kept record after it. NOT_FOUND-free: a missing
// log_dir reads as empty.
StatusOr<std::vector<LogLine>> ReadJobLog(const std::filesystem::path& log_dir, int64_t after,
                                          int limit);

// The last line replica (`pool`, `replica`) wrote to stderr, "" when there is none: what explains
// its exit (executor/gang_lifecycle.h ReplicaExitMessage). The executors' "[trainyard] ..." notes
// among its stderr lines are passed over, but for "[trainyard] cannot ..." (its exec wrapper's
// start-up failures, such as a command not found). Reads segments from the newest back and stops
// at the first that has one.
std::string LastStderrLine(const std::filesystem::path& log_dir, int pool, int replica);
// The same over lines already read (the FakeExecutor's log).
std::string LastStderrLine(const std::vector<LogLine>& lines, int pool, int replica);

// The Cloud Logging severity of a line. A replica's own lines: stdout INFO, stderr ERROR (as
// Vertex marks them). The executors' "[trainyard] " notes by what they say, whatever stream they
// are on: a failure ("cannot ...", a non-zero exit, a signal) ERROR; a restart, an oversubscribed
// host or log rotated away WARNING; the rest (a replica's exit with code 0, pull progress, host
// notes) INFO.
std::string LogSeverity(const LogLine& line);

// Splits a byte stream into lines for a log: Feed() returns the complete lines seen so far (a
// line longer than kMaxLineBytes is emitted in pieces); Flush() returns a final unterminated line.
class LineSplitter {
 public:
  std::vector<std::string> Feed(std::string_view bytes);
  std::vector<std::string> Flush();

 private:
  std::string partial_;
};

}  // namespace trainyard::executor
