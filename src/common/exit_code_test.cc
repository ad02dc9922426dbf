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

}  // namespace
}  // namespace trainyard
