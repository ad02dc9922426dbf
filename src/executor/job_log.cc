#include "executor/job_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

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
  Status s = trainyard::WriteAll(fd, data, path);
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

StatusOr<std::vector<LogLine>> ReadJobLog(const fs::path& log_dir, int64_t after, int limit) {
  std::vector<LogLine> out;
  if (limit <= 0) return out;
  std::vector<Segment> segments = ListSegments(log_dir);
  // The segment holding `after` (its record is skipped) or, if that was rotated away, the next.
  size_t first = 0;
  bool skip_first_line = false;
  // A gap marker takes the time of the first record after it.
  size_t gap_index = std::string::npos;
  if (after >= 0) {
    first = segments.size();
    for (size_t i = 0; i < segments.size(); ++i) {
      std::error_code ec;
      int64_t end = segments[i].start + static_cast<int64_t>(fs::file_size(segments[i].path, ec));
      if (after < segments[i].start) {
        first = i;
        if (i > 0 && after < segments[i].start - 1) {
          // `after` lies in a deleted range: say how much is gone, then resume.
          std::error_code ec2;
          int64_t prev_end = segments[i - 1].start +
                             static_cast<int64_t>(fs::file_size(segments[i - 1].path, ec2));
          LogLine gap;
          gap.offset = segments[i].start - 1;
          gap.is_stderr = true;
          gap.text = "[trainyard] " +
                     std::to_string(segments[i].start - std::max(prev_end, after)) +
                     " bytes of log were rotated away";
          out.push_back(std::move(gap));
          gap_index = out.size() - 1;
        }
        break;
      }
      if (after < end) {
        first = i;
        skip_first_line = true;
        break;
      }
    }
  }
  for (size_t i = first; i < segments.size() && static_cast<int>(out.size()) < limit; ++i) {
    if (i > first) {
      std::error_code ec;
      int64_t prev_end =
          segments[i - 1].start + static_cast<int64_t>(fs::file_size(segments[i - 1].path, ec));
      if (!ec && prev_end < segments[i].start) {
        LogLine gap;
        gap.offset = segments[i].start - 1;
        gap.is_stderr = true;
        gap.text = "[trainyard] " + std::to_string(segments[i].start - prev_end) +
                   " bytes of log were rotated away";
        out.push_back(std::move(gap));
        gap_index = out.size() - 1;
        if (static_cast<int>(out.size()) >= limit) break;
      }
    }
    std::ifstream in(segments[i].path, std::ios::binary);
    if (!in) continue;  // rotated away between listing and opening
    int64_t pos = 0;
    if (skip_first_line) {
      pos = after - segments[i].start;
      in.seekg(pos);
    }
    std::string line;
    bool skip = skip_first_line;
    skip_first_line = false;
    while (static_cast<int>(out.size()) < limit && std::getline(in, line)) {
      int64_t offset = segments[i].start + pos;
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
      if (gap_index != std::string::npos) out[gap_index].time = ll.time;
      gap_index = std::string::npos;
      out.push_back(std::move(ll));
    }
  }
  return out;
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
