#include "controller/job_files.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "executor/job_dir_layout.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

std::string MarkerPath(const std::string& id) { return id + "/" + executor::kDeletedMarkerName; }

// Small: a tombstone is four short fields.
constexpr size_t kMaxTombstoneBytes = 64 << 10;

}  // namespace

Status WriteTombstone(const BeneathDir& jobs, const std::string& id, const JobTombstone& t) {
  const json j = {{"name", t.name},
                  {"project", t.project},
                  {"endTimeUs", ToUnixMicros(t.end_time)},
                  {"deleteTimeUs", ToUnixMicros(t.delete_time)}};
  return jobs.ReplaceFile(MarkerPath(id), j.dump() + "\n", /*durable=*/true, 0600);
}

StatusOr<std::optional<JobTombstone>> ReadTombstone(const BeneathDir& jobs, const std::string& id) {
  TY_RETURN_IF_ERROR(jobs.Stat(id).status());
  auto text = jobs.ReadFile(MarkerPath(id), kMaxTombstoneBytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::optional<JobTombstone>();
    return text.status();
  }
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j["name"].is_string() || !j["project"].is_string() ||
      !j["endTimeUs"].is_number_integer() || !j["deleteTimeUs"].is_number_integer()) {
    return DataLossError("job " + id + ": " + executor::kDeletedMarkerName +
                         " is not a tombstone (name, project, endTimeUs, deleteTimeUs)");
  }
  JobTombstone t;
  t.name = j["name"].get<std::string>();
  t.project = j["project"].get<std::string>();
  t.end_time = FromUnixMicros(j["endTimeUs"].get<int64_t>());
  t.delete_time = FromUnixMicros(j["deleteTimeUs"].get<int64_t>());
  return std::optional<JobTombstone>(std::move(t));
}

uint64_t TreeBytes(const BeneathDir& dir, const std::string& rel) {
  auto st = dir.Stat(rel);
  if (!st.ok()) return 0;
  uint64_t bytes = static_cast<uint64_t>(st->st_blocks) * 512;
  if (!S_ISDIR(st->st_mode)) return bytes;
  auto entries = dir.List(rel);
  if (!entries.ok()) return bytes;
  for (const BeneathDir::Entry& e : *entries) {
    bytes += TreeBytes(dir, rel.empty() ? e.name : rel + "/" + e.name);
  }
  return bytes;
}

StatusOr<Removed> RemoveJobWorkFiles(const BeneathDir& jobs, const std::string& id, bool dry_run) {
  TY_ASSIGN_OR_RETURN(std::vector<BeneathDir::Entry> entries, jobs.List(id));
  Removed removed;
  for (const BeneathDir::Entry& e : entries) {
    if (e.name == executor::kJobLogDirName || e.name == executor::kDeletedMarkerName) continue;
    const std::string rel = id + "/" + e.name;
    removed.bytes += TreeBytes(jobs, rel);
    ++removed.entries;
    if (!dry_run) TY_RETURN_IF_ERROR(jobs.RemoveAll(rel));
  }
  return removed;
}

}  // namespace trainyard::controller
