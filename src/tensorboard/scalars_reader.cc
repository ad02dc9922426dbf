#include "tensorboard/scalars_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <system_error>
#include <utility>

#include "tensorboard/event_decoder.h"
#include "tensorboard/tfrecord.h"

namespace trainyard::tensorboard {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCursorVersion = "tb1:";
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kBase64[(buffer << (6 - bits)) & 0x3F]);
  return out;
}

bool Base64UrlDecode(std::string_view in, std::string* out) {
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::find(kBase64, kBase64 + 64, c);
    if (p == kBase64 + 64) return false;
    buffer = (buffer << 6) | static_cast<uint32_t>(p - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return true;
}

using Offsets = std::map<std::string, uint64_t>;  // event file (relative path) -> bytes read

// The cursor is "tb1:" + base64url of "offset\tpath\n" lines: opaque to clients, URL-safe.
std::string EncodeCursor(const Offsets& offsets) {
  std::string text;
  for (const auto& [path, offset] : offsets) text += std::to_string(offset) + "\t" + path + "\n";
  return std::string(kCursorVersion) + Base64UrlEncode(text);
}

StatusOr<Offsets> DecodeCursor(std::string_view cursor) {
  Offsets offsets;
  if (cursor.empty()) return offsets;
  const Status bad = InvalidArgumentError(
      "after: not a cursor returned by :scalars (pass its nextCursor verbatim, or omit it to "
      "read from the start)");
  if (cursor.substr(0, kCursorVersion.size()) != kCursorVersion) return bad;
  std::string text;
  if (!Base64UrlDecode(cursor.substr(kCursorVersion.size()), &text)) return bad;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t tab = text.find('\t', pos);
    const size_t nl = text.find('\n', pos);
    if (tab == std::string::npos || nl == std::string::npos || tab > nl || tab == pos) return bad;
    uint64_t offset = 0;
    for (size_t i = pos; i < tab; ++i) {
      if (text[i] < '0' || text[i] > '9') return bad;
      offset = offset * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    offsets[text.substr(tab + 1, nl - tab - 1)] = offset;
    pos = nl + 1;
  }
  return offsets;
}

// Adds the event files beneath `dir` (named `prefix` + their relative names) to `files`.
void ListEventFilesIn(const BeneathDir& dir, const std::string& prefix, int depth,
                      const ScalarsReadOptions& options, std::vector<std::string>* files) {
  auto entries = dir.List();
  if (!entries.ok()) return;  // unreadable or gone meanwhile: as if empty
  for (const BeneathDir::Entry& e : *entries) {
    if (files->size() >= options.max_files) return;
    if (e.type == S_IFREG && e.name.find("tfevents") != std::string::npos) {
      files->push_back(prefix + e.name);
    } else if (e.type == S_IFDIR && depth < options.max_depth) {
      auto sub = dir.OpenDir(e.name);
      if (sub.ok()) ListEventFilesIn(*sub, prefix + e.name + "/", depth + 1, options, files);
    }
  }
}

// Event files under `dir`, as paths relative to it, sorted (TensorFlow names them by creation
// time, so sorted is also oldest first within a run).
std::vector<std::string> ListEventFiles(const BeneathDir& dir, const ScalarsReadOptions& options) {
  std::vector<std::string> files;
  ListEventFilesIn(dir, "", 0, options, &files);
  std::sort(files.begin(), files.end());
  return files;
}

StatusOr<std::string> ReadRange(int fd, uint64_t offset, uint64_t length, const fs::path& path) {
  std::string data(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, data.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + path.string());
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  data.resize(done);
  return data;
}

struct FileRead {
  std::vector<ScalarEvent> events;
  uint64_t next_offset = 0;
  uint64_t bytes_read = 0;
  bool more = false;  // stopped by the byte budget, not by the end of the file
};

// Reads the records of one event file from `offset`, at most `budget` bytes (more when the first
// record alone is larger, up to max_record_bytes).
StatusOr<FileRead> ReadEventFile(const BeneathDir& dir, const std::string& name, uint64_t offset,
                                 uint64_t budget, const ScalarsReadOptions& options,
                                 std::vector<std::string>* warnings) {
  FileRead out;
  out.next_offset = offset;
  const fs::path path = name;  // in messages: relative to the log dir
  auto opened = dir.OpenRegular(name);
  if (!opened.ok()) {
    warnings->push_back(name + ": cannot open (" + opened.status().message() + ")");
    return out;
  }
  const int fd = opened->get();
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) return IoError("cannot read " + path.string());
  const auto size = static_cast<uint64_t>(end);
  if (size < offset) {  // replaced or truncated: what we had read is gone
    warnings->push_back(name + ": file shrank below the cursor; read again from the start");
    offset = 0;
  }
  uint64_t want = std::min(size - offset, budget);
  TY_ASSIGN_OR_RETURN(std::string data, ReadRange(fd, offset, want, path));
  TfRecordScan scan = ScanTfRecords(data);
  if (scan.consumed == 0 && scan.pending_record_bytes > data.size() &&
      scan.pending_record_bytes <= options.max_record_bytes &&
      size - offset >= scan.pending_record_bytes) {
    TY_ASSIGN_OR_RETURN(data, ReadRange(fd, offset, scan.pending_record_bytes, path));
    scan = ScanTfRecords(data);
  }
  if (scan.consumed == 0 && scan.pending_record_bytes > options.max_record_bytes) {
    scan.error = "record at byte " + std::to_string(offset) + " is " +
                 std::to_string(scan.pending_record_bytes) + " bytes, above the limit";
  }
  int bad_events = 0;
  for (std::string_view payload : scan.payloads) {
    if (!DecodeEventScalars(payload, &out.events).ok()) ++bad_events;
  }
  if (scan.corrupt_records > 0) {
    warnings->push_back(name + ": skipped " + std::to_string(scan.corrupt_records) +
                        " record(s) with a bad CRC");
  }
  if (bad_events > 0) {
    warnings->push_back(name + ": skipped " + std::to_string(bad_events) +
                        " record(s) that are not valid Event protos");
  }
  if (!scan.error.empty()) {
    warnings->push_back(name + ": " + scan.error + "; the rest of the file is not read");
  }
  out.bytes_read = data.size();
  out.next_offset = offset + scan.consumed;
  out.more = scan.error.empty() && want < size - offset;
  return out;
}

std::string RunOf(const std::string& relative_file) {
  const std::string parent = fs::path(relative_file).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

StatusOr<ScalarsPage> ReadScalars(const fs::path& log_dir, std::string_view cursor,
                                  const ScalarsReadOptions& options) {
  TY_ASSIGN_OR_RETURN(Offsets offsets, DecodeCursor(cursor));
  auto dir = BeneathDir::Open(log_dir);
  if (!dir.ok()) {
    ScalarsPage page;
    page.next_cursor = EncodeCursor(offsets);
    return page;
  }
  return ReadScalars(*dir, "", cursor, options);
}

StatusOr<ScalarsPage> ReadScalars(const BeneathDir& root, const std::string& rel,
                                  std::string_view cursor, const ScalarsReadOptions& options) {
  TY_ASSIGN_OR_RETURN(Offsets offsets, DecodeCursor(cursor));
  ScalarsPage page;
  auto log_dir = root.OpenDir(rel);
  if (!log_dir.ok()) {
    page.next_cursor = EncodeCursor(offsets);
    return page;
  }
  const std::vector<std::string> files = ListEventFiles(*log_dir, options);
  std::map<std::pair<std::string, std::string>, std::vector<ScalarPoint>> series;
  uint64_t budget = options.max_bytes;
  for (const std::string& name : files) {
    if (budget == 0) {
      page.more = true;
      break;
    }
    TY_ASSIGN_OR_RETURN(FileRead read, ReadEventFile(*log_dir, name, offsets[name], budget, options,
                                                     &page.warnings));
    offsets[name] = read.next_offset;
    budget -= std::min(budget, read.bytes_read);
    page.more = page.more || read.more;
    const std::string run = RunOf(name);
    for (ScalarEvent& e : read.events) {
      series[{run, std::move(e.tag)}].push_back({e.step, e.wall_time, e.value});
    }
  }
  for (auto& [key, points] : series) {
    page.series.push_back({key.first, key.second, std::move(points)});
  }
  page.next_cursor = EncodeCursor(offsets);
  return page;
}

}  // namespace trainyard::tensorboard
