// Status and StatusOr<T>: expected failures as values (STYLE.md §6).
//
// A Status is OK or carries a code and a message. Messages name the offending field or file and,
// where there is one, the fix ("--epochs: must be >= 1, got 0"). Codes follow google.rpc.Code so
// the API layer maps them to HTTP in exactly one place (api/). Exceptions from LibTorch, SQLite,
// JSON parsers etc. are caught at each subsystem's edge and turned into a Status.
#pragma once

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace trainyard {

// Values match google.rpc.Code so they can be sent on the wire as-is.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT", "NOT_FOUND", ... (the google.rpc.Code enum names).
std::string_view StatusCodeName(StatusCode code);

// One entry of google.rpc.BadRequest: the field a request got wrong, as a path into the request
// ("jobSpec.workerPoolSpecs[0].replicaCount", "job.job_id"), and what is wrong with it. The API
// layer sends them in error.details so that clients can show each next to its field.
struct FieldViolation {
  std::string field;
  std::string description;
  friend bool operator==(const FieldViolation&, const FieldViolation&) = default;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (no-op for OK); field violations are kept.
  Status WithPrefix(std::string_view prefix) const;

  // The fields of the request this error is about (empty for errors that are not about one).
  const std::vector<FieldViolation>& field_violations() const { return violations_; }
  // A copy with one more field violation (no-op for OK). The message is unchanged: it stays the
  // human-readable summary, which names the field too.
  Status WithFieldViolation(std::string field, std::string description) const;
  // A copy whose field paths are "prefix.field" ("trialJobSpec" + "workerPoolSpecs[0]"), for a
  // codec that decodes a nested message with a codec of its own.
  Status WithFieldPrefix(std::string_view prefix) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::vector<FieldViolation> violations_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

inline Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
// INVALID_ARGUMENT "field: description" carrying that field violation: the form every validation
// error about one request field takes.
inline Status InvalidFieldError(const std::string& field, const std::string& description) {
  return InvalidArgumentError(field + ": " + description).WithFieldViolation(field, description);
}
inline Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status AlreadyExistsError(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status ResourceExhaustedError(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status OutOfRangeError(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status UnavailableError(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status CancelledError(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }
inline Status DeadlineExceededError(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
inline Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status UnimplementedError(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
// File-system and device failures. DATA_LOSS is reserved for corrupt durable state.
inline Status IoError(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status DataLossError(std::string m) { return Status(StatusCode::kDataLoss, std::move(m)); }
inline Status PermissionDeniedError(std::string m) {
  return Status(StatusCode::kPermissionDenied, std::move(m));
}
inline Status UnauthenticatedError(std::string m) {
  return Status(StatusCode::kUnauthenticated, std::move(m));
}

// Holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}             // NOLINT(google-explicit-constructor)
  StatusOr(T&& value) : value_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "StatusOr built from an OK Status has no value");
    if (status_.ok()) status_ = InternalError("StatusOr constructed from OK status without value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Precondition: ok(). Calling these on an error is a programmer error.
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace trainyard

#define TY_CONCAT_INNER_(a, b) a##b
#define TY_CONCAT_(a, b) TY_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define TY_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::trainyard::Status ty_status_ = (expr); \
    if (!ty_status_.ok()) return ty_status_; \
  } while (0)

// TY_ASSIGN_OR_RETURN(auto x, MakeX()); declares/assigns x or returns the error.
#define TY_ASSIGN_OR_RETURN(lhs, expr) \
  TY_ASSIGN_OR_RETURN_IMPL_(TY_CONCAT_(ty_statusor_, __LINE__), lhs, expr)
#define TY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
