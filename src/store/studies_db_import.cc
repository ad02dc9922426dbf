// SqliteJobStore::ImportStudiesDb: moves a legacy <data-dir>/studies.db into tuning_jobs.
//
// A legacy row is (name, parent, create_us, data) where data is
//   {"request": <HyperparameterTuningJob request JSON>, "labels": {...}, "updateUs": N,
//    "endUs": N, "runner": <StudyRunner SaveState>, "trials": {<id>: {job, logCursor,
//    collector}}, "restoreError": "..."}
// The request, labels and times become the typed resource; runner, trials and restoreError are
// exactly the TuningJobController's runtime state, so they move over unchanged.
#include <sqlite3.h>

#include <filesystem>

#include "common/time.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "sqlite/sqlite.h"
#include "store/sqlite_job_store.h"

namespace trainyard::store {
namespace {

using nlohmann::json;

TuningJobRecord FromLegacyStudy(const std::string& name, int64_t create_us,
                                const std::string& data_text) {
  TuningJobRecord r;
  json data = json::parse(data_text, nullptr, false);
  if (!data.is_object()) data = json::object();
  const json request = data.value("request", json::object());
  auto job = spec::HyperparameterTuningJobFromJson(request, spec::DecodeMode::kRequest);
  if (job.ok()) {
    r.job = std::move(*job);
  } else {
    r.job.display_name = request.value("displayName", "");
    r.runtime["restoreError"] =
        "the stored request of this study could not be read: " + job.status().message();
  }
  r.job.name = name;
  r.job.create_time = FromUnixMicros(create_us);
  r.job.update_time = FromUnixMicros(data.value("updateUs", create_us));
  if (data.contains("endUs")) r.job.end_time = FromUnixMicros(data.value("endUs", 0LL));
  const json labels = data.value("labels", json::object());
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string()) r.job.labels[k] = v.get<std::string>();
  }
  for (const char* key : {"runner", "trials", "restoreError"}) {
    if (data.contains(key) && !r.runtime.contains(key)) r.runtime[key] = data[key];
  }
  return r;
}

// Reads every study of the legacy file. The file is opened read-write (never created) so that a
// WAL left by a crashed server is recovered into what we read.
StatusOr<std::vector<TuningJobRecord>> ReadLegacyStudies(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError("cannot open " + path.string() + ": " + msg);
  }
  std::vector<TuningJobRecord> out;
  Status status = Status::Ok();
  {
    sqlite::Stmt q(db, "SELECT name, create_us, data FROM studies ORDER BY create_us, name");
    if (!q.Prepared().ok()) {
      status = DataLossError(path.string() + " is not a Trainyard studies database (" +
                             sqlite3_errmsg(db) + "); move it away to start without it");
    } else {
      int rc;
      while ((rc = q.Step()) == SQLITE_ROW) {
        out.push_back(FromLegacyStudy(q.Text(0), q.Int(1), q.Text(2)));
      }
      if (rc != SQLITE_DONE) status = q.Error("read " + path.string());
    }
  }
  sqlite3_close(db);
  if (!status.ok()) return status;
  return out;
}

}  // namespace

Status SqliteJobStore::ImportStudiesDb(const std::filesystem::path& studies_db) {
  std::error_code ec;
  if (!std::filesystem::exists(studies_db, ec)) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::vector<TuningJobRecord> records, ReadLegacyStudies(studies_db));
  {
    std::lock_guard lock(mu_);
    sqlite::Transaction tx(db_);
    TY_RETURN_IF_ERROR(tx.Began());
    for (const auto& r : records) {
      Status s = InsertTuningJobLocked(r, /*if_absent=*/true);
      if (!s.ok()) {
        return Status(s.code(), "importing " + studies_db.string() + ": " + s.message());
      }
    }
    TY_RETURN_IF_ERROR(tx.Commit());
  }
  // After the commit: a crash before the rename only repeats the (idempotent) import.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::path from = studies_db.string() + suffix;
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::rename(from, studies_db.string() + ".imported" + suffix, ec);
    if (ec) {
      return IoError("imported " + studies_db.string() + " but cannot rename " + from.string() +
                     ": " + ec.message() + "; remove it by hand");
    }
  }
  return Status::Ok();
}

}  // namespace trainyard::store
