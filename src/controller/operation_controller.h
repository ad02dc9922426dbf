// OperationController: every google.longrunning.Operation the server answers with is a stored
// resource (kind "operations" of the ResourceStore), so `GET .../operations/{id}` serves it under
// /v1/ and /ui/ (api/operation_routes.h) for as long as the client polls, across restarts.
//
// An operation is named under the resource it acts for: "projects/P/locations/L/operations/ID"
// (a delete) or "projects/P/locations/L/models/M/operations/ID" (an upload for model M); that
// prefix is its parent for listing. Its JSON is Google's:
//   {"name", "metadata": {"@type", "genericMetadata": {"createTime", "updateTime"}, ...},
//    "done", "response": {"@type", ...} | "error": {"code", "message"}}
// (`error.code` is the google.rpc.Code number, not an HTTP status.)
//
// Two ways to run one:
// - RunNow: the work runs inside the request. An error of the work is the request's error (as
//   Vertex answers a delete of a running job with 400 at once) and nothing is stored; its success
//   is stored as a done operation and returned.
// - Begin + Finish: the operation is stored not done, the work goes on elsewhere and Finish
//   stores its outcome. Start() ends operations a previous server left not done with ABORTED
//   ("interrupted by a restart of the server"), so no client polls forever.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "store/resource_store.h"

namespace trainyard::controller {

inline constexpr const char* kOperationsKind = "operations";
// The metadata every Vertex delete carries.
inline constexpr const char* kDeleteOperationMetadata =
    "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata";
inline constexpr const char* kEmptyResponse = "type.googleapis.com/google.protobuf.Empty";

struct OperationStart {
  std::string prefix;         // the operation's parent: "projects/P/locations/L" or a resource
  std::string metadata_type;  // "@type" of its metadata
  nlohmann::json metadata = nlohmann::json::object();  // fields besides genericMetadata
};

// The names and numbers filters use for an operation's `state`: RUNNING (1) and DONE (2).
const store::StateVocabulary& OperationStates();

class OperationController {
 public:
  using Clock = WallClock;  // common/time.h
  // `store` must outlive the controller. `clock` null = the system clock.
  explicit OperationController(store::ResourceStore* store, Clock clock = nullptr);

  // Ends the operations a previous server left running (ABORTED). Only store errors fail it.
  Status Start();

  // Runs `work` now; on success stores and returns the done operation whose response is what
  // `work` returned (a JSON object with "@type"). `work`'s error is returned as it is.
  StatusOr<nlohmann::json> RunNow(const OperationStart& start,
                                  const std::function<StatusOr<nlohmann::json>()>& work);
  // Stores a new operation, not done; returns it (its "name" is what Finish takes).
  StatusOr<nlohmann::json> Begin(const OperationStart& start);
  // Stores the outcome of a begun operation: `result` is its response or its error. A second
  // Finish of the same operation is ignored (FAILED_PRECONDITION); NOT_FOUND if unknown.
  Status Finish(const std::string& name, const StatusOr<nlohmann::json>& result);

  // NOT_FOUND if there is no such operation.
  StatusOr<nlohmann::json> Get(const std::string& name);
  // The operations under `query.parent`, newest first ("operations" key, nextPageToken).
  StatusOr<nlohmann::json> List(const store::ListQuery& query);
  // Returns the operation once done or once `timeout` has passed, whichever is first.
  StatusOr<nlohmann::json> Wait(const std::string& name, std::chrono::milliseconds timeout);
  // Cancel of a done operation is OK and changes nothing (its outcome stands); a running one
  // cannot be stopped by Trainyard's operations: FAILED_PRECONDITION saying so. NOT_FOUND if
  // unknown.
  Status Cancel(const std::string& name);
  // Forgets the operation (the work it did stands). NOT_FOUND if unknown.
  Status Delete(const std::string& name);
  // Retention (server/retention.h): deletes the done operations last updated before `cutoff`;
  // running ones stay whatever their age. With `dry_run` only counts them. Returns how many
  // (would) go; a store error stops it (what was deleted stays deleted).
  StatusOr<int64_t> ExpireDone(std::chrono::system_clock::time_point cutoff, bool dry_run);

 private:
  std::string NewId();
  nlohmann::json Generic(std::chrono::system_clock::time_point created,
                         std::chrono::system_clock::time_point updated) const;

  store::ResourceStore* store_;
  Clock clock_;
  std::mutex mu_;
  uint64_t last_id_ = 0;
};

}  // namespace trainyard::controller
