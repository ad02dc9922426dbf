#include "common/exit_code.h"

namespace trainyard {

int ExitCodeFor(const Status& status, ErrorOrigin origin) {
  if (status.ok()) return kExitOk;
  if (origin == ErrorOrigin::kServer) return kExitFailure;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kFailedPrecondition:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

int TrainerExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitUsageError;
    case StatusCode::kNotFound:
      return kExitNoInput;
    case StatusCode::kPermissionDenied:
      return kExitNoPermission;
    case StatusCode::kFailedPrecondition:
      return kExitConfigError;
    default:
      return kExitFailure;
  }
}

}  // namespace trainyard
