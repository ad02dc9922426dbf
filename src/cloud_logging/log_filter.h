// The Cloud Logging filter subset that selects Trainyard job logs: what `gcloud ai custom-jobs
// stream-logs` and `gcloud logging read` build, e.g.
//   resource.type="ml_job" AND resource.labels.job_id="123" AND
//   timestamp>="1970-01-01T01:00:00.000000000Z" AND timestamp<"2026-11-23T19:47:45.016003Z"
//
// and what `stream-logs` adds while it tails: ((timestamp="T" AND insertId>"I") OR timestamp>"T").
//
// Terms are `FIELD OP VALUE`, combined with AND, OR, NOT (or '-') and parentheses; juxtaposed
// terms are ANDed. Precedence is Cloud Logging's: NOT binds tightest, then OR, then AND, so
// `a OR b AND c` is `(a OR b) AND c`. Fields: resource.type, resource.labels.job_id,
// resource.labels.task_name, resource.labels.project_id, labels."ml.googleapis.com/task_name",
// labels.task_name, labels.trial_id, labels."ml.googleapis.com/trial_id", logName, severity,
// timestamp, receiveTimestamp, insertId, textPayload.
// Operators: = != < <= > >= and ':' (substring). A query must pin one job with
// resource.labels.job_id="ID" among its top-level AND terms (logs are kept per job). Nesting
// deeper than kMaxFilterDepth is refused. Anything else is INVALID_ARGUMENT naming the part.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::cloud_logging {

// One log entry as the filter sees it.
struct EntryView {
  std::string project;  // the project the request names
  std::string job_id;
  std::string task_name;  // "workerpool0-0" (an AI Platform job's: "master-replica-0")
  std::string trial_id;   // an HP trial's id, "" otherwise
  std::string log_name;   // "projects/P/logs/workerpool0-0"
  std::string severity;   // "INFO" (stdout) or "ERROR" (stderr), as Vertex sends them
  std::chrono::system_clock::time_point timestamp;
  std::string text;
  std::string insert_id;  // sorts in log order (logging_routes.cc InsertId)
};

inline constexpr int kMaxFilterDepth = 64;

class LogFilter {
 public:
  // INVALID_ARGUMENT naming the term that is malformed or not supported.
  static StatusOr<LogFilter> Parse(const std::string& filter);

  // The job the filter pins (resource.labels.job_id="...").
  const std::string& job_id() const { return job_id_; }
  bool Matches(const EntryView& entry) const;

  struct Term {
    std::string field;  // canonical: "type", "job_id", "task_name", "log_name", ...
    std::string op;
    std::string value;
    std::optional<std::chrono::system_clock::time_point> time;  // timestamp terms
    int severity = 0;                                           // severity terms
  };
  // The parsed expression: a term, or NOT/AND/OR over sub-expressions.
  struct Node {
    enum class Kind { kTerm, kNot, kAnd, kOr } kind = Kind::kTerm;
    Term term;
    std::vector<Node> children;
  };

 private:
  std::shared_ptr<const Node> root_;  // shared: LogFilter is copied per request
  std::string job_id_;
};

// Cloud Logging's severity order: DEFAULT 0, DEBUG 100, INFO 200, NOTICE 300, WARNING 400,
// ERROR 500, CRITICAL 600, ALERT 700, EMERGENCY 800; nullopt for another name.
std::optional<int> SeverityRank(const std::string& name);

}  // namespace trainyard::cloud_logging
