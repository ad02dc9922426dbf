#include "controller/operation_controller.h"

#include <thread>

#include "common/time.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

constexpr int64_t kRunning = 1;
constexpr int64_t kDone = 2;

json ErrorJson(const Status& status) {
  return {{"code", static_cast<int>(status.code())}, {"message", status.message()}};
}

}  // namespace

const store::StateVocabulary& OperationStates() {
  static const store::StateVocabulary kStates{"operation state", "DONE",
                                              [](std::string_view name) -> std::optional<int64_t> {
                                                if (name == "RUNNING") return kRunning;
                                                if (name == "DONE") return kDone;
                                                return std::nullopt;
                                              }};
  return kStates;
}

OperationController::OperationController(store::ResourceStore* store, Clock clock)
    : store_(store), clock_(OrSystemClock(std::move(clock))) {}

std::string OperationController::NewId() {
  // Numeric like Vertex's operation ids, increasing with time.
  const uint64_t now_us = static_cast<uint64_t>(ToUnixMicros(clock_()));
  std::lock_guard lock(mu_);
  last_id_ = std::max(last_id_ + 1, now_us * 1000);
  return std::to_string(last_id_);
}

json OperationController::Generic(TimePoint created, TimePoint updated) const {
  return {{"createTime", FormatTimestamp(created)}, {"updateTime", FormatTimestamp(updated)}};
}

Status OperationController::Start() {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(kOperationsKind));
  for (const store::ResourceRecord& r : all) {
    if (r.state == kDone) continue;
    Status s = Finish(r.name, Status(StatusCode::kAborted,
                                     "the operation was interrupted by a restart of the server; "
                                     "check the resource it acted on and retry"));
    if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) return s;
  }
  return Status::Ok();
}

StatusOr<int64_t> OperationController::ExpireDone(TimePoint cutoff, bool dry_run) {
  TY_ASSIGN_OR_RETURN(std::vector<store::ResourceRecord> all,
                      store_->ListAllResources(kOperationsKind));
  int64_t n = 0;
  for (const store::ResourceRecord& r : all) {
    const TimePoint updated = r.update_time.value_or(r.create_time.value_or(cutoff));
    if (r.state != kDone || updated >= cutoff) continue;
    if (!dry_run) {
      Status s = store_->DeleteResource(kOperationsKind, r.name);
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;  // a client deleted it first
    }
    ++n;
  }
  return n;
}

StatusOr<json> OperationController::Begin(const OperationStart& start) {
  if (start.prefix.empty() || start.metadata_type.empty()) {
    return InternalError("an operation needs a prefix and a metadata type");
  }
  const TimePoint now = clock_();
  store::ResourceRecord r;
  r.parent = start.prefix;
  r.state = kRunning;
  r.create_time = now;
  r.update_time = now;
  json metadata = start.metadata.is_object() ? start.metadata : json::object();
  metadata["@type"] = start.metadata_type;
  metadata["genericMetadata"] = Generic(now, now);
  for (int attempt = 0;; ++attempt) {
    r.name = start.prefix + "/operations/" + NewId();
    r.body = {{"name", r.name}, {"metadata", metadata}, {"done", false}};
    Status created = store_->CreateResource(kOperationsKind, r);
    if (created.ok()) return r.body;
    if (created.code() != StatusCode::kAlreadyExists || attempt >= 3) return created;
  }
}

Status OperationController::Finish(const std::string& name, const StatusOr<json>& result) {
  const TimePoint now = clock_();
  return store_
      ->MutateResource(kOperationsKind, name,
                       [&](store::ResourceRecord& r) -> Status {
                         if (r.state == kDone) {
                           return FailedPreconditionError("operation " + name + " is already done");
                         }
                         r.state = kDone;
                         r.update_time = now;
                         r.body["done"] = true;
                         r.body["metadata"]["genericMetadata"] = Generic(*r.create_time, now);
                         if (result.ok()) {
                           r.body["response"] = *result;
                         } else {
                           r.body["error"] = ErrorJson(result.status());
                         }
                         return Status::Ok();
                       })
      .status();
}

StatusOr<json> OperationController::RunNow(const OperationStart& start,
                                           const std::function<StatusOr<json>()>& work) {
  TY_ASSIGN_OR_RETURN(json response, work());
  TY_ASSIGN_OR_RETURN(json op, Begin(start));
  const std::string name = op.value("name", "");
  TY_RETURN_IF_ERROR(Finish(name, response));
  return Get(name);
}

StatusOr<json> OperationController::Get(const std::string& name) {
  StatusOr<store::ResourceRecord> r = store_->GetResource(kOperationsKind, name);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kNotFound) {
      return NotFoundError("Operation " + name + " not found");
    }
    return r.status();
  }
  return r->body;
}

StatusOr<json> OperationController::List(const store::ListQuery& query) {
  TY_ASSIGN_OR_RETURN(store::ResourcePage page,
                      store_->ListResources(kOperationsKind, query, OperationStates()));
  json out = json::object();
  if (!page.jobs.empty()) {
    out["operations"] = json::array();
    for (const auto& r : page.jobs) out["operations"].push_back(r.body);
  }
  if (!page.next_page_token.empty()) out["nextPageToken"] = page.next_page_token;
  return out;
}

StatusOr<json> OperationController::Wait(const std::string& name,
                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    TY_ASSIGN_OR_RETURN(json op, Get(name));
    if (op.value("done", false) || std::chrono::steady_clock::now() >= deadline) return op;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status OperationController::Cancel(const std::string& name) {
  TY_ASSIGN_OR_RETURN(json op, Get(name));
  if (op.value("done", false)) return Status::Ok();
  return FailedPreconditionError("operation " + name +
                                 " cannot be cancelled: it ends by itself; poll it until done");
}

Status OperationController::Delete(const std::string& name) {
  Status s = store_->DeleteResource(kOperationsKind, name);
  if (s.code() == StatusCode::kNotFound) return NotFoundError("Operation " + name + " not found");
  return s;
}

}  // namespace trainyard::controller
