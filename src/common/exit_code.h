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
//
// trainyard-bert, which runs as a job's replica, uses sysexits.h codes instead of 2, because a
// replica's exit code tells the executor whether a restart can help
// (replica_contract::IsPermanentExit): 64 a usage error (a flag), 66 a missing input, 77 no
// permission, 78 a configuration error; 1 for failures a restart may cure.
#pragma once

#include "common/status.h"

namespace trainyard {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitSoftware = 70;
inline constexpr int kExitTerminated = 143;
inline constexpr int kExitUsageError = 64;    // EX_USAGE
inline constexpr int kExitDataError = 65;     // EX_DATAERR
inline constexpr int kExitNoInput = 66;       // EX_NOINPUT
inline constexpr int kExitNoPermission = 77;  // EX_NOPERM
inline constexpr int kExitConfigError = 78;   // EX_CONFIG

// Who found the error: the tool itself (its flags, files, environment), or a server it called.
enum class ErrorOrigin { kInvocation, kServer };

// kExitOk for OK; kExitUsage for an invocation's INVALID_ARGUMENT, NOT_FOUND or
// FAILED_PRECONDITION; kExitFailure for everything else, including every server error.
int ExitCodeFor(const Status& status, ErrorOrigin origin = ErrorOrigin::kInvocation);

// trainyard-bert's code for `status`: kExitOk; INVALID_ARGUMENT kExitUsageError; NOT_FOUND
// kExitNoInput; PERMISSION_DENIED kExitNoPermission; FAILED_PRECONDITION kExitConfigError;
// kExitFailure for everything else (I/O, resources, a dead peer: a restart may help).
int TrainerExitCodeFor(const Status& status);

}  // namespace trainyard
