// Process exit codes of trainyard's binaries (`trainyard`, `trainyard-bert`): a Status becomes an
// exit code here and nowhere else.
//
//   0    success
//   1    the work failed: I/O, a dead or hung peer, an internal error, or any error a server
//        returned (as gcloud exits 1 for API errors)
//   2    the invocation is wrong: a flag, an input file or the environment the tool checked itself
//        (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION), fixable by the caller
//   70   an exception escaped a command (EX_SOFTWARE): a bug, never an expected failure
//   143  stopped by SIGTERM after saving its state (128 + SIGTERM); a rerun resumes
#pragma once

#include "common/status.h"

namespace trainyard {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSoftware = 70;
inline constexpr int kExitTerminated = 143;

// Who found the error: the tool itself (its flags, files, environment), or a server it called.
enum class ErrorOrigin { kInvocation, kServer };

// kExitOk for OK; kExitUsage for an invocation's INVALID_ARGUMENT, NOT_FOUND or
// FAILED_PRECONDITION; kExitFailure for everything else, including every server error.
int ExitCodeFor(const Status& status, ErrorOrigin origin = ErrorOrigin::kInvocation);

}  // namespace trainyard
