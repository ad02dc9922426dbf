#include "study/study_routes.h"

#include <httplib.h>

#include <set>

#include "api/http_status.h"
#include "spec/time_util.h"

namespace trainyard::study {
namespace {

using nlohmann::json;

constexpr const char* kParentPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs";
constexpr const char* kJobPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs/([^/:]+)";

void SendJson(httplib::Response& res, int http_status, const json& body) {
  res.status = http_status;
  res.set_content(body.dump(2) + "\n", "application/json; charset=utf-8");
}

template <typename Fn>
httplib::Server::Handler Guarded(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    try {
      StatusOr<json> body = fn(req);
      if (body.ok()) {
        SendJson(res, 200, *body);
      } else {
        SendJson(res, api::HttpStatusFor(body.status().code()), api::ErrorBody(body.status()));
      }
    } catch (const std::exception& e) {
      Status s = InternalError(std::string("internal error: ") + e.what());
      SendJson(res, 500, api::ErrorBody(s));
    }
  };
}

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

std::string Parent(const httplib::Request& req) {
  return "projects/" + std::string(req.matches[1]) + "/locations/" + std::string(req.matches[2]);
}
std::string JobName(const httplib::Request& req) {
  return Parent(req) + "/hyperparameterTuningJobs/" + std::string(req.matches[3]);
}

}  // namespace

void RegisterStudyRoutes(httplib::Server& server, StudyService* service) {
  server.Post(
      kParentPattern, Guarded([service](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(CheckParams(req, {}));
        if (req.body.empty()) {
          return InvalidArgumentError(
              "request body is empty; send a HyperparameterTuningJob as JSON with "
              "displayName, studySpec, maxTrialCount, parallelTrialCount and "
              "trialJobSpec (docs/hp-tuning.md)");
        }
        json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded()) {
          return InvalidArgumentError("Invalid JSON payload received: the body is not valid JSON");
        }
        return service->Create(Parent(req), body);
      }));

  server.Get(
      kParentPattern, Guarded([service](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(CheckParams(req, {"pageSize", "pageToken"}));
        int page_size = 0;
        if (req.has_param("pageSize")) {
          const std::string v = req.get_param_value("pageSize");
          size_t used = 0;
          try {
            page_size = std::stoi(v, &used);
          } catch (...) {
            used = 0;
          }
          if (used == 0 || used != v.size() || page_size < 0) {
            return InvalidArgumentError("pageSize: '" + v + "' must be a non-negative integer");
          }
        }
        TY_ASSIGN_OR_RETURN(StudyListPage page, service->List(Parent(req), page_size,
                                                              req.get_param_value("pageToken")));
        json out = json::object();
        if (!page.jobs.empty()) out["hyperparameterTuningJobs"] = page.jobs;
        if (!page.next_page_token.empty()) out["nextPageToken"] = page.next_page_token;
        return out;
      }));

  server.Get(kJobPattern, Guarded([service](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               return service->Get(JobName(req));
             }));

  server.Delete(
      kJobPattern, Guarded([service](const httplib::Request& req) -> StatusOr<json> {
        TY_RETURN_IF_ERROR(CheckParams(req, {}));
        TY_ASSIGN_OR_RETURN(json job, service->Delete(JobName(req)));
        std::string now = spec::FormatTimestamp(std::chrono::system_clock::now());
        return json{
            {"name", job["name"].get<std::string>() + "/operations/delete"},
            {"metadata",
             {{"@type", "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata"},
              {"genericMetadata", {{"createTime", now}, {"updateTime", now}}}}},
            {"done", true},
            {"response", {{"@type", "type.googleapis.com/google.protobuf.Empty"}}}};
      }));

  server.Post(std::string(kJobPattern) + ":cancel",
              Guarded([service](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                if (!req.body.empty()) {
                  json body = json::parse(req.body, nullptr, false);
                  if (body.is_discarded() || !body.is_object()) {
                    return InvalidArgumentError(
                        "Invalid JSON payload received: the cancel body must be {} or empty");
                  }
                }
                TY_RETURN_IF_ERROR(service->Cancel(JobName(req)));
                return json::object();
              }));
}

}  // namespace trainyard::study
