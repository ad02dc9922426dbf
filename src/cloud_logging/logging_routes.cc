#include "cloud_logging/logging_routes.h"

#include <algorithm>
#include <cstdio>
#include <deque>

#include "api/route_util.h"
#include "cloud_logging/log_filter.h"
#include "common/json_parse.h"
#include "common/parse.h"
#include "common/time.h"
#include "executor/job_log.h"
#include "protojson/reader.h"
#include "replica_contract/replica_contract.h"
#include "spec/legacy_translation.h"

namespace trainyard::cloud_logging {
namespace {

using nlohmann::json;

constexpr int kReadBatch = 1000;

struct Query {
  std::string project = "-";
  LogFilter filter;
  bool descending = false;
  int page_size = 50;
  std::optional<int64_t> token_offset;  // asc: after it; desc: before it
  std::string page_token;               // as sent ("l:..." for an AI Platform job's merged log)
};

StatusOr<Query> ParseQuery(const json& body) {
  if (!body.is_object()) return InvalidArgumentError("the body must be a ListLogEntriesRequest");
  for (const auto& [key, value] : body.items()) {
    if (key != "resourceNames" && key != "projectIds" && key != "filter" && key != "orderBy" &&
        key != "pageSize" && key != "pageToken") {
      return protojson::UnknownFieldError("", key);
    }
  }
  Query q;
  if (body.contains("resourceNames") && body["resourceNames"].is_array() &&
      !body["resourceNames"].empty() && body["resourceNames"][0].is_string()) {
    std::string rn = body["resourceNames"][0];
    if (rn.starts_with("projects/")) q.project = rn.substr(9, rn.find('/', 9) - 9);
  } else if (body.contains("projectIds") && body["projectIds"].is_array() &&
             !body["projectIds"].empty() && body["projectIds"][0].is_string()) {
    q.project = body["projectIds"][0];
  }
  if (q.project.empty() || q.project == "-") {
    return InvalidArgumentError(
        "resourceNames: name the project whose logs to read, e.g. \"resourceNames\": "
        "[\"projects/my-project\"] (a job's logs are read only through its own project)");
  }
  TY_ASSIGN_OR_RETURN(q.filter, LogFilter::Parse(body.value("filter", std::string())));
  const std::string order = body.value("orderBy", std::string("timestamp asc"));
  if (order == "timestamp desc") {
    q.descending = true;
  } else if (order != "timestamp asc" && order != "timestamp") {
    return InvalidArgumentError("orderBy: '" + order +
                                "' is not one of \"timestamp asc\", \"timestamp desc\"");
  }
  if (body.contains("pageSize")) {
    if (!body["pageSize"].is_number_integer() || body["pageSize"] < 0) {
      return InvalidArgumentError("pageSize must be a non-negative integer");
    }
    q.page_size = std::clamp(body["pageSize"].get<int>(), 1, 1000);
    if (body["pageSize"] == 0) q.page_size = 50;
  }
  const std::string token = body.value("pageToken", std::string());
  q.page_token = token;
  if (!token.empty() && !token.starts_with("l:")) {
    auto offset = ParseInt64(token.substr(2));
    if (token.size() < 3 || token[1] != ':' || (token[0] == 'd') != q.descending || !offset) {
      return InvalidArgumentError("pageToken is not one this query returned");
    }
    q.token_offset = *offset;
  }
  for (char c : q.filter.job_id()) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return InvalidArgumentError("resource.labels.job_id: '" + q.filter.job_id() +
                                  "' is not a job id");
    }
  }
  return q;
}

std::string TaskName(const executor::LogLine& line) {
  return replica_contract::TaskName(line.pool_index, line.replica_index);
}

// Unique per line and, zero-padded, ordered as the log is: stream-logs resumes with
// insertId>"LAST" and Cloud Logging compares insertIds as strings.
std::string InsertId(const std::string& job_id, int64_t offset) {
  std::string digits = std::to_string(offset);
  return job_id + "-" + std::string(digits.size() < 16 ? 16 - digits.size() : 0, '0') + digits;
}

EntryView ViewOf(const Query& q, const executor::LogLine& line) {
  EntryView v;
  v.project = q.project;
  v.job_id = q.filter.job_id();
  v.task_name = TaskName(line);
  v.log_name = "projects/" + q.project + "/logs/" + v.task_name;
  v.severity = executor::LogSeverity(line);
  v.timestamp = line.time;
  v.text = line.text;
  v.insert_id = InsertId(v.job_id, line.offset);
  return v;
}

json EntryJson(const EntryView& v) {
  const std::string time = FormatTimestamp(v.timestamp);
  json labels = {{"ml.googleapis.com/task_name", v.task_name}};
  if (!v.trial_id.empty()) labels["ml.googleapis.com/trial_id"] = v.trial_id;
  return json{
      {"logName", v.log_name},
      {"resource",
       {{"type", "ml_job"},
        {"labels", {{"job_id", v.job_id}, {"task_name", v.task_name}, {"project_id", v.project}}}}},
      {"timestamp", time},
      {"receiveTimestamp", time},
      {"severity", v.severity},
      {"textPayload", v.text},
      {"insertId", v.insert_id},
      {"labels", std::move(labels)}};
}

json EntryJson(const Query& q, const executor::LogLine& line) { return EntryJson(ViewOf(q, line)); }

// The project the request's body names (resourceNames[0] "projects/P" or projectIds[0]), checked
// by the RouteTable like a /v1/projects/P/ path; "" when the body names none or does not parse
// (the handler then answers 400 for the same reason, or lists by job id alone: docs/security.md).
std::string QueryProject(const httplib::Request& req) {
  if (req.body.empty()) return "";
  StatusOr<json> body = ParseJson(req.body);
  if (!body.ok()) return "";
  StatusOr<Query> q = ParseQuery(*body);
  return q.ok() ? q->project : "";
}

StatusOr<json> ListEntries(controller::JobController* controller, const Query& q) {
  std::deque<executor::LogLine> picked;  // asc: in order; desc: the last page_size before token
  bool more = false;
  int64_t after = q.descending ? -1 : q.token_offset.value_or(-1);
  int64_t scanned = 0;
  std::optional<int64_t> stopped_at;  // scan budget ran out after this offset (asc)
  while (true) {
    TY_ASSIGN_OR_RETURN(auto lines,
                        controller->ReadLogsById(q.project, q.filter.job_id(), after, kReadBatch));
    if (lines.empty()) break;
    for (auto& line : lines) {
      after = line.offset;
      if (q.descending && q.token_offset && line.offset >= *q.token_offset) break;
      if (!q.filter.Matches(ViewOf(q, line))) continue;
      if (!q.descending && static_cast<int>(picked.size()) == q.page_size) {
        more = true;
        break;
      }
      picked.push_back(std::move(line));
      if (q.descending && static_cast<int>(picked.size()) > q.page_size) {
        picked.pop_front();
        more = true;
      }
    }
    scanned += static_cast<int64_t>(lines.size());
    if ((!q.descending && more) || (q.descending && q.token_offset && after >= *q.token_offset)) {
      break;
    }
    if (!q.descending && scanned >= kMaxScannedLines) {
      stopped_at = after;
      break;
    }
  }
  json entries = json::array();
  if (q.descending) {
    for (auto it = picked.rbegin(); it != picked.rend(); ++it) entries.push_back(EntryJson(q, *it));
  } else {
    for (const auto& line : picked) entries.push_back(EntryJson(q, line));
  }
  json out = json::object();
  if (!entries.empty()) out["entries"] = std::move(entries);
  if (more && !picked.empty()) {
    out["nextPageToken"] = (q.descending ? "d:" + std::to_string(picked.front().offset)
                                         : "a:" + std::to_string(picked.back().offset));
  } else if (stopped_at) {
    out["nextPageToken"] = "a:" + std::to_string(*stopped_at);
  }
  return out;
}

// An AI Platform job's entry: its task named as AI Platform names them, its trial, and an
// insertId that sorts by stream then line, so the merged log orders by (timestamp, insertId).
EntryView LegacyView(const Query& q, size_t stream, const std::string& trial_id,
                     const executor::LogLine& line) {
  EntryView v = ViewOf(q, line);
  v.task_name = spec::LegacyTaskName(line.pool_index, line.replica_index);
  v.log_name = "projects/" + q.project + "/logs/" + v.task_name;
  v.trial_id = trial_id;
  char id[48];
  std::snprintf(id, sizeof(id), "-%04zu-%016lld", stream, static_cast<long long>(line.offset));
  v.insert_id = q.filter.job_id() + id;
  return v;
}

// "l:<micros>:<insertId>": where the previous page ended.
std::string SortKey(const EntryView& v) {
  char micros[24];
  std::snprintf(micros, sizeof(micros), "%020lld",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                           v.timestamp.time_since_epoch())
                                           .count()));
  return std::string(micros) + ":" + v.insert_id;
}

// The lines of an AI Platform job (legacy_job_controller.h): its custom job's, or its trials'
// jobs' (each labelled with its trial id), merged in time order, at most kMaxScannedLines.
StatusOr<json> ListLegacyEntries(controller::JobController* jobs, const Query& q,
                                 const std::vector<controller::LegacyLogStream>& streams) {
  std::vector<std::pair<std::string, EntryView>> picked;  // (sort key, entry)
  int64_t scanned = 0;
  for (size_t s = 0; s < streams.size() && scanned < kMaxScannedLines; ++s) {
    int64_t after = -1;
    while (scanned < kMaxScannedLines) {
      TY_ASSIGN_OR_RETURN(
          auto lines, jobs->ReadLogsById(q.project, streams[s].custom_job_id, after, kReadBatch));
      if (lines.empty()) break;
      scanned += static_cast<int64_t>(lines.size());
      for (const auto& line : lines) {
        after = line.offset;
        EntryView v = LegacyView(q, s, streams[s].trial_id, line);
        if (q.filter.Matches(v)) picked.emplace_back(SortKey(v), std::move(v));
      }
    }
  }
  std::sort(picked.begin(), picked.end(), [&](const auto& a, const auto& b) {
    return q.descending ? a.first > b.first : a.first < b.first;
  });
  const std::string from = q.page_token.empty() ? "" : q.page_token.substr(2);
  json entries = json::array();
  std::string last;
  bool more = false;
  for (const auto& [key, v] : picked) {
    if (!from.empty() && (q.descending ? key >= from : key <= from)) continue;
    if (static_cast<int>(entries.size()) == q.page_size) {
      more = true;
      break;
    }
    entries.push_back(EntryJson(v));
    last = key;
  }
  json out = json::object();
  if (!entries.empty()) out["entries"] = std::move(entries);
  if (more) out["nextPageToken"] = "l:" + last;
  return out;
}

}  // namespace

void RegisterLoggingRoutes(api::RouteTable& routes, controller::JobController* controller,
                           controller::LegacyJobController* legacy) {
  routes.Post("/v2/entries:list", auth::Access::kRead,
              api::Guarded([controller, legacy](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(api::CheckParams(req, {}));
                json body = json::object();
                if (!req.body.empty()) {
                  TY_ASSIGN_OR_RETURN(body, ParseJson(req.body));
                }
                TY_ASSIGN_OR_RETURN(Query q, ParseQuery(body));
                if (legacy != nullptr) {
                  TY_ASSIGN_OR_RETURN(auto streams,
                                      legacy->LogStreams(q.project, q.filter.job_id()));
                  if (streams) return ListLegacyEntries(controller, q, *streams);
                }
                if (q.page_token.starts_with("l:")) {
                  return InvalidArgumentError("pageToken is not one this query returned");
                }
                return ListEntries(controller, q);
              }),
              QueryProject);
}

}  // namespace trainyard::cloud_logging
