#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace trainyard {
namespace {

std::string Nested(char open, char close, int depth, const std::string& inner = "1") {
  return std::string(depth, open) + inner + std::string(depth, close);
}

std::string Outcome(std::string_view text, JsonLimits limits = {}) {
  StatusOr<nlohmann::json> j = ParseJson(text, limits);
  return j.ok() ? "ok " + j->dump() : j.status().ToString();
}

TEST(JsonParseTest, ParsesAValue) {
  EXPECT_EQ(Outcome(R"({"a": [1, 2.5, "x", null, true], "b": {}})"),
            R"(ok {"a":[1,2.5,"x",null,true],"b":{}})");
}

TEST(JsonParseTest, AcceptsExactlyTheDepthLimit) {
  StatusOr<nlohmann::json> j = ParseJson(Nested('[', ']', 100));
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  const nlohmann::json* v = &*j;
  int depth = 0;
  while (v->is_array()) v = &(*v)[0], ++depth;
  EXPECT_EQ(depth, 100);
}

TEST(JsonParseTest, RefusesOneLevelMore) {
  EXPECT_EQ(Outcome(Nested('[', ']', 101)),
            "INVALID_ARGUMENT: JSON nests arrays/objects deeper than 100 levels; flatten the value "
            "(the limit is protobuf's)");
}

TEST(JsonParseTest, CountsObjectsAndArraysTogether) {
  std::string text;
  for (int i = 0; i < 6; ++i) text += (i % 2 ? "[" : "{\"k\":");
  text += "1";
  for (int i = 5; i >= 0; --i) text += (i % 2 ? "]" : "}");
  EXPECT_EQ(ParseJson(text, {.max_depth = 6}).ok(), true);
  EXPECT_EQ(ParseJson(text, {.max_depth = 5}).status().code(), StatusCode::kInvalidArgument);
}

// The request that killed the server: 200 000 unclosed brackets in 400 KB.
TEST(JsonParseTest, RefusesHostileDepthWithoutRecursing) {
  std::string text = Nested('[', ']', 200000);
  StatusOr<nlohmann::json> j = ParseJson(text);
  EXPECT_NE(j.status().message().find("deeper than 100"), std::string::npos) << j.status();
  std::string unclosed(400000, '[');
  EXPECT_NE(ParseJson(unclosed).status().message().find("deeper than 100"), std::string::npos);
}

TEST(JsonParseTest, RefusesTextOverTheSizeLimit) {
  EXPECT_EQ(Outcome("[1, 2, 3]", {.max_bytes = 8}),
            "INVALID_ARGUMENT: JSON text of 9 bytes exceeds the limit of 8 bytes");
}

TEST(JsonParseTest, MalformedTextNamesThePosition) {
  std::string out = Outcome("{\"a\": tru}");
  EXPECT_EQ(
      out.rfind("INVALID_ARGUMENT: invalid JSON: [json.exception.parse_error.101] parse error "
                "at line 1, column 10",
                0),
      0u)
      << out;
}

TEST(JsonParseTest, RefusesTrailingTextCommentsAndBadUtf8) {
  EXPECT_FALSE(ParseJson("{} {}").ok());
  EXPECT_FALSE(ParseJson("{} // c").ok());
  EXPECT_FALSE(ParseJson("\"\xff\"").ok());
  EXPECT_FALSE(ParseJson("").ok());
}

TEST(JsonParseTest, DuplicateKeysRefusedOnlyWhenAsked) {
  EXPECT_EQ(Outcome(R"({"a": 1, "a": 2})"), R"(ok {"a":2})");
  EXPECT_EQ(Outcome(R"({"a": {"b": 1}, "c": {"b": 2, "b": 3}})", {.reject_duplicate_keys = true}),
            "INVALID_ARGUMENT: duplicate key \"b\" in a JSON object");
  EXPECT_TRUE(ParseJson(R"([{"a": 1}, {"a": 2}])", {.reject_duplicate_keys = true}).ok());
}

TEST(JsonParseTest, OrThrowThrowsTheMessage) {
  EXPECT_EQ(ParseJsonOrThrow("[1]").dump(), "[1]");
  try {
    ParseJsonOrThrow(std::string(200, '['));
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("deeper than 100"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainyard
