#include "store/sqlite_job_store.h"

#include <sqlite3.h>

#include "common/time.h"
#include "spec/custom_job_json.h"
#include "sqlite/schema.h"
#include "sqlite/sqlite.h"
#include "store/jobs_db_schema.h"
#include "store/list_filter.h"
#include "store/page_token.h"
#include "store/sqlite_list_page.h"

namespace trainyard::store {
namespace {

int64_t CreateUs(const spec::CustomJob& j) {
  return j.create_time ? ToUnixMicros(*j.create_time) : 0;
}
int64_t UpdateUs(const spec::CustomJob& j) {
  return j.update_time ? ToUnixMicros(*j.update_time) : CreateUs(j);
}

StatusOr<spec::CustomJob> Decode(const std::string& name, const std::string& json_text) {
  auto job = spec::ParseCustomJob(json_text, spec::DecodeMode::kStored);
  if (!job.ok()) {
    return DataLossError("stored job " + name + " is unreadable: " + job.status().message());
  }
  return job;
}

}  // namespace

StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::filesystem::path& path,
                                                               Sync sync) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError("cannot open job database " + path.string() + ": " + msg);
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(db));
  sqlite3_busy_timeout(db, 5000);
  // journal_mode returns a row, so it goes through exec as well; NOTADB surfaces here.
  if (Status s = store->Exec("PRAGMA journal_mode=WAL"); !s.ok()) {
    return DataLossError(path.string() + " is not a Trainyard job database: " + s.message());
  }
  TY_RETURN_IF_ERROR(
      store->Exec(sync == Sync::kFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  TY_RETURN_IF_ERROR(sqlite::Migrate(db, JobsDbSchema(), path.string()));
  return store;
}

SqliteJobStore::~SqliteJobStore() { sqlite3_close_v2(db_); }

Status SqliteJobStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return UnavailableError(std::string("sqlite: ") + msg);
  }
  return Status::Ok();
}

Status SqliteJobStore::WriteLabelsLocked(const std::string& name,
                                         const std::map<std::string, std::string>& labels) {
  sqlite::Stmt del(db_, "DELETE FROM job_labels WHERE name = ?");
  TY_RETURN_IF_ERROR(del.Prepared());
  del.Bind(1, name);
  if (del.Step() != SQLITE_DONE) return del.Error("delete labels of " + name);
  if (labels.empty()) return Status::Ok();
  sqlite::Stmt ins(db_, "INSERT INTO job_labels(name, key, value) VALUES (?, ?, ?)");
  TY_RETURN_IF_ERROR(ins.Prepared());
  for (const auto& [k, v] : labels) {
    ins.Reset();
    ins.Bind(1, name);
    ins.Bind(2, k);
    ins.Bind(3, v);
    if (ins.Step() != SQLITE_DONE) return ins.Error("insert label of " + name);
  }
  return Status::Ok();
}

Status SqliteJobStore::InsertLocked(const spec::CustomJob& job) {
  std::string parent, id;
  TY_RETURN_IF_ERROR(SplitJobName(job.name, &parent, &id));
  if (!job.create_time) return InvalidArgumentError("job " + job.name + " has no create_time");
  sqlite::Stmt ins(
      db_,
      "INSERT INTO jobs(name, parent, state, display_name, create_us, update_us, json) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)");
  TY_RETURN_IF_ERROR(ins.Prepared());
  ins.Bind(1, job.name);
  ins.Bind(2, parent);
  ins.Bind(3, static_cast<int64_t>(job.state));
  ins.Bind(4, job.display_name);
  ins.Bind(5, CreateUs(job));
  ins.Bind(6, UpdateUs(job));
  ins.Bind(7, spec::CustomJobToJson(job).dump());
  int rc = ins.Step();
  if (rc == SQLITE_CONSTRAINT)
    return AlreadyExistsError("CustomJob " + job.name + " already exists");
  if (rc != SQLITE_DONE) return ins.Error("insert " + job.name);
  return WriteLabelsLocked(job.name, job.labels);
}

Status SqliteJobStore::Create(const spec::CustomJob& job) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_RETURN_IF_ERROR(InsertLocked(job));
  return tx.Commit();
}

Status SqliteJobStore::CreateBatch(const std::vector<spec::CustomJob>& jobs) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  for (const auto& job : jobs) TY_RETURN_IF_ERROR(InsertLocked(job));
  return tx.Commit();
}

StatusOr<spec::CustomJob> SqliteJobStore::GetLocked(const std::string& name) {
  sqlite::Stmt q(db_, "SELECT json FROM jobs WHERE name = ?");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return NotFoundError("CustomJob " + name + " not found");
  if (rc != SQLITE_ROW) return q.Error("read " + name);
  return Decode(name, q.Text(0));
}

StatusOr<spec::CustomJob> SqliteJobStore::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  return GetLocked(name);
}

namespace {

// `text` as a literal inside a GLOB pattern: its metacharacters in brackets.
std::string GlobLiteral(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[') {
      out += '[';
      out += c;
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

// The literal prefix of the GLOB ("projects/P/locations/") lets SQLite walk the primary-key
// index over the project's jobs only.
StatusOr<spec::CustomJob> SqliteJobStore::FindInProject(const std::string& project,
                                                        const std::string& id) {
  std::lock_guard lock(mu_);
  sqlite::Stmt q(db_, "SELECT name, json FROM jobs WHERE name GLOB ?");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, "projects/" + GlobLiteral(project) + "/locations/*/customJobs/" + GlobLiteral(id));
  while (true) {
    int rc = q.Step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return q.Error("find " + id + " in project " + project);
    std::string name = q.Text(0);
    const size_t location_start =
        std::string("projects/").size() + project.size() + std::string("/locations/").size();
    if (name.find('/', location_start) == name.size() - id.size() - 12) {  // "/customJobs/"
      return Decode(name, q.Text(1));
    }
  }
  return NotFoundError("project " + project + " has no CustomJob " + id);
}

StatusOr<spec::CustomJob> SqliteJobStore::Mutate(
    const std::string& name, const std::function<Status(spec::CustomJob&)>& mutate) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_ASSIGN_OR_RETURN(spec::CustomJob job, GetLocked(name));
  const auto old_labels = job.labels;
  TY_RETURN_IF_ERROR(mutate(job));
  if (job.name != name) return InternalError("Mutate must not rename " + name);
  sqlite::Stmt up(
      db_, "UPDATE jobs SET state = ?, display_name = ?, update_us = ?, json = ? WHERE name = ?");
  TY_RETURN_IF_ERROR(up.Prepared());
  up.Bind(1, static_cast<int64_t>(job.state));
  up.Bind(2, job.display_name);
  up.Bind(3, UpdateUs(job));
  up.Bind(4, spec::CustomJobToJson(job).dump());
  up.Bind(5, name);
  if (up.Step() != SQLITE_DONE) return up.Error("update " + name);
  if (job.labels != old_labels) TY_RETURN_IF_ERROR(WriteLabelsLocked(job.name, job.labels));
  TY_RETURN_IF_ERROR(tx.Commit());
  return job;
}

Status SqliteJobStore::Delete(const std::string& name) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  sqlite::Stmt del(db_, "DELETE FROM jobs WHERE name = ?");
  TY_RETURN_IF_ERROR(del.Prepared());
  del.Bind(1, name);
  if (del.Step() != SQLITE_DONE) return del.Error("delete " + name);
  if (sqlite3_changes(db_) == 0) return NotFoundError("CustomJob " + name + " not found");
  sqlite::Stmt labels(db_, "DELETE FROM job_labels WHERE name = ?");
  TY_RETURN_IF_ERROR(labels.Prepared());
  labels.Bind(1, name);
  if (labels.Step() != SQLITE_DONE) return labels.Error("delete labels of " + name);
  return tx.Commit();
}

StatusOr<ListResult> SqliteJobStore::List(const ListQuery& query) {
  std::lock_guard lock(mu_);
  TY_ASSIGN_OR_RETURN(
      Page<spec::CustomJob> page,
      ListPage<spec::CustomJob>(db_, query, "SELECT name, json FROM jobs", [](sqlite::Stmt& row) {
        return Decode(row.Text(0), row.Text(1));
      }));
  return ListResult{std::move(page.jobs), std::move(page.next_page_token)};
}

StatusOr<std::vector<spec::CustomJob>> SqliteJobStore::ListUnfinished() {
  std::string sql = "SELECT name, json FROM jobs WHERE state NOT IN (";
  bool first = true;
  for (int s = 0; s <= static_cast<int>(spec::JobState::kPartiallySucceeded); ++s) {
    if (!spec::IsTerminal(static_cast<spec::JobState>(s))) continue;
    sql += (first ? "" : ", ") + std::to_string(s);
    first = false;
  }
  sql += ") ORDER BY create_us ASC, name ASC";
  std::lock_guard lock(mu_);
  sqlite::Stmt q(db_, sql);
  TY_RETURN_IF_ERROR(q.Prepared());
  std::vector<spec::CustomJob> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    TY_ASSIGN_OR_RETURN(spec::CustomJob job, Decode(q.Text(0), q.Text(1)));
    out.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return q.Error("list unfinished jobs");
  return out;
}

StatusOr<std::vector<ParentCount>> SqliteJobStore::CountJobsByParent() {
  std::lock_guard lock(mu_);
  return CountRowsByParent(db_, "jobs");
}

StatusOr<std::vector<StateCount>> SqliteJobStore::CountJobsByState() {
  std::lock_guard lock(mu_);
  return CountRowsByState(db_, "jobs");
}

}  // namespace trainyard::store
