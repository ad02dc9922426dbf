// One page of a list request over a table shaped like `jobs` (columns parent, create_us, name and
// the row's JSON; labels in job_labels), shared by the custom-job and tuning-job tables so that
// both list with the same filter syntax, order and page tokens (list_filter.h, page_token.h).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/time.h"
#include "sqlite/sqlite.h"
#include "store/job_store.h"
#include "store/list_filter.h"
#include "store/page_token.h"

namespace trainyard::store {

template <typename Job>
struct Page {
  std::vector<Job> jobs;
  std::string next_page_token;  // "" on the last page
};

// Where a table holds several collections (the `resources` table): the condition that keeps one
// ("kind = ?" and its value), the scope its page tokens are bound to, and its state names.
struct ListScope {
  std::string condition;  // "" = the whole table
  std::vector<ListFilter::SqlParam> params;
  std::string token_scope;  // "" = the query's parent
  const StateVocabulary* states = &StateVocabulary::JobStates();
};

// Every parent of `table` (restricted to `kind` when non-empty: the `resources` table) with its
// number of rows, ordered by parent; the caller holds the database lock.
inline StatusOr<std::vector<ParentCount>> CountRowsByParent(sqlite3* db, const std::string& table,
                                                            const std::string& kind = "") {
  sqlite::Stmt q(db, "SELECT parent, COUNT(*) FROM " + table +
                         (kind.empty() ? "" : " WHERE kind = ?") +
                         " GROUP BY parent ORDER BY parent");
  TY_RETURN_IF_ERROR(q.Prepared());
  if (!kind.empty()) q.Bind(1, kind);
  std::vector<ParentCount> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back({q.Text(0), q.Int(1)});
  if (rc != SQLITE_DONE) return q.Error("count " + table + " by parent");
  return out;
}

// SELECT state, COUNT(*) ... GROUP BY state over `table` (the rows of `kind` when given); the
// caller holds the database lock.
inline StatusOr<std::vector<StateCount>> CountRowsByState(sqlite3* db, const std::string& table,
                                                          const std::string& kind = "") {
  sqlite::Stmt q(db, "SELECT state, COUNT(*) FROM " + table +
                         (kind.empty() ? "" : " WHERE kind = ?") +
                         " GROUP BY state ORDER BY state");
  TY_RETURN_IF_ERROR(q.Prepared());
  if (!kind.empty()) q.Bind(1, kind);
  std::vector<StateCount> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back({q.Int(0), q.Int(1)});
  if (rc != SQLITE_DONE) return q.Error("count " + table + " by state");
  return out;
}

// `select` is "SELECT <columns> FROM <table> AS jobs" (ListFilter::ToSql names the row `jobs`);
// `decode(stmt)` returns StatusOr<Job> for the current row; a Job has .name and .create_time.
// Newest first (create time, then name, descending); the caller holds the database lock.
template <typename Job, typename DecodeRow>
StatusOr<Page<Job>> ListPage(sqlite3* db, const ListQuery& query, const std::string& select,
                             DecodeRow decode, const ListScope& scope = {}) {
  TY_ASSIGN_OR_RETURN(ListFilter filter, ListFilter::Parse(query.filter, *scope.states));
  const std::string token_scope = scope.token_scope.empty() ? query.parent : scope.token_scope;
  std::optional<PageCursor> cursor;
  if (!query.page_token.empty()) {
    TY_ASSIGN_OR_RETURN(cursor, DecodePageToken(query.page_token, token_scope, query.filter));
  }
  const int page_size =
      query.page_size <= 0 ? kDefaultPageSize : std::min(query.page_size, kMaxPageSize);
  std::string sql = select + " WHERE ";
  std::vector<ListFilter::SqlParam> params;
  if (!scope.condition.empty()) {
    sql += scope.condition + " AND ";
    params = scope.params;
  }
  sql += "parent = ?";
  params.push_back(query.parent);
  if (cursor) {
    // Row-value comparison walks the (parent, create_us DESC, name DESC) index from the cursor.
    sql += " AND (create_us, name) < (?, ?)";
    params.push_back(cursor->create_us);
    params.push_back(cursor->name);
  }
  sql += " AND (";
  filter.ToSql(&sql, &params);
  sql += ") ORDER BY create_us DESC, name DESC LIMIT ?";
  params.push_back(static_cast<int64_t>(page_size) + 1);

  sqlite::Stmt q(db, sql);
  TY_RETURN_IF_ERROR(q.Prepared());
  for (size_t i = 0; i < params.size(); ++i) {
    std::visit([&](const auto& v) { q.Bind(static_cast<int>(i + 1), v); }, params[i]);
  }
  Page<Job> page;
  bool more = false;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    if (page.jobs.size() == static_cast<size_t>(page_size)) {
      more = true;
      break;
    }
    TY_ASSIGN_OR_RETURN(Job job, decode(q));
    page.jobs.push_back(std::move(job));
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return q.Error("list " + query.parent);
  if (more) {
    const Job& last = page.jobs.back();
    const int64_t create_us = last.create_time ? ToUnixMicros(*last.create_time) : 0;
    page.next_page_token = EncodePageToken({create_us, last.name}, token_scope, query.filter);
  }
  return page;
}

}  // namespace trainyard::store
