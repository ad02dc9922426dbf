// Admin pauses of single projects (docs/operations.md "Draining for maintenance"), kept across
// restarts. The server-wide drain is the same pause with the server as its scope; it keeps its
// own marker file (server/data_dir.h) so that data dirs drained by older releases stay drained.
//
// While project P is paused, JobController holds P's new and held jobs QUEUED with
//   held: project P is paused by an admin since <RFC 3339>; it starts once an admin resumes it
//   (trainyard admin resume --project P)
// in their state history (PauseReason); P's running jobs run on, other projects are unaffected.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/time.h"

namespace trainyard::controller {

// The scope of a pause that covers the whole server (admin_routes.h: /v1/admin:drain).
inline constexpr char kServerScope[] = "*";

// The held-step text of a job of `project` while `scope` is paused since `since`: the server's
// wording for kServerScope, the project's otherwise.
std::string PauseReason(const std::string& scope, TimePoint since);

// The paused projects and since when. Thread-safe. With a file, every change is written to it
// atomically (temp, fsync, rename: common/file_util.h) before it takes effect, and Load reads it
// at start. The file is {"projects": {"P": "<RFC 3339>"}}.
class PauseBook {
 public:
  explicit PauseBook(std::filesystem::path file = {});

  // Reads the file (a missing file = nothing paused). INVALID_ARGUMENT naming the file and the
  // project for a malformed one; I/O errors as they come.
  Status Load();
  // Pauses `project` since `since`, or with nullopt resumes it. A project already paused keeps
  // its first time. Errors: the file could not be written (nothing changes then).
  Status Set(const std::string& project, std::optional<TimePoint> since);
  std::map<std::string, TimePoint> All() const;

 private:
  const std::filesystem::path file_;
  mutable std::mutex mu_;
  std::map<std::string, TimePoint> paused_;
};

}  // namespace trainyard::controller
