// A Cloud Logging v2 subset over the durable job logs (JobController::ReadLogsById), so
// `gcloud ai custom-jobs stream-logs` and `gcloud logging read` work against Trainyard:
//
//   POST /v2/entries:list   {resourceNames, filter (log_filter.h), orderBy: "timestamp asc|desc",
//                            pageSize (default 50, max 1000), pageToken}
//                        -> {entries: [LogEntry], nextPageToken}
//
// Each log line is a LogEntry like those Vertex AI writes for a CustomJob replica:
//   {logName: "projects/P/logs/workerpool0-0", resource: {type: "ml_job", labels: {job_id,
//    task_name, project_id}}, timestamp (RFC 3339 UTC, 6 fraction digits), receiveTimestamp,
//    severity: INFO (stdout) | ERROR (stderr), textPayload, insertId (unique per line),
//    labels: {"ml.googleapis.com/task_name", "ml.googleapis.com/trial_id"?}}
// A query scans at most kMaxScannedLines lines; a longer scan returns a nextPageToken (and maybe
// fewer entries), as Cloud Logging does for long scans.
#pragma once

#include "api/route_table.h"
#include "controller/job_controller.h"
#include "controller/legacy_job_controller.h"

// Forward declared: this header is included next to Eigen (src/tuning, via controller/), which
// breaks when cpp-httplib's header comes first.
namespace httplib {
class Server;
}

namespace trainyard::cloud_logging {

inline constexpr int kMaxScannedLines = 200000;

// `controller` must outlive the server, and `legacy` when given. With `legacy`, a job_id that
// names an AI Platform job (ml.googleapis.com, `gcloud ai-platform jobs stream-logs`) reads that
// job's lines: its custom job's, or its HP trials' with labels."ml.googleapis.com/trial_id",
// merged in time order, with AI Platform's task names (master-replica-0, worker-replica-1, ...)
// and page tokens of their own.
void RegisterLoggingRoutes(api::RouteTable& routes, controller::JobController* controller,
                           controller::LegacyJobController* legacy = nullptr);

}  // namespace trainyard::cloud_logging
