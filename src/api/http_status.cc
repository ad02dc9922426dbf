#include "api/http_status.h"

#include <cctype>
#include <string_view>

namespace trainyard::api {

int HttpStatusFor(StatusCode code, HttpStatusOverrides overrides) {
  for (const auto& [from, http] : overrides) {
    if (from == code) return http;
  }
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kUnknown:
      return 500;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kFailedPrecondition:
      return 400;
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDataLoss:
      return 500;
    case StatusCode::kUnauthenticated:
      return 401;
  }
  return 500;
}

nlohmann::json ErrorBody(int http_status, StatusCode code, const std::string& message) {
  return {{"error",
           {{"code", http_status},
            {"message", message},
            {"status", std::string(StatusCodeName(code))}}}};
}

namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The length of the field path `msg` starts with when it is followed by ": " (0 otherwise). A path
// is identifiers joined by '.', each optionally indexed ("a.b[2].c"); anything else (a sentence,
// a flag name such as --epochs, a file path) is not a field of the request.
size_t LeadingFieldPath(std::string_view msg) {
  size_t i = 0;
  while (true) {
    if (i >= msg.size() || !IsIdentStart(msg[i])) return 0;
    while (i < msg.size() && IsIdentChar(msg[i])) ++i;
    while (i < msg.size() && msg[i] == '[') {
      size_t j = i + 1;
      while (j < msg.size() && std::isdigit(static_cast<unsigned char>(msg[j]))) ++j;
      if (j == i + 1 || j >= msg.size() || msg[j] != ']') return 0;
      i = j + 1;
    }
    if (i < msg.size() && msg[i] == '.') {
      ++i;
      continue;
    }
    return msg.substr(i, 2) == ": " && i + 2 < msg.size() ? i : 0;
  }
}

}  // namespace

std::vector<FieldViolation> FieldViolationsOf(const Status& status) {
  if (!status.field_violations().empty()) return status.field_violations();
  const StatusCode c = status.code();
  if (c != StatusCode::kInvalidArgument && c != StatusCode::kFailedPrecondition &&
      c != StatusCode::kOutOfRange) {
    return {};
  }
  const std::string& msg = status.message();
  const size_t n = LeadingFieldPath(msg);
  if (n == 0) return {};
  return {{msg.substr(0, n), msg.substr(n + 2)}};
}

nlohmann::json ErrorBody(const Status& status) {
  nlohmann::json body = ErrorBody(HttpStatusFor(status.code()), status.code(), status.message());
  std::vector<FieldViolation> violations = FieldViolationsOf(status);
  if (violations.empty()) return body;
  nlohmann::json list = nlohmann::json::array();
  for (const FieldViolation& v : violations) {
    list.push_back({{"field", v.field}, {"description", v.description}});
  }
  body["error"]["details"] = nlohmann::json::array(
      {{{"@type", "type.googleapis.com/google.rpc.BadRequest"}, {"fieldViolations", list}}});
  return body;
}

}  // namespace trainyard::api
