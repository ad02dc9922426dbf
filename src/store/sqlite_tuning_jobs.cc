// SqliteJobStore's TuningJobStore half: table tuning_jobs, labels in job_labels.
#include <sqlite3.h>

#include "common/time.h"
#include "spec/hyperparameter_tuning_job_json.h"
#include "spec/resource_name.h"
#include "sqlite/sqlite.h"
#include "store/list_filter.h"
#include "store/page_token.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_list_page.h"

namespace trainyard::store {
namespace {

int64_t CreateUs(const spec::HyperparameterTuningJob& j) {
  return j.create_time ? ToUnixMicros(*j.create_time) : 0;
}
int64_t UpdateUs(const spec::HyperparameterTuningJob& j) {
  return j.update_time ? ToUnixMicros(*j.update_time) : CreateUs(j);
}

StatusOr<TuningJobRecord> DecodeRecord(const std::string& name, const std::string& job_json,
                                       const std::string& runtime_json) {
  TuningJobRecord r;
  auto job = spec::ParseHyperparameterTuningJob(job_json, spec::DecodeMode::kStored);
  if (!job.ok()) {
    return DataLossError("stored hyperparameterTuningJob " + name +
                         " is unreadable: " + job.status().message());
  }
  r.job = std::move(*job);
  r.runtime = nlohmann::json::parse(runtime_json, nullptr, false);
  if (r.runtime.is_discarded() || !r.runtime.is_object()) {
    return DataLossError("stored hyperparameterTuningJob " + name +
                         ": its runtime state is not a JSON object");
  }
  return r;
}

// Binds (state, display_name, update_us, json, runtime) at positions first..first+4.
void BindMutable(sqlite::Stmt& s, int first, const TuningJobRecord& r) {
  s.Bind(first, static_cast<int64_t>(r.job.state));
  s.Bind(first + 1, r.job.display_name);
  s.Bind(first + 2, UpdateUs(r.job));
  s.Bind(first + 3, spec::HyperparameterTuningJobToJson(r.job).dump());
  s.Bind(first + 4, r.runtime.dump());
}

}  // namespace

Status SqliteJobStore::InsertTuningJobLocked(const TuningJobRecord& r, bool if_absent) {
  TY_ASSIGN_OR_RETURN(spec::ResourceName name,
                      spec::ResourceName::Parse(r.job.name, spec::kHyperparameterTuningJobs));
  const std::string parent = name.Parent();
  if (!r.job.create_time) {
    return InvalidArgumentError("hyperparameterTuningJob " + r.job.name + " has no create_time");
  }
  sqlite::Stmt ins(db_,
                   std::string("INSERT ") + (if_absent ? "OR IGNORE " : "") +
                       "INTO tuning_jobs(name, parent, create_us, state, display_name, update_us, "
                       "json, runtime) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  TY_RETURN_IF_ERROR(ins.Prepared());
  ins.Bind(1, r.job.name);
  ins.Bind(2, parent);
  ins.Bind(3, CreateUs(r.job));
  BindMutable(ins, 4, r);
  int rc = ins.Step();
  if (rc == SQLITE_CONSTRAINT) {
    return AlreadyExistsError("hyperparameterTuningJob " + r.job.name + " already exists");
  }
  if (rc != SQLITE_DONE) return ins.Error("insert " + r.job.name);
  if (if_absent && sqlite3_changes(db_) == 0) return Status::Ok();
  return WriteLabelsLocked(r.job.name, r.job.labels);
}

Status SqliteJobStore::CreateTuningJob(const TuningJobRecord& record) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_RETURN_IF_ERROR(InsertTuningJobLocked(record, /*if_absent=*/false));
  return tx.Commit();
}

Status SqliteJobStore::UpdateTuningJob(const TuningJobRecord& record) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  sqlite::Stmt up(db_,
                  "UPDATE tuning_jobs SET state = ?, display_name = ?, update_us = ?, json = ?, "
                  "runtime = ? WHERE name = ?");
  TY_RETURN_IF_ERROR(up.Prepared());
  BindMutable(up, 1, record);
  up.Bind(6, record.job.name);
  if (up.Step() != SQLITE_DONE) return up.Error("update " + record.job.name);
  if (sqlite3_changes(db_) == 0) {
    return NotFoundError("hyperparameterTuningJob " + record.job.name + " not found");
  }
  TY_RETURN_IF_ERROR(WriteLabelsLocked(record.job.name, record.job.labels));
  return tx.Commit();
}

StatusOr<TuningJobRecord> SqliteJobStore::GetTuningJob(const std::string& name) {
  std::lock_guard lock(mu_);
  sqlite::Stmt q(db_, "SELECT json, runtime FROM tuning_jobs WHERE name = ?");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return NotFoundError("hyperparameterTuningJob " + name + " not found");
  if (rc != SQLITE_ROW) return q.Error("read " + name);
  return DecodeRecord(name, q.Text(0), q.Text(1));
}

Status SqliteJobStore::DeleteTuningJob(const std::string& name) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  sqlite::Stmt del(db_, "DELETE FROM tuning_jobs WHERE name = ?");
  TY_RETURN_IF_ERROR(del.Prepared());
  del.Bind(1, name);
  if (del.Step() != SQLITE_DONE) return del.Error("delete " + name);
  if (sqlite3_changes(db_) == 0) {
    return NotFoundError("hyperparameterTuningJob " + name + " not found");
  }
  TY_RETURN_IF_ERROR(WriteLabelsLocked(name, {}));
  return tx.Commit();
}

StatusOr<TuningJobListResult> SqliteJobStore::ListTuningJobs(const ListQuery& query) {
  std::lock_guard lock(mu_);
  auto decode = [](sqlite::Stmt& row) -> StatusOr<spec::HyperparameterTuningJob> {
    TY_ASSIGN_OR_RETURN(TuningJobRecord r, DecodeRecord(row.Text(0), row.Text(1), row.Text(2)));
    return std::move(r.job);
  };
  TY_ASSIGN_OR_RETURN(
      Page<spec::HyperparameterTuningJob> page,
      ListPage<spec::HyperparameterTuningJob>(
          db_, query, "SELECT name, json, runtime FROM tuning_jobs AS jobs", decode));
  return TuningJobListResult{std::move(page.jobs), std::move(page.next_page_token)};
}

StatusOr<std::vector<TuningJobRecord>> SqliteJobStore::ListAllTuningJobs() {
  std::lock_guard lock(mu_);
  sqlite::Stmt q(db_,
                 "SELECT name, json, runtime FROM tuning_jobs ORDER BY create_us ASC, name ASC");
  TY_RETURN_IF_ERROR(q.Prepared());
  std::vector<TuningJobRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    TY_ASSIGN_OR_RETURN(TuningJobRecord r, DecodeRecord(q.Text(0), q.Text(1), q.Text(2)));
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return q.Error("list hyperparameterTuningJobs");
  return out;
}

StatusOr<std::vector<ParentCount>> SqliteJobStore::CountTuningJobsByParent() {
  std::lock_guard lock(mu_);
  return CountRowsByParent(db_, "tuning_jobs");
}

StatusOr<std::vector<StateCount>> SqliteJobStore::CountTuningJobsByState() {
  std::lock_guard lock(mu_);
  return CountRowsByState(db_, "tuning_jobs");
}

}  // namespace trainyard::store
