#include "api/routes.h"

#include <httplib.h>

#include <set>
#include <thread>

#include "api/http_status.h"
#include "spec/custom_job_json.h"
#include "spec/time_util.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kParentPattern = "/v1/projects/([^/]+)/locations/([^/]+)/customJobs";
constexpr const char* kJobPattern = "/v1/projects/([^/]+)/locations/([^/]+)/customJobs/([^/:]+)";

void SendJson(httplib::Response& res, int http_status, const json& body) {
  res.status = http_status;
  res.set_content(body.dump(2) + "\n", "application/json; charset=utf-8");
}

void SendError(httplib::Response& res, const Status& status) {
  SendJson(res, HttpStatusFor(status.code()), ErrorBody(status));
}

// Runs a handler that produces a JSON body or an error; nothing escapes it.
template <typename Fn>
httplib::Server::Handler Guarded(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    try {
      StatusOr<json> body = fn(req);
      if (body.ok()) {
        SendJson(res, 200, *body);
      } else {
        SendError(res, body.status());
      }
    } catch (const std::exception& e) {
      SendError(res, InternalError(std::string("internal error: ") + e.what()));
    } catch (...) {
      SendError(res, InternalError("internal error"));
    }
  };
}

// Unknown query parameters are rejected, like unknown JSON fields (docs/api.md).
Status CheckParams(const httplib::Request& req, std::initializer_list<std::string_view> known) {
  static const std::set<std::string> kSystem = {"alt", "prettyPrint", "$.xgafv", "key", "fields"};
  for (const auto& [key, value] : req.params) {
    bool ok = kSystem.count(key) > 0;
    for (auto k : known) ok |= (k == key);
    if (!ok) {
      return InvalidArgumentError("Invalid JSON payload received. Unknown name \"" + key +
                                  "\": Cannot bind query parameter. Field '" + key +
                                  "' could not be found in request message.");
    }
  }
  return Status::Ok();
}

StatusOr<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                           int64_t min, int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() || n < min || n > max) {
    return InvalidArgumentError(name + ": '" + v + "' must be an integer between " +
                                std::to_string(min) + " and " + std::to_string(max));
  }
  return n;
}

std::string Parent(const httplib::Request& req) {
  return "projects/" + std::string(req.matches[1]) + "/locations/" + std::string(req.matches[2]);
}
std::string JobName(const httplib::Request& req) {
  return Parent(req) + "/customJobs/" + std::string(req.matches[3]);
}

std::string TaskName(const executor::LogLine& line) {
  return "workerpool" + std::to_string(line.pool_index) + "-" + std::to_string(line.replica_index);
}

}  // namespace

void RegisterRoutes(httplib::Server& server, controller::JobController* controller,
                    const ApiServerOptions& options) {
  server.Get("/healthz", Guarded([](const httplib::Request&) -> StatusOr<json> {
               return json{{"status", "SERVING"}};
             }));

  server.Post(kParentPattern, Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                if (req.body.empty()) {
                  return InvalidArgumentError(
                      "request body is empty; send a CustomJob as JSON, e.g. "
                      "{\"displayName\": \"...\", \"jobSpec\": {\"workerPoolSpecs\": [...]}}");
                }
                TY_ASSIGN_OR_RETURN(spec::CustomJob request,
                                    spec::ParseCustomJob(req.body, spec::DecodeMode::kRequest));
                TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Create(Parent(req), request));
                return spec::CustomJobToJson(job);
              }));

  server.Get(kParentPattern, Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {"filter", "pageSize", "pageToken", "readMask"}));
               store::ListQuery q;
               q.parent = Parent(req);
               q.filter = req.get_param_value("filter");
               TY_ASSIGN_OR_RETURN(int64_t page_size,
                                   IntParam(req, "pageSize", 0, 0, 1 << 30));
               q.page_size = static_cast<int>(page_size);
               q.page_token = req.get_param_value("pageToken");
               TY_ASSIGN_OR_RETURN(store::ListResult result, controller->List(q));
               json out = json::object();
               if (!result.jobs.empty()) {
                 json jobs = json::array();
                 for (const auto& j : result.jobs) jobs.push_back(spec::CustomJobToJson(j));
                 out["customJobs"] = std::move(jobs);
               }
               if (!result.next_page_token.empty()) out["nextPageToken"] = result.next_page_token;
               return out;
             }));

  server.Get(kJobPattern, Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Get(JobName(req)));
               return spec::CustomJobToJson(job);
             }));

  server.Delete(kJobPattern, Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
                  TY_RETURN_IF_ERROR(CheckParams(req, {}));
                  TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Delete(JobName(req)));
                  std::string now = spec::FormatTimestamp(std::chrono::system_clock::now());
                  // Deletion is immediate, so the long-running operation is already done.
                  return json{
                      {"name", job.name + "/operations/delete"},
                      {"metadata",
                       {{"@type",
                         "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata"},
                        {"genericMetadata", {{"createTime", now}, {"updateTime", now}}}}},
                      {"done", true},
                      {"response", {{"@type", "type.googleapis.com/google.protobuf.Empty"}}}};
                }));

  server.Post(std::string(kJobPattern) + ":cancel",
              Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                if (!req.body.empty()) {
                  json body = json::parse(req.body, nullptr, false);
                  if (body.is_discarded() || !body.is_object()) {
                    return InvalidArgumentError(
                        "Invalid JSON payload received: the cancel body must be {} or empty");
                  }
                }
                TY_RETURN_IF_ERROR(controller->Cancel(JobName(req)));
                return json::object();
              }));

  const int max_wait = options.max_log_wait_seconds;
  server.Get(std::string(kJobPattern) + ":logs",
             Guarded([controller, max_wait](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(
                   CheckParams(req, {"after", "pageSize", "taskName", "waitSeconds"}));
               TY_ASSIGN_OR_RETURN(int64_t after, IntParam(req, "after", -1, -1, INT64_MAX));
               TY_ASSIGN_OR_RETURN(int64_t page_size, IntParam(req, "pageSize", 1000, 1, 10000));
               TY_ASSIGN_OR_RETURN(int64_t wait, IntParam(req, "waitSeconds", 0, 0, max_wait));
               const std::string task = req.get_param_value("taskName");
               const std::string name = JobName(req);
               auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
               json entries = json::array();
               controller::LogPage page;
               while (true) {
                 TY_ASSIGN_OR_RETURN(page, controller->ReadLogs(name, after, static_cast<int>(page_size)));
                 for (const auto& line : page.lines) {
                   if (!task.empty() && TaskName(line) != task) continue;
                   entries.push_back({{"cursor", std::to_string(line.offset)},
                                      {"time", spec::FormatTimestamp(line.time)},
                                      {"taskName", TaskName(line)},
                                      {"stream", line.is_stderr ? "stderr" : "stdout"},
                                      {"text", line.text}});
                 }
                 after = page.next_cursor;
                 bool ended = spec::IsTerminal(page.state);
                 if (!entries.empty() || ended || std::chrono::steady_clock::now() >= deadline) {
                   break;
                 }
                 std::this_thread::sleep_for(std::chrono::milliseconds(100));
               }
               bool done = spec::IsTerminal(page.state) && page.lines.empty();
               return json{{"entries", entries},
                           {"nextCursor", std::to_string(after)},
                           {"jobState", std::string(spec::JobStateName(page.state))},
                           {"done", done}};
             }));
}

}  // namespace trainyard::api
