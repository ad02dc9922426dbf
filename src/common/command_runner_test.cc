#include "common/command_runner.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

// podman prints warnings before the error; the error is what a user needs to see.
TEST(LastNonEmptyLineTest, SkipsTrailingBlankLinesAndKeepsTheLastMessage) {
  EXPECT_EQ(LastNonEmptyLine("WARN[0000] cgroupv2 ...\nError: no such image\n\n  \r\n") + "|" +
                LastNonEmptyLine("") + "|" + LastNonEmptyLine(" \n\t\n") + "|" +
                LastNonEmptyLine("one line, no newline"),
            "Error: no such image|||one line, no newline");
}

}  // namespace
}  // namespace trainyard
