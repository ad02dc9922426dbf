#include "data/label_map.h"

#include <gtest/gtest.h>

namespace trainyard::data {
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

// DIR/labels.json as make-splits wrote it before LabelMap owned the shape: split dirs made then
// must still train.
TEST(LabelMapTest, ReadsTheOldMakeSplitsShape) {
  constexpr char kOld[] = R"({
    "schema": "labels", "text_column": "text", "label_column": "label", "target_column": "Target",
    "num_labels": 3, "labels": ["ham", "spam", "eggs"],
    "label_to_id": {"eggs": 2, "ham": 0, "spam": 1}, "seed": 42,
    "fractions": {"train": 0.8, "eval": 0.1, "test": 0.1},
    "rows": {"train": 24, "eval": 3, "test": 3},
    "class_counts": {"train": [8, 8, 8], "eval": [1, 1, 1], "test": [1, 1, 1]},
    "inputs": ["a.csv"], "dropped_rows": 0})";
  EXPECT_EQ(Names(LabelMap::FromJson(kOld, "labels.json")), "ham,spam,eggs");
}

TEST(LabelMapTest, RoundTripsThroughToJson) {
  LabelMap m({"negative", "neutral", "positive"});
  EXPECT_EQ(Names(LabelMap::FromJson(m.ToJson(), "x")), "negative,neutral,positive");
}

TEST(LabelMapTest, WritesOneShapeWithProvenanceAfterTheLabels) {
  nlohmann::ordered_json provenance = {
      {"schema", "labels"}, {"seed", 7}, {"num_labels", 99}, {"labels", {"x"}}};
  EXPECT_EQ(nlohmann::ordered_json::parse(LabelMap({"b", "a"}).ToJson(provenance)).dump(),
            R"({"num_labels":2,"id2label":{"0":"b","1":"a"},"label2id":{"b":0,"a":1},)"
            R"("schema":"labels","seed":7})");
}

TEST(LabelMapTest, InvalidUtf8InNamesIsReplacedNotThrown) {
  const std::string json = LabelMap({"ok", "bad\xff"}).ToJson({{"inputs", {"f\xfe.csv"}}});
  EXPECT_EQ(Names(LabelMap::FromJson(json, "x")), "ok,bad\xef\xbf\xbd");
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
  EXPECT_EQ(Names(LabelMap::FromJson(R"({"num_labels":3,"id2label":{"0":"a","1":"b"}})", "l")),
            "INVALID_ARGUMENT: l: num_labels is 3 but 2 classes are named");
  EXPECT_FALSE(LabelMap::FromJson("[]", "f").ok());
  EXPECT_FALSE(LabelMap::FromJson("3", "f").ok());
}

}  // namespace
}  // namespace trainyard::data
