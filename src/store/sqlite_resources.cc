// SqliteJobStore's ResourceStore: table `resources` (schema step 3, jobs_db_schema.cc), one
// row per record: the filter columns (kind, parent, state, display_name, create_us, update_us),
// `json` = {"labels": {...}, "body": <the resource>}, `runtime` = the controller's state; labels
// also in job_labels for filters, written in the same transaction. A family (a record and its
// children, e.g. a model's versions: kind = the child kind, parent = the record's name; index
// resources_by_kind_parent, schema step 4) is read and written in one transaction, rows that did
// not change left alone.
#include <sqlite3.h>

#include "common/time.h"
#include "sqlite/sqlite.h"
#include "store/sqlite_job_store.h"
#include "store/sqlite_list_page.h"

namespace trainyard::store {
namespace {

using nlohmann::json;

constexpr const char* kColumns =
    "name, kind, parent, state, display_name, create_us, update_us, json, runtime";

int64_t Us(const std::optional<std::chrono::system_clock::time_point>& t) {
  return t ? ToUnixMicros(*t) : 0;
}

// The record of the current row of a SELECT of kColumns.
StatusOr<ResourceRecord> DecodeRow(sqlite::Stmt& row) {
  ResourceRecord r;
  r.name = row.Text(0);
  r.parent = row.Text(2);
  r.state = row.Int(3);
  r.display_name = row.Text(4);
  r.create_time = FromUnixMicros(row.Int(5));
  r.update_time = FromUnixMicros(row.Int(6));
  json stored = json::parse(row.Text(7), nullptr, false);
  json runtime = json::parse(row.Text(8), nullptr, false);
  if (!stored.is_object() || !runtime.is_object()) {
    return DataLossError("stored " + row.Text(1) + " " + r.name + " is unreadable JSON");
  }
  try {
    r.labels = stored.value("labels", std::map<std::string, std::string>{});
  } catch (const json::exception&) {
    return DataLossError("stored " + row.Text(1) + " " + r.name + " has unreadable labels");
  }
  r.body = stored.value("body", json::object());
  r.runtime = std::move(runtime);
  return r;
}

void BindRecord(sqlite::Stmt& s, const std::string& kind, const ResourceRecord& r) {
  s.Bind(1, r.name);
  s.Bind(2, kind);
  s.Bind(3, r.parent);
  s.Bind(4, r.state);
  s.Bind(5, r.display_name);
  s.Bind(6, Us(r.create_time));
  s.Bind(7, r.update_time ? Us(r.update_time) : Us(r.create_time));
  const json stored = {{"labels", r.labels}, {"body", r.body}};
  s.Bind(8, stored.dump(-1, ' ', false, json::error_handler_t::replace));
  s.Bind(9, r.runtime.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

StatusOr<ResourceRecord> SqliteJobStore::GetResourceLocked(const std::string& kind,
                                                           const std::string& name) {
  sqlite::Stmt q(db_,
                 std::string("SELECT ") + kColumns + " FROM resources WHERE name = ? AND kind = ?");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, name);
  q.Bind(2, kind);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return NotFoundError(kind + " " + name + " not found");
  if (rc != SQLITE_ROW) return q.Error("get " + name);
  return DecodeRow(q);
}

Status SqliteJobStore::InsertResourceLocked(const std::string& kind, const ResourceRecord& record) {
  // Names are unique across every table: a resource may not take a job's name.
  sqlite::Stmt taken(
      db_,
      "SELECT 1 FROM resources WHERE name = ?1 UNION ALL SELECT 1 FROM jobs WHERE name = ?1 "
      "UNION ALL SELECT 1 FROM tuning_jobs WHERE name = ?1");
  TY_RETURN_IF_ERROR(taken.Prepared());
  taken.Bind(1, record.name);
  int rc = taken.Step();
  if (rc == SQLITE_ROW) return AlreadyExistsError(kind + " " + record.name + " already exists");
  if (rc != SQLITE_DONE) return taken.Error("create " + record.name);
  sqlite::Stmt ins(db_, std::string("INSERT INTO resources(") + kColumns +
                            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  TY_RETURN_IF_ERROR(ins.Prepared());
  BindRecord(ins, kind, record);
  if (ins.Step() != SQLITE_DONE) return ins.Error("insert " + record.name);
  return WriteLabelsLocked(record.name, record.labels);
}

Status SqliteJobStore::ReplaceResourceLocked(const std::string& kind, const ResourceRecord& record,
                                             bool labels_changed) {
  sqlite::Stmt up(db_, std::string("REPLACE INTO resources(") + kColumns +
                           ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  TY_RETURN_IF_ERROR(up.Prepared());
  BindRecord(up, kind, record);
  if (up.Step() != SQLITE_DONE) return up.Error("update " + record.name);
  return labels_changed ? WriteLabelsLocked(record.name, record.labels) : Status::Ok();
}

Status SqliteJobStore::DeleteResourceLocked(const std::string& kind, const std::string& name) {
  sqlite::Stmt del(db_, "DELETE FROM resources WHERE name = ? AND kind = ?");
  TY_RETURN_IF_ERROR(del.Prepared());
  del.Bind(1, name);
  del.Bind(2, kind);
  if (del.Step() != SQLITE_DONE) return del.Error("delete " + name);
  if (sqlite3_changes(db_) == 0) return NotFoundError(kind + " " + name + " not found");
  return WriteLabelsLocked(name, {});
}

Status SqliteJobStore::CreateResource(const std::string& kind, const ResourceRecord& record) {
  TY_RETURN_IF_ERROR(CheckNewResource(kind, record));
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_RETURN_IF_ERROR(InsertResourceLocked(kind, record));
  return tx.Commit();
}

Status SqliteJobStore::CreateResourceFamily(const std::string& kind, const ResourceRecord& record,
                                            const std::string& child_kind,
                                            const std::vector<ResourceRecord>& children) {
  TY_RETURN_IF_ERROR(CheckNewResource(kind, record));
  for (const ResourceRecord& c : children) {
    TY_RETURN_IF_ERROR(CheckNewResource(child_kind, c));
    if (c.parent != record.name) {
      return InvalidArgumentError(child_kind + " " + c.name + " is not a child of " + record.name);
    }
  }
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_RETURN_IF_ERROR(InsertResourceLocked(kind, record));
  for (const ResourceRecord& c : children) TY_RETURN_IF_ERROR(InsertResourceLocked(child_kind, c));
  return tx.Commit();
}

StatusOr<ResourceFamily> SqliteJobStore::MutateResourceFamily(
    const std::string& kind, const std::string& name, const std::string& child_kind,
    const std::function<Status(ResourceFamily&)>& mutate) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  ResourceFamily before;
  TY_ASSIGN_OR_RETURN(before.record, GetResourceLocked(kind, name));
  sqlite::Stmt q(db_, std::string("SELECT ") + kColumns +
                          " FROM resources WHERE kind = ? AND parent = ? "
                          "ORDER BY create_us ASC, name ASC");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, child_kind);
  q.Bind(2, name);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    TY_ASSIGN_OR_RETURN(ResourceRecord c, DecodeRow(q));
    before.children.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return q.Error("list the " + child_kind + " of " + name);
  ResourceFamily after = before;
  TY_RETURN_IF_ERROR(mutate(after));
  if (after.erase) {
    for (const ResourceRecord& c : before.children) {
      TY_RETURN_IF_ERROR(DeleteResourceLocked(child_kind, c.name));
    }
    TY_RETURN_IF_ERROR(DeleteResourceLocked(kind, name));
    TY_RETURN_IF_ERROR(tx.Commit());
    return after;
  }
  TY_ASSIGN_OR_RETURN(FamilyWrites w, DiffFamily(kind, child_kind, before, after));
  if (w.record_changed) {
    TY_RETURN_IF_ERROR(
        ReplaceResourceLocked(kind, after.record, after.record.labels != before.record.labels));
  }
  for (const std::string& gone : w.remove) {
    TY_RETURN_IF_ERROR(DeleteResourceLocked(child_kind, gone));
  }
  for (const ResourceRecord* c : w.create) TY_RETURN_IF_ERROR(InsertResourceLocked(child_kind, *c));
  for (const ResourceRecord* c : w.replace) {
    TY_RETURN_IF_ERROR(ReplaceResourceLocked(child_kind, *c, /*labels_changed=*/true));
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return after;
}

StatusOr<ResourceRecord> SqliteJobStore::GetResource(const std::string& kind,
                                                     const std::string& name) {
  std::lock_guard lock(mu_);
  return GetResourceLocked(kind, name);
}

StatusOr<ResourceRecord> SqliteJobStore::MutateResource(
    const std::string& kind, const std::string& name,
    const std::function<Status(ResourceRecord&)>& mutate) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_ASSIGN_OR_RETURN(ResourceRecord old, GetResourceLocked(kind, name));
  ResourceRecord record = old;
  TY_RETURN_IF_ERROR(mutate(record));
  if (record.name != old.name || record.parent != old.parent ||
      record.create_time != old.create_time) {
    return InternalError("MutateResource must not change the name, parent or create_time of " +
                         name);
  }
  TY_RETURN_IF_ERROR(ReplaceResourceLocked(kind, record, record.labels != old.labels));
  TY_RETURN_IF_ERROR(tx.Commit());
  return record;
}

Status SqliteJobStore::DeleteResource(const std::string& kind, const std::string& name) {
  std::lock_guard lock(mu_);
  sqlite::Transaction tx(db_);
  TY_RETURN_IF_ERROR(tx.Began());
  TY_RETURN_IF_ERROR(DeleteResourceLocked(kind, name));
  return tx.Commit();
}

StatusOr<ResourcePage> SqliteJobStore::ListResources(const std::string& kind,
                                                     const ListQuery& query,
                                                     const StateVocabulary& states) {
  std::lock_guard lock(mu_);
  ListScope scope{"kind = ?", {kind}, ResourceTokenScope(kind, query.parent), &states};
  TY_ASSIGN_OR_RETURN(Page<ResourceRecord> page,
                      ListPage<ResourceRecord>(
                          db_, query, std::string("SELECT ") + kColumns + " FROM resources AS jobs",
                          DecodeRow, scope));
  return ResourcePage{std::move(page.jobs), std::move(page.next_page_token)};
}

StatusOr<std::vector<ResourceRecord>> SqliteJobStore::ListAllResources(const std::string& kind) {
  std::lock_guard lock(mu_);
  sqlite::Stmt q(db_, std::string("SELECT ") + kColumns +
                          " FROM resources WHERE kind = ? ORDER BY create_us ASC, name ASC");
  TY_RETURN_IF_ERROR(q.Prepared());
  q.Bind(1, kind);
  std::vector<ResourceRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    TY_ASSIGN_OR_RETURN(ResourceRecord r, DecodeRow(q));
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return q.Error("list " + kind);
  return out;
}

StatusOr<std::vector<ParentCount>> SqliteJobStore::CountResourcesByParent(const std::string& kind) {
  std::lock_guard lock(mu_);
  return CountRowsByParent(db_, "resources", kind);
}

StatusOr<std::vector<StateCount>> SqliteJobStore::CountResourcesByState(const std::string& kind) {
  std::lock_guard lock(mu_);
  return CountRowsByState(db_, "resources", kind);
}

}  // namespace trainyard::store
