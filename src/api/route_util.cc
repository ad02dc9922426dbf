#include "api/route_util.h"

#include <set>

#include "api/http_status.h"
#include "common/json_parse.h"
#include "common/parse.h"
#include "common/time.h"
#include "protojson/parse.h"
#include "protojson/reader.h"
#include "spec/resource_name.h"

namespace trainyard::api {

using nlohmann::json;

void SendJson(httplib::Response& res, int http_status, const json& body) {
  res.status = http_status;
  res.set_content(body.dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                  "application/json; charset=utf-8");
}

void SendResult(httplib::Response& res, const ResponseFormat& format, json body) {
  try {
    if (format.enum_numbers) EnumsToNumbers(body);
  } catch (const std::exception&) {
    // Names are still a valid answer; failing here would turn a stored create into a 5xx.
  }
  res.status = 200;
  res.set_content(
      body.dump(format.pretty ? 2 : -1, ' ', false, json::error_handler_t::replace) + "\n",
      "application/json; charset=utf-8");
}

StatusOr<httplib::Request> WithEnumNames(const httplib::Request& req) {
  StatusOr<json> parsed = ParseJson(req.body);
  if (!parsed.ok()) return req;  // the handler reports the malformed JSON
  json body = std::move(parsed).value();
  TY_RETURN_IF_ERROR(EnumsToNames(body));
  httplib::Request named = req;
  named.body = body.dump();
  return named;
}

void SendError(httplib::Response& res, const Status& status) {
  SendJson(res, HttpStatusFor(status.code()), ErrorBody(status));
}

namespace {

template <typename Known>
Status CheckParamsIn(const httplib::Request& req, const Known& known) {
  for (const auto& [key, value] : req.params) {
    bool ok = IsSystemParam(key);
    for (const auto& k : known) ok |= (k == key);
    if (!ok) return protojson::UnknownQueryParameterError(key);
  }
  return Status::Ok();
}

}  // namespace

Status CheckParams(const httplib::Request& req, std::initializer_list<std::string_view> known) {
  return CheckParamsIn(req, known);
}

Status CheckParams(const httplib::Request& req, const std::vector<std::string>& known) {
  return CheckParamsIn(req, known);
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
  return spec::LocationName{req.matches[1], req.matches[2]}.ToString();
}

Status CheckEmptyBody(const httplib::Request& req) {
  if (req.body.empty()) return Status::Ok();
  StatusOr<json> body = protojson::ParseJson(req.body);
  if (!body.ok() || !body->is_object()) {
    return InvalidArgumentError(
        "Invalid JSON payload received: the cancel body must be {} or empty");
  }
  return Status::Ok();
}

}  // namespace trainyard::api
