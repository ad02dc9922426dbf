// The Cloud Logging filter subset that selects Trainyard job logs: what `gcloud ai custom-jobs
// stream-logs` and `gcloud logging read` build, e.g.
//   resource.type="ml_job" AND resource.labels.job_id="123" AND
//   timestamp>="1970-01-01T01:00:00.000000000Z" AND timestamp<"2026-11-23T19:47:45.016003Z"
//
// Terms are `FIELD OP VALUE` joined by AND (or juxtaposed, as Cloud Logging allows), each
// optionally negated with NOT or '-'. Fields: resource.type, resource.labels.job_id,
// resource.labels.task_name, resource.labels.project_id, labels."ml.googleapis.com/task_name",
// labels.task_name, logName, severity, timestamp, textPayload. Operators: = != < <= > >= and ':'
// (substring). A query must pin one job with resource.labels.job_id="ID" (logs are kept per
// job). Anything else is INVALID_ARGUMENT naming the unsupported part.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::cloud_logging {

// One log entry as the filter sees it.
struct EntryView {
  std::string job_id;
  std::string task_name;  // "workerpool0-0"
  std::string log_name;   // "projects/P/logs/workerpool0-0"
  std::string severity;   // "INFO" (stdout) or "ERROR" (stderr), as Vertex sends them
  std::chrono::system_clock::time_point timestamp;
  std::string text;
};

class LogFilter {
 public:
  // INVALID_ARGUMENT naming the term that is malformed or not supported.
  static StatusOr<LogFilter> Parse(const std::string& filter);

  // The job the filter pins (resource.labels.job_id="...").
  const std::string& job_id() const { return job_id_; }
  bool Matches(const EntryView& entry) const;

 private:
  struct Term {
    std::string field;  // canonical: "type", "job_id", "task_name", "log_name", ...
    std::string op;
    std::string value;
    bool negated = false;
    std::optional<std::chrono::system_clock::time_point> time;  // timestamp terms
    int severity = 0;                                           // severity terms
  };
  bool TermMatches(const Term& t, const EntryView& e) const;

  std::vector<Term> terms_;
  std::string job_id_;
};

// Cloud Logging's severity order: DEFAULT 0, DEBUG 100, INFO 200, NOTICE 300, WARNING 400,
// ERROR 500, CRITICAL 600, ALERT 700, EMERGENCY 800; nullopt for another name.
std::optional<int> SeverityRank(const std::string& name);

}  // namespace trainyard::cloud_logging
