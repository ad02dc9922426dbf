#include "data/label_mapping.h"

#include <gtest/gtest.h>

namespace trainyard::data {
namespace {

std::string Score(std::string_view field) {
  auto s = ParseSentimentScore(field);
  if (!s.ok()) return s.status().ToString();
  if (!s->has_value()) return "missing";
  return std::to_string(SentimentTarget(**s));
}

TEST(LabelMappingTest, SentimentTargetsFollowTheArticle) {
  // -1e-999 underflows to -0.0, which Python also reads as == 0 (neutral).
  std::string got;
  for (const char* f :
       {"-0.7", "0", "0.0", "-0", "1e-9", "+2", " 0.5 ", "-inf", "1e999", "-1e-999"}) {
    got += Score(f) + " ";
  }
  EXPECT_EQ(got, "0 1 1 1 2 2 2 0 2 1 ");
}

TEST(LabelMappingTest, PandasNaSpellingsAreMissing) {
  std::string got;
  for (const char* f : {"", "  ", "NaN", "nan", "NA", "N/A", "null", "None", "#N/A", "<NA>"}) {
    got += Score(f) + " ";
  }
  EXPECT_EQ(got,
            "missing missing missing missing missing missing missing missing missing missing ");
}

TEST(LabelMappingTest, NonNumericScoreIsAnError) {
  EXPECT_EQ(
      Score("positive") + " | " + Score("1.5x") + " | " + Score("+-1"),
      "INVALID_ARGUMENT: 'positive' is not a number | INVALID_ARGUMENT: '1.5x' is not a number "
      "| INVALID_ARGUMENT: '+-1' is not a number");
}

TEST(LabelMappingTest, IntegerLabelsSortNumericallyOthersByBytes) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + ",";
    return s;
  };
  EXPECT_EQ(join(SortLabels({"10", "2", "-1", "2", "0"})) + " " +
                join(SortLabels({"pos", "neg", "neutral", "10", "neg"})),
            "-1,0,2,10, 10,neg,neutral,pos,");
}

TEST(LabelMappingTest, TrimField) { EXPECT_EQ(TrimField(" \t a b \r\n"), "a b"); }

}  // namespace
}  // namespace trainyard::data
