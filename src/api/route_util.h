// Helpers every REST route family uses (the shared resource layer, resource_routes.h, and the
// routes of other APIs): one way to turn a handler's StatusOr<json> into a response, to reject
// unknown query parameters and to read integer parameters. Error bodies come from http_status.h,
// the one place where a Status becomes HTTP.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/system_params.h"
#include "common/status.h"
#include "store/job_store.h"

namespace trainyard::api {

// Sends `body` (pretty-printed JSON) with `http_status`.
void SendJson(httplib::Response& res, int http_status, const nlohmann::json& body);
// Sends the google.rpc.Status body of `status` with its HTTP status.
void SendError(httplib::Response& res, const Status& status);

// Sends a handler's result in the format the request's system parameters ask for
// (system_params.h: enum numbers, prettyPrint). Never throws: a create that was stored must not
// be answered with a 5xx (gcloud retries those, creating a duplicate job).
void SendResult(httplib::Response& res, const ResponseFormat& format, nlohmann::json body);
// A copy of `req` whose JSON body has enum names instead of numbers (enum-encoding=int).
StatusOr<httplib::Request> WithEnumNames(const httplib::Request& req);

// Wraps a handler `StatusOr<json>(const httplib::Request&)`: 200 with the JSON on success, the
// error body otherwise; exceptions become INTERNAL (nothing escapes into the HTTP server).
// Google's system parameters ($alt=json;enum-encoding=int, prettyPrint, ...) are applied here.
// A request already answered 413 before routing (its body over the limit) is left as it is.
template <typename Fn>
httplib::Server::Handler Guarded(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413) return;  // body over the limit, read only to answer (api_server.cc)
    try {
      StatusOr<ResponseFormat> format = ParseSystemParams(req);
      if (!format.ok()) return SendError(res, format.status());
      auto run = [&]() -> StatusOr<nlohmann::json> {
        if (!format->enum_numbers || req.body.empty()) return fn(req);
        TY_ASSIGN_OR_RETURN(httplib::Request named, WithEnumNames(req));
        return fn(named);
      };
      StatusOr<nlohmann::json> body = run();
      if (body.ok()) {
        SendResult(res, *format, std::move(body).value());
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

// INVALID_ARGUMENT (Google's wording) for a query parameter that is neither in `known` nor a
// system parameter (IsSystemParam): unknown parameters are rejected like unknown JSON fields.
Status CheckParams(const httplib::Request& req, std::initializer_list<std::string_view> known);
Status CheckParams(const httplib::Request& req, const std::vector<std::string>& known);

// The integer query parameter `name` (`fallback` when absent). INVALID_ARGUMENT naming the
// parameter and the range when it is not an integer in [min, max].
StatusOr<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                           int64_t min, int64_t max);

// "projects/P/locations/L" from a route whose first two captures are the project and location.
std::string ParentOf(const httplib::Request& req);

// A list response as Vertex writes it: {"<field>": [to_json(job)...], "nextPageToken": "..."},
// with the list and the token left out when empty.
template <typename Job, typename ToJson>
nlohmann::json ListResponse(const char* field, const std::vector<Job>& jobs,
                            const std::string& next_page_token, ToJson to_json) {
  nlohmann::json out = nlohmann::json::object();
  if (!jobs.empty()) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& job : jobs) items.push_back(to_json(job));
    out[field] = std::move(items);
  }
  if (!next_page_token.empty()) out["nextPageToken"] = next_page_token;
  return out;
}

// The body of a cancel request must be empty or a JSON object ({}); INVALID_ARGUMENT otherwise.
Status CheckEmptyBody(const httplib::Request& req);

}  // namespace trainyard::api
