#include "api/http_status.h"

namespace trainyard::api {

int HttpStatusFor(StatusCode code) {
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

nlohmann::json ErrorBody(const Status& status) {
  return ErrorBody(HttpStatusFor(status.code()), status.code(), status.message());
}

}  // namespace trainyard::api
