#include "auth/audit_log.h"

#include <ctime>

#include "common/time.h"

namespace trainyard::auth {
namespace {

std::string Rfc3339(TimePoint t) {
  const int64_t us = ToUnixMicros(t);
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(us % 1000000));
  return buf;
}

}  // namespace

StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::filesystem::path& db_path) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path));
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(db)));
}

Status AuditLog::Append(const AuditEntry& e) {
  sqlite::Stmt s(db_->get(),
                 "INSERT INTO audit(time_us, token_id, project, method, path, access, status, "
                 "remote_addr, user_agent, resource) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!s.Prepared().ok()) return db_->Error("prepare audit insert");
  s.Bind(1, ToUnixMicros(e.time));
  s.Bind(2, e.token_id);
  s.Bind(3, e.project);
  s.Bind(4, e.method);
  s.Bind(5, e.path);
  s.Bind(6, e.access);
  s.Bind(7, static_cast<int64_t>(e.http_status));
  s.Bind(8, e.remote_addr);
  s.Bind(9, e.user_agent);
  s.Bind(10, e.resource);
  if (s.Step() != SQLITE_DONE) return db_->Error("append to the audit log");
  return Status::Ok();
}

StatusOr<std::vector<AuditEntry>> AuditLog::Query(const AuditQuery& q) {
  sqlite::Stmt s(db_->get(),
                 "SELECT seq, time_us, token_id, project, method, path, access, status, "
                 "remote_addr, user_agent, resource FROM audit "
                 "WHERE seq > ? AND (? = '' OR project = ?) ORDER BY seq LIMIT ?");
  if (!s.Prepared().ok()) return db_->Error("prepare audit query");
  s.Bind(1, q.after_seq);
  s.Bind(2, q.project);
  s.Bind(3, q.project);
  s.Bind(4, static_cast<int64_t>(q.limit));
  std::vector<AuditEntry> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    AuditEntry e;
    e.seq = s.Int(0);
    e.time = TimePoint(std::chrono::microseconds(s.Int(1)));
    e.token_id = s.Text(2);
    e.project = s.Text(3);
    e.method = s.Text(4);
    e.path = s.Text(5);
    e.access = s.Text(6);
    e.http_status = static_cast<int>(s.Int(7));
    e.remote_addr = s.Text(8);
    e.user_agent = s.Text(9);
    e.resource = s.Text(10);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return db_->Error("query the audit log");
  return out;
}

StatusOr<int64_t> AuditLog::Expire(TimePoint cutoff, bool dry_run) {
  if (dry_run) {
    sqlite::Stmt s(db_->get(), "SELECT count(*) FROM audit WHERE time_us < ?");
    if (!s.Prepared().ok()) return db_->Error("prepare audit count");
    s.Bind(1, ToUnixMicros(cutoff));
    if (s.Step() != SQLITE_ROW) return db_->Error("count expired audit entries");
    return s.Int(0);
  }
  // Rows are appended in time order, so the oldest seqs match first and each batch stops early.
  constexpr int64_t kBatch = 5000;
  int64_t total = 0;
  while (true) {
    sqlite::Stmt s(db_->get(),
                   "DELETE FROM audit WHERE seq IN (SELECT seq FROM audit WHERE time_us < ? "
                   "ORDER BY seq LIMIT ?)");
    if (!s.Prepared().ok()) return db_->Error("prepare audit expiry");
    s.Bind(1, ToUnixMicros(cutoff));
    s.Bind(2, kBatch);
    if (s.Step() != SQLITE_DONE) return db_->Error("expire audit entries");
    const int64_t n = sqlite3_changes(db_->get());
    total += n;
    if (n < kBatch) return total;
  }
}

nlohmann::json AuditEntryToJson(const AuditEntry& e) {
  nlohmann::json out = {{"seq", std::to_string(e.seq)}, {"time", Rfc3339(e.time)},
                        {"tokenId", e.token_id},        {"project", e.project},
                        {"method", e.method},           {"path", e.path},
                        {"access", e.access},           {"status", e.http_status}};
  if (!e.remote_addr.empty()) out["callerIp"] = e.remote_addr;
  if (!e.user_agent.empty()) out["userAgent"] = e.user_agent;
  if (!e.resource.empty()) out["resourceName"] = e.resource;
  return out;
}

}  // namespace trainyard::auth
