#include "api/route_util.h"

#include <set>

#include "api/http_status.h"
#include "common/json_parse.h"
#include "common/parse.h"
#include "spec/time_util.h"

namespace trainyard::api {

using nlohmann::json;

void SendJson(httplib::Response& res, int http_status, const json& body) {
  res.status = http_status;
  res.set_content(body.dump(2) + "\n", "application/json; charset=utf-8");
}

void SendError(httplib::Response& res, const Status& status) {
  SendJson(res, HttpStatusFor(status.code()), ErrorBody(status));
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

StatusOr<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                           int64_t min, int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  const std::optional<int64_t> parsed = ParseInt64(v);
  const int64_t n = parsed.value_or(0);
  if (!parsed || n < min || n > max) {
    return InvalidArgumentError(name + ": '" + v + "' must be an integer between " +
                                std::to_string(min) + " and " + std::to_string(max));
  }
  return n;
}

std::string ParentOf(const httplib::Request& req) {
  return "projects/" + std::string(req.matches[1]) + "/locations/" + std::string(req.matches[2]);
}

Status CheckEmptyBody(const httplib::Request& req) {
  if (req.body.empty()) return Status::Ok();
  StatusOr<json> body = ParseJson(req.body);
  if (!body.ok() || !body->is_object()) {
    return InvalidArgumentError(
        "Invalid JSON payload received: the cancel body must be {} or empty");
  }
  return Status::Ok();
}

json DoneDeleteOperation(const std::string& resource_name) {
  std::string now = spec::FormatTimestamp(std::chrono::system_clock::now());
  return json{{"name", resource_name + "/operations/delete"},
              {"metadata",
               {{"@type", "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata"},
                {"genericMetadata", {{"createTime", now}, {"updateTime", now}}}}},
              {"done", true},
              {"response", {{"@type", "type.googleapis.com/google.protobuf.Empty"}}}};
}

}  // namespace trainyard::api
