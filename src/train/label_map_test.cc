#include "train/label_map.h"

#include <gtest/gtest.h>

namespace trainyard::train {
namespace {

std::string Names(const StatusOr<LabelMap>& m) {
  if (!m.ok()) return m.status().ToString();
  std::string out;
  for (const auto& n : m->names()) out += (out.empty() ? "" : ",") + n;
  return out;
}

TEST(LabelMapTest, ReadsEveryAcceptedShape) {
  EXPECT_EQ(Names(LabelMap::FromJson(R"(["neg","pos"])", "f")), "neg,pos");
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"id2label":{"1":"pos","0":"neg"}})", "f")), "neg,pos");
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"schema":"labels","labels":["a","b","c"],"num_labels":3})",
                                     "f")),
            "a,b,c");
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"0":"neg","1":"pos"})", "f")), "neg,pos");
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"pos":1,"neg":0})", "f")), "neg,pos");
}

TEST(LabelMapTest, RoundTripsThroughToJson) {
  LabelMap m({"negative", "neutral", "positive"});
  EXPECT_EQ(Names(LabelMap::FromJson(m.ToJson(), "x")), "negative,neutral,positive");
}

TEST(LabelMapTest, RejectsGapsDuplicatesAndGarbage) {
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"0":"a","2":"b"})", "labels.json")),
            "INVALID_ARGUMENT: labels.json: class ids must be 0..1 without gaps; id 1 is missing");
  EXPECT_EQ(Names(LabelMap::FromJson(R"(["a","a"])", "labels.json")),
            "INVALID_ARGUMENT: labels.json: class name 'a' is used twice; names must be unique");
  const std::string unparsable = Names(LabelMap::FromJson("{", "labels.json"));
  EXPECT_EQ(unparsable.substr(0, 47), "INVALID_ARGUMENT: labels.json: not valid JSON: ")
      << unparsable;
  EXPECT_NE(unparsable.find("line 1, column 2"), std::string::npos) << unparsable;  // where
  EXPECT_FALSE(LabelMap::FromJson("[]", "f").ok());
  EXPECT_FALSE(LabelMap::FromJson("3", "f").ok());
}

}  // namespace
}  // namespace trainyard::train
