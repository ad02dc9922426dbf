#include "server/backup_manifest.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "sqlite/schema.h"
#include "sqlite/sqlite.h"

namespace trainyard::server {
namespace {

using nlohmann::json;

json SkippedToJson(const SkippedEntry& s) {
  json j = {{"path", s.path}, {"kind", s.kind}};
  if (!s.target.empty()) j["target"] = s.target;
  return j;
}

Status Bad(const std::string& where, const std::string& what) {
  return FailedPreconditionError(where + " is not a Trainyard backup manifest: " + what +
                                 "; was the backup written by `trainyard admin backup`?");
}

StatusOr<BackupDatabase> DatabaseFromJson(const json& j, const std::string& where) {
  BackupDatabase d;
  if (!j.is_object() || !j.contains("file") || !j["file"].is_string()) {
    return Bad(where, "a databases[] entry has no \"file\"");
  }
  d.file = j["file"].get<std::string>();
  if (d.file.find('/') != std::string::npos || !d.file.ends_with(".db")) {
    return Bad(where, "databases[].file '" + d.file + "' is not a database name like jobs.db");
  }
  d.schema_version = j.value("schemaVersion", 0);
  d.bytes = j.value("bytes", int64_t{0});
  const json rows = j.value("rows", json::object());  // items() must not outlive it
  for (const auto& [table, count] : rows.items()) {
    d.rows[table] = count.is_number_integer() ? count.get<int64_t>() : 0;
  }
  return d;
}

}  // namespace

std::string EncodeManifest(const BackupManifest& m) {
  json databases = json::array();
  for (const BackupDatabase& d : m.databases) {
    databases.push_back({{"file", d.file},
                         {"schemaVersion", d.schema_version},
                         {"bytes", d.bytes},
                         {"rows", d.rows}});
  }
  json skipped = json::array();
  for (const SkippedEntry& s : m.files.skipped) skipped.push_back(SkippedToJson(s));
  const json j = {{"format", kManifestFormat},
                  {"formatVersion", kManifestFormatVersion},
                  {"trainyardVersion", m.trainyard_version},
                  {"createTime", m.create_time},
                  {"dataDir", m.data_dir},
                  {"databases", databases},
                  {"files", {{"count", m.files.files}, {"bytes", m.files.bytes}}},
                  {"skipped", skipped}};
  return j.dump(2) + "\n";
}

StatusOr<BackupManifest> DecodeManifest(const std::string& text, const std::string& where) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return Bad(where, "it is not a JSON object");
  if (j.value("format", "") != kManifestFormat)
    return Bad(where, "\"format\" is not " + std::string(kManifestFormat));
  const int version = j.value("formatVersion", 0);
  if (version != kManifestFormatVersion) {
    return FailedPreconditionError(
        where + " has formatVersion " + std::to_string(version) + "; this trainyard reads " +
        std::to_string(kManifestFormatVersion) + ": restore it with the trainyard that wrote it (" +
        j.value("trainyardVersion", "unknown") + ")");
  }
  BackupManifest m;
  m.trainyard_version = j.value("trainyardVersion", "");
  m.create_time = j.value("createTime", "");
  m.data_dir = j.value("dataDir", "");
  if (!j.contains("databases") || !j["databases"].is_array() || j["databases"].empty()) {
    return Bad(where, "it lists no databases");
  }
  for (const json& d : j["databases"]) {
    TY_ASSIGN_OR_RETURN(BackupDatabase db, DatabaseFromJson(d, where));
    m.databases.push_back(std::move(db));
  }
  const json files = j.value("files", json::object());
  m.files.files = files.value("count", int64_t{0});
  m.files.bytes = files.value("bytes", int64_t{0});
  for (const json& s : j.value("skipped", json::array())) {
    if (!s.is_object()) continue;
    m.files.skipped.push_back({s.value("path", ""), s.value("kind", ""), s.value("target", "")});
  }
  return m;
}

StatusOr<BackupDatabase> ReadDatabaseFacts(const std::filesystem::path& path) {
  BackupDatabase d;
  d.file = path.filename().string();
  std::error_code ec;
  d.bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) return UnavailableError("cannot read the size of " + path.string() + ": " + ec.message());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError("cannot open " + path.string() + ": " + msg);
  }
  Status s = Status::Ok();
  if (auto version = sqlite::SchemaVersion(db); version.ok()) {
    d.schema_version = *version;
  } else {
    s = version.status();
  }
  std::vector<std::string> tables;
  if (s.ok()) {
    sqlite::Stmt q(db,
                   "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                   "'sqlite_%' ORDER BY name");
    while (q.Step() == SQLITE_ROW) tables.push_back(q.Text(0));
  }
  for (const std::string& table : tables) {
    sqlite::Stmt count(db, "SELECT COUNT(*) FROM \"" + table + "\"");
    if (count.Step() != SQLITE_ROW) {
      s = count.Error("count the rows of " + table + " in " + path.string());
      break;
    }
    d.rows[table] = count.Int(0);
  }
  sqlite3_close(db);
  if (!s.ok()) return UnavailableError(path.string() + ": " + s.message());
  return d;
}

}  // namespace trainyard::server
