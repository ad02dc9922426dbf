#include "executor/job_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <optional>

#include "common/file_util.h"

namespace trainyard::executor {
namespace fs = std::filesystem;
namespace {

constexpr char kSegmentPrefix[] = "segment-";
constexpr char kSegmentSuffix[] = ".log";

struct Segment {
  int64_t start = 0;
  fs::path path;
};

// Segments sorted by start offset (missing dir = none).
std::vector<Segment> ListSegments(const fs::path& dir) {
  std::vector<Segment> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(kSegmentPrefix) || !name.ends_with(kSegmentSuffix)) continue;
    std::string digits =
        name.substr(sizeof(kSegmentPrefix) - 1,
                    name.size() - (sizeof(kSegmentPrefix) - 1) - (sizeof(kSegmentSuffix) - 1));
    char* end = nullptr;
    long long start = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || start < 0) continue;
    out.push_back({start, entry.path()});
  }
  std::sort(out.begin(), out.end(),
            [](const Segment& a, const Segment& b) { return a.start < b.start; });
  return out;
}

fs::path SegmentPath(const fs::path& dir, int64_t start) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%020lld%s", kSegmentPrefix, static_cast<long long>(start),
                kSegmentSuffix);
  return dir / name;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Records carry FormatLogTime's fixed-width form; anything else is a malformed record.
bool ParseLogTime(std::string_view s, std::chrono::system_clock::time_point* out) {
  if (s.size() != 27 || s[26] != 'Z') return false;
  StatusOr<TimePoint> t = ParseTimestamp(s);
  if (!t.ok()) return false;
  *out = *t;
  return true;
}

// Parses one record line (without '\n'); false if malformed.
bool ParseRecord(std::string_view line, LogLine* out) {
  size_t p1 = line.find(' ');
  if (p1 == std::string_view::npos || !ParseLogTime(line.substr(0, p1), &out->time)) return false;
  size_t p2 = line.find(' ', p1 + 1);
  if (p2 == std::string_view::npos) return false;
  size_t p3 = line.find(' ', p2 + 1);
  if (p3 == std::string_view::npos || p3 + 2 > line.size()) return false;
  out->pool_index = std::atoi(std::string(line.substr(p1 + 1, p2 - p1 - 1)).c_str());
  out->replica_index = std::atoi(std::string(line.substr(p2 + 1, p3 - p2 - 1)).c_str());
  char stream = line[p3 + 1];
  if (stream != 'O' && stream != 'E') return false;
  out->is_stderr = stream == 'E';
  out->text = line.size() > p3 + 3 ? std::string(line.substr(p3 + 3)) : std::string();
  return true;
}

Status AppendToFile(const fs::path& path, const std::string& data) {
  if (data.empty()) return Status::Ok();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(Errno("cannot open " + path.string()));
  struct stat before {};
  const bool sized = ::fstat(fd, &before) == 0;
  Status s = trainyard::WriteAll(fd, data, path);
  // A full disk may take part of the batch: cut it off again, so that the log never holds half
  // a line (the caller counts the whole batch as lost). Appenders hold the log's lock.
  if (!s.ok() && sized) (void)::ftruncate(fd, before.st_size);
  ::close(fd);
  return s;
}

std::string FormatRecord(const LogRecord& r) {
  std::string line = FormatLogTime(r.time);
  line += ' ';
  line += std::to_string(r.pool_index);
  line += ' ';
  line += std::to_string(r.replica_index);
  line += r.is_stderr ? " E " : " O ";
  for (char c : r.text) line += c == '\n' ? ' ' : c;
  line += '\n';
  return line;
}

}  // namespace

Status AppendJobLog(const fs::path& log_dir, const LogLimits& limits,
                    const std::vector<LogRecord>& records) {
  if (records.empty()) return Status::Ok();
  TY_RETURN_IF_ERROR(MakeDirs(log_dir));
  fs::path lock_path = log_dir / ".lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return IoError(Errno("cannot open " + lock_path.string()));
  while (::flock(lock_fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      Status s = IoError(Errno("cannot lock " + lock_path.string()));
      ::close(lock_fd);
      return s;
    }
  }
  std::vector<Segment> segments = ListSegments(log_dir);
  Segment current = segments.empty() ? Segment{0, SegmentPath(log_dir, 0)} : segments.back();
  if (segments.empty()) segments.push_back(current);
  std::error_code ec;
  int64_t size =
      fs::exists(current.path, ec) ? static_cast<int64_t>(fs::file_size(current.path, ec)) : 0;
  std::string pending;
  Status result = Status::Ok();
  for (const auto& record : records) {
    if (size + static_cast<int64_t>(pending.size()) >= limits.segment_bytes) {
      result = AppendToFile(current.path, pending);
      if (!result.ok()) break;
      size += static_cast<int64_t>(pending.size());
      pending.clear();
      current = {current.start + size, SegmentPath(log_dir, current.start + size)};
      size = 0;
      segments.push_back(current);
      // Keep the first segment and the newest max_segments-1.
      int keep = std::max(2, limits.max_segments);
      while (static_cast<int>(segments.size()) > keep) {
        fs::remove(segments[1].path, ec);
        segments.erase(segments.begin() + 1);
      }
    }
    pending += FormatRecord(record);
  }
  if (result.ok()) result = AppendToFile(current.path, pending);
  ::flock(lock_fd, LOCK_UN);
  ::close(lock_fd);
  return result;
}

namespace {

// The offset just past the segment's last byte; nullopt if it cannot be read (rotated away).
std::optional<int64_t> SegmentEnd(const Segment& segment) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(segment.path, ec);
  if (ec) return std::nullopt;
  return segment.start + static_cast<int64_t>(size);
}

// The line that says `bytes` of log before `next_start` were rotated away.
LogLine GapLine(int64_t next_start, int64_t bytes) {
  LogLine gap;
  gap.offset = next_start - 1;
  gap.is_stderr = true;
  gap.text = "[trainyard] " + std::to_string(bytes) + " bytes of log were rotated away";
  return gap;
}

// Where a read after cursor `after` starts: the segment holding `after` (whose record at `after`
// is skipped) or, if that was rotated away, the next one, with a gap line for what is gone.
struct ReadStart {
  size_t segment = 0;
  bool skip_first_line = false;
  std::optional<LogLine> gap;
};

ReadStart StartAfter(const std::vector<Segment>& segments, int64_t after) {
  ReadStart start;
  if (after < 0) return start;
  start.segment = segments.size();
  for (size_t i = 0; i < segments.size(); ++i) {
    if (after < segments[i].start) {
      start.segment = i;
      if (i > 0 && after < segments[i].start - 1) {  // `after` lies in a deleted range
        const int64_t prev_end = SegmentEnd(segments[i - 1]).value_or(segments[i - 1].start);
        start.gap = GapLine(segments[i].start, segments[i].start - std::max(prev_end, after));
      }
      return start;
    }
    if (after < SegmentEnd(segments[i]).value_or(segments[i].start)) {
      start.segment = i;
      start.skip_first_line = true;
      return start;
    }
  }
  return start;
}

// Appends the complete records of `segment` from byte `pos` (skipping the first when
// `skip_first`) until `out` holds `limit` lines. A gap line at `*gap_index` takes the time of
// the first record after it.
void ReadSegment(const Segment& segment, int64_t pos, bool skip_first, int limit,
                 std::vector<LogLine>* out, size_t* gap_index) {
  std::ifstream in(segment.path, std::ios::binary);
  if (!in) return;  // rotated away between listing and opening
  if (pos > 0) in.seekg(pos);
  std::string line;
  bool skip = skip_first;
  while (static_cast<int>(out->size()) < limit && std::getline(in, line)) {
    int64_t offset = segment.start + pos;
    bool complete = !in.eof();  // a last line without '\n' is still being written
    pos += static_cast<int64_t>(line.size()) + 1;
    if (!complete) break;
    if (skip) {
      skip = false;
      continue;
    }
    LogLine ll;
    if (!ParseRecord(line, &ll)) continue;
    ll.offset = offset;
    if (*gap_index != std::string::npos) (*out)[*gap_index].time = ll.time;
    *gap_index = std::string::npos;
    out->push_back(std::move(ll));
  }
}

}  // namespace

StatusOr<std::vector<LogLine>> ReadJobLog(const fs::path& log_dir, int64_t after, int limit) {
  std::vector<LogLine> out;
  if (limit <= 0) return out;
  const std::vector<Segment> segments = ListSegments(log_dir);
  ReadStart start = StartAfter(segments, after);
  size_t gap_index = std::string::npos;
  if (start.gap) {
    out.push_back(std::move(*start.gap));
    gap_index = out.size() - 1;
  }
  for (size_t i = start.segment; i < segments.size() && static_cast<int>(out.size()) < limit; ++i) {
    if (i > start.segment) {
      const std::optional<int64_t> prev_end = SegmentEnd(segments[i - 1]);
      if (prev_end && *prev_end < segments[i].start) {
        out.push_back(GapLine(segments[i].start, segments[i].start - *prev_end));
        gap_index = out.size() - 1;
        if (static_cast<int>(out.size()) >= limit) break;
      }
    }
    const bool skip = i == start.segment && start.skip_first_line;
    ReadSegment(segments[i], skip ? after - segments[i].start : 0, skip, limit, &out, &gap_index);
  }
  return out;
}

namespace {

// The executors' own notes ("[trainyard] restarting ...", "[trainyard] ... exited with code 2")
// explain nothing about an exit; the replica's start-up failures ("[trainyard] cannot execute
// 'python3': ...", written by its exec wrapper) do.
bool IsReason(const LogLine& line) {
  return !line.text.starts_with("[trainyard] ") || line.text.starts_with("[trainyard] cannot ");
}

}  // namespace

std::string LogSeverity(const LogLine& line) {
  const std::string& t = line.text;
  if (!t.starts_with("[trainyard] ")) return line.is_stderr ? "ERROR" : "INFO";
  if (t.starts_with("[trainyard] cannot ") || t.find("killed by signal") != std::string::npos) {
    return "ERROR";
  }
  if (const size_t at = t.find("exited with code "); at != std::string::npos) {
    const char next = at + 17 < t.size() ? t[at + 17] : '\0';
    const bool zero = next == '0' && (at + 18 >= t.size() ||
                                      !std::isdigit(static_cast<unsigned char>(t[at + 18])));
    if (!zero) return "ERROR";
  }
  for (const char* word : {"restarting", "oversubscribed", "rotated away"}) {
    if (t.find(word) != std::string::npos) return "WARNING";
  }
  return "INFO";
}

std::string LastStderrLine(const std::vector<LogLine>& lines, int pool, int replica) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->is_stderr && it->pool_index == pool && it->replica_index == replica && IsReason(*it)) {
      return it->text;
    }
  }
  return "";
}

std::string LastStderrLine(const fs::path& log_dir, int pool, int replica) {
  const std::vector<Segment> segments = ListSegments(log_dir);
  for (auto segment = segments.rbegin(); segment != segments.rend(); ++segment) {
    std::vector<LogLine> lines;
    size_t no_gap = std::string::npos;
    ReadSegment(*segment, 0, false, std::numeric_limits<int>::max(), &lines, &no_gap);
    std::string last = LastStderrLine(lines, pool, replica);
    if (!last.empty()) return last;
  }
  return "";
}

std::vector<std::string> LineSplitter::Feed(std::string_view bytes) {
  std::vector<std::string> lines;
  for (char c : bytes) {
    if (c == '\n') {
      lines.push_back(std::move(partial_));
      partial_.clear();
      continue;
    }
    partial_ += c;
    if (partial_.size() >= kMaxLineBytes) {
      lines.push_back(std::move(partial_));
      partial_.clear();
    }
  }
  return lines;
}

std::vector<std::string> LineSplitter::Flush() {
  std::vector<std::string> lines;
  if (!partial_.empty()) lines.push_back(std::move(partial_));
  partial_.clear();
  return lines;
}

}  // namespace trainyard::executor
