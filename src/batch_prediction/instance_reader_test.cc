#include "batch_prediction/instance_reader.h"

#include <gtest/gtest.h>

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;

std::vector<Instance> Read(std::string_view content, const std::string& format,
                           spec::InstanceConfig config = {}, Status* status = nullptr) {
  std::vector<Instance> out;
  int64_t index = 0;
  Status s =
      ForEachInstance(content, "gs://b/in", {format, config, nullptr}, &index, [&](Instance&& in) {
        out.push_back(std::move(in));
        return Status::Ok();
      });
  if (status) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return out;
}

TEST(InstanceReaderTest, JsonlLinesAreInstancesAndBadLinesAreErrorsNotTheEnd) {
  auto got =
      Read("\"a great movie\"\n\n{\"text\": \"dull\"}\r\n{broken\n[1,2]\n\xff\xfe\n", "jsonl");
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].input, "a great movie");
  EXPECT_EQ(got[1].input, json({{"text", "dull"}}));
  EXPECT_EQ(got[1].echo, got[1].input);
  EXPECT_NE(got[2].error.find("gs://b/in line 4: not valid JSON"), std::string::npos)
      << got[2].error;
  EXPECT_EQ(got[2].echo, "{broken");
  EXPECT_EQ(got[3].input, json::array({1, 2}));
  EXPECT_NE(got[4].error.find("line 6"), std::string::npos);
  EXPECT_NO_THROW((void)json(got[4].echo).dump());
}

TEST(InstanceReaderTest, DeepNestingIsAnErrorLine) {
  auto got = Read(std::string(500, '[') + std::string(500, ']') + "\n", "jsonl");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].error.find("deeper"), std::string::npos) << got[0].error;
}

TEST(InstanceReaderTest, KeyFieldBecomesTheKeyAndLeavesTheInstance) {
  spec::InstanceConfig c;
  c.key_field = "id";
  auto got = Read("{\"id\": 7, \"text\": \"x\"}\n{\"text\": \"no id\"}\n", "jsonl", c);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].keyed);
  EXPECT_EQ(got[0].echo, 7);
  EXPECT_EQ(got[0].input, json({{"text", "x"}}));
  EXPECT_NE(got[1].error.find("no field \"id\""), std::string::npos);
}

TEST(InstanceReaderTest, IncludedFieldsAsArrayInTheirOrderAndExcludedFieldsDropped) {
  spec::InstanceConfig arr;
  arr.instance_type = "array";
  arr.included_fields = {"b", "a", "missing"};
  auto got = Read("{\"a\": 1, \"b\": 2, \"c\": 3}\n", "jsonl", arr);
  EXPECT_EQ(got[0].input, json::array({2, 1, nullptr}));
  spec::InstanceConfig ex;
  ex.excluded_fields = {"c"};
  got = Read("{\"a\": 1, \"c\": 3}\n\"not an object\"\n", "jsonl", ex);
  EXPECT_EQ(got[0].input, json({{"a", 1}}));
  EXPECT_EQ(got[0].echo, json({{"a", 1}, {"c", 3}}));
  EXPECT_NE(got[1].error.find("JSON object"), std::string::npos);
}

TEST(InstanceReaderTest, CsvRowsAreArraysQuotedStringsUnquotedNumbers) {
  auto got = Read("text,score,n\n\"a, \"\"fine\"\" film\",0.5,\n\"x\",abc,1\n\"y\",1\n", "csv");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].input, json::array({"a, \"fine\" film", 0.5, nullptr}));
  EXPECT_NE(got[1].error.find("line 3: column 2: unquoted value 'abc' is not a number"),
            std::string::npos)
      << got[1].error;
  EXPECT_NE(got[2].error.find("2 cells, the header has 3"), std::string::npos) << got[2].error;
}

TEST(InstanceReaderTest, CsvKeyColumnAndHeaderErrors) {
  spec::InstanceConfig c;
  c.key_field = "id";
  auto got = Read("\"id\",\"text\"\n\"r1\",\"good\"\n", "csv", c);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].echo, "r1");
  EXPECT_EQ(got[0].input, json::array({"good"}));
  Status s;
  c.key_field = "key";
  Read("id,text\n", "csv", c, &s);
  EXPECT_NE(s.message().find("\"key\" is not a column of gs://b/in (its header: id, text)"),
            std::string::npos)
      << s.message();
  Read("\n\n", "csv", {}, &s);
  EXPECT_NE(s.message().find("no header row"), std::string::npos);
}

TEST(InstanceReaderTest, WantSkipsOtherShardsButCountsThem) {
  std::vector<json> got;
  int64_t index = 0;
  ReadSettings s{"jsonl", {}, [](int64_t i) { return i % 2 == 1; }};
  ASSERT_TRUE(ForEachInstance("1\n2\n3\n4\n5\n", "f", s, &index, [&](Instance&& in) {
                got.push_back(in.input);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(index, 5);
  EXPECT_EQ(got, (std::vector<json>{2, 4}));
}

TEST(InstanceReaderTest, ParseCsvLineQuotingErrors) {
  EXPECT_FALSE(ParseCsvLine("\"open").ok());
  EXPECT_FALSE(ParseCsvLine("\"a\"b").ok());
  EXPECT_FALSE(ParseCsvLine("a\"b").ok());
  EXPECT_FALSE(ParseCsvLine("\"\xff\"").ok());
  auto ok = ParseCsvLine("1, 2 ,\"\"");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(json(*ok), json::array({1.0, 2.0, ""}));
}

}  // namespace
}  // namespace trainyard::batch_prediction
