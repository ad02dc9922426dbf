#include "protojson/parse.h"

#include <gtest/gtest.h>

namespace trainyard::protojson {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJsonTest, ParsesDocuments) {
  auto j = ParseJson(R"({"a": [1, "x", null]})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->dump(), R"({"a":[1,"x",null]})");
}

TEST(ParseJsonTest, MalformedInputNamesThePosition) {
  auto j = ParseJson(R"({"displayName": )");
  EXPECT_TRUE(j.status().message().starts_with("Invalid JSON payload received. ")) << j.status();
  EXPECT_NE(j.status().message().find("line 1, column 17"), std::string::npos) << j.status();
}

TEST(ParseJsonTest, RefusesNestingPastTheLimit) {
  EXPECT_TRUE(ParseJson(Nested(kMaxDepth)).ok());
  EXPECT_EQ(ParseJson(Nested(kMaxDepth + 1)).status().message(),
            "Invalid JSON payload received. JSON nests arrays/objects deeper than 100 levels; "
            "flatten the value (the limit is protobuf's)");
  // Deep enough to overflow the stack of a recursive reader, and refused without building it.
  EXPECT_FALSE(ParseJson(Nested(1000000)).ok());
}

}  // namespace
}  // namespace trainyard::protojson
