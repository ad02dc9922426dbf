// The audit log: one row per authorised or refused API request that needs a token — who (token
// id, "-" when the server runs without --auth or no genuine token was sent; a revoked or expired
// token's own id), from where (client address, User-Agent), what (method, path, the project and
// the access level the route declares, the resource a create made), when, and the result (HTTP
// status). Rows live in the `audit` table of <data-dir>/auth.db (schema: auth_db_schema.h), so
// they survive restarts; each Append is one committed INSERT.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "auth/sqlite_db.h"
#include "auth/token_store.h"

namespace trainyard::auth {

struct AuditEntry {
  int64_t seq = 0;  // assigned by Append, increasing
  TimePoint time;
  std::string token_id;
  std::string project;  // "" for routes outside a project
  std::string method;
  std::string path;
  std::string access;  // AccessName of the route
  int http_status = 0;
  std::string remote_addr;  // the client's IP address as the server saw it
  std::string user_agent;   // its User-Agent header, "" when it sent none
  std::string resource;     // the full name of the resource a create made, else ""
};

struct AuditQuery {
  std::string project;  // "" = every project
  int64_t after_seq = 0;
  int limit = 100;
};

// Thread-safe (one serialized SQLite connection).
class AuditLog {
 public:
  static StatusOr<std::unique_ptr<AuditLog>> Open(const std::filesystem::path& db_path);

  // Records `entry` (its seq is ignored). UNAVAILABLE when the database write fails.
  Status Append(const AuditEntry& entry);
  // Entries with seq > query.after_seq, oldest first, at most query.limit.
  StatusOr<std::vector<AuditEntry>> Query(const AuditQuery& query);
  // Deletes the entries older than `cutoff` (retention; server/retention.h), in batches of a few
  // thousand rows so a request's Append never waits long behind it; with `dry_run` only counts
  // them. Returns how many (would) go. UNAVAILABLE when the database fails (what was deleted
  // before stays deleted).
  StatusOr<int64_t> Expire(TimePoint cutoff, bool dry_run);

 private:
  explicit AuditLog(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::unique_ptr<SqliteDb> db_;
};

// {"seq": "12", "time": RFC 3339, "tokenId", "project", "method", "path", "access", "status",
//  "callerIp", "userAgent", "resourceName"}: the last three (Cloud Audit Logs' names) only when
// not empty (rows from before auth.db schema 3 have none).
nlohmann::json AuditEntryToJson(const AuditEntry& entry);

}  // namespace trainyard::auth
