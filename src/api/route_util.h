// Helpers every REST route family uses (customJobs, hyperparameterTuningJobs):
// one way to turn a handler's StatusOr<json> into a response, to reject unknown query
// parameters, to read integer parameters, and to shape the Operation a delete returns. Error
// bodies come from http_status.h, the one place where a Status becomes HTTP.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::api {

// Sends `body` (pretty-printed JSON) with `http_status`.
void SendJson(httplib::Response& res, int http_status, const nlohmann::json& body);
// Sends the google.rpc.Status body of `status` with its HTTP status.
void SendError(httplib::Response& res, const Status& status);

// Wraps a handler `StatusOr<json>(const httplib::Request&)`: 200 with the JSON on success, the
// error body otherwise; exceptions become INTERNAL (nothing escapes into the HTTP server).
template <typename Fn>
httplib::Server::Handler Guarded(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    try {
      StatusOr<nlohmann::json> body = fn(req);
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

// INVALID_ARGUMENT (Google's wording) for a query parameter that is neither in `known` nor one
// of the system parameters (alt, prettyPrint, $.xgafv, key, fields): unknown parameters are
// rejected like unknown JSON fields.
Status CheckParams(const httplib::Request& req, std::initializer_list<std::string_view> known);

// The integer query parameter `name` (`fallback` when absent). INVALID_ARGUMENT naming the
// parameter and the range when it is not an integer in [min, max].
StatusOr<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                           int64_t min, int64_t max);

// "projects/P/locations/L" from a route whose first two captures are the project and location.
std::string ParentOf(const httplib::Request& req);

// The body of a cancel request must be empty or a JSON object ({}); INVALID_ARGUMENT otherwise.
Status CheckEmptyBody(const httplib::Request& req);

// The google.longrunning.Operation a Delete returns: done at once (deletion is immediate).
nlohmann::json DoneDeleteOperation(const std::string& resource_name);

}  // namespace trainyard::api
