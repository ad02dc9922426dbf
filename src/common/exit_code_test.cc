#include "common/exit_code.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(ExitCodeTest, OneMappingForEveryBinary) {
  std::string got;
  for (const Status& s : {Status::Ok(), InvalidArgumentError("--epochs: must be >= 1"),
                          NotFoundError("x.csv does not exist"), FailedPreconditionError("ckpt"),
                          UnavailableError("peer gone"), InternalError("bug")}) {
    got += std::to_string(ExitCodeFor(s)) + "/" +
           std::to_string(ExitCodeFor(s, ErrorOrigin::kServer)) + " ";
  }
  EXPECT_EQ(got, "0/0 2/1 2/1 2/1 1/1 1/1 ");
}

// The trainer's codes are the ones replica_contract::IsPermanentExit ends a job on at once,
// except kExitFailure, which a restart may cure.
TEST(ExitCodeTest, TrainerUsesSysexitsCodes) {
  std::string got;
  for (const Status& s :
       {Status::Ok(), InvalidArgumentError("--epochs: must be >= 1"), NotFoundError("x.csv"),
        PermissionDeniedError("out"), FailedPreconditionError("ckpt"),
        UnavailableError("peer gone"), ResourceExhaustedError("disk full")}) {
    got += std::to_string(TrainerExitCodeFor(s)) + " ";
  }
  EXPECT_EQ(got, "0 64 66 77 78 1 1 ");
}

}  // namespace
}  // namespace trainyard
