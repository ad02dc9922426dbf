#include "train/metrics.h"

#include <gtest/gtest.h>

namespace trainyard::train {
namespace {

// Hand-computed 3-class case. Truth rows, predicted columns:
//            pred0 pred1 pred2
//   truth0     5     1     0     support 6
//   truth1     2     3     1     support 6
//   truth2     0     0     4     support 4
// precision: 5/7, 3/4, 4/5; recall: 5/6, 3/6, 4/4
// f1_0 = 2*(5/7)(5/6)/((5/7)+(5/6)) = 10/13; f1_1 = 2*(3/4)(1/2)/(5/4) = 3/5; f1_2 = 8/9
TEST(MetricsTest, ThreeClassHandComputed) {
  ConfusionMatrix cm(3);
  cm.Add(0, 0, 5);
  cm.Add(0, 1, 1);
  cm.Add(1, 0, 2);
  cm.Add(1, 1, 3);
  cm.Add(1, 2, 1);
  cm.Add(2, 2, 4);
  EvalMetrics m = ComputeMetrics(cm, /*loss_sum=*/8.0, {"neg", "neu", "pos"});
  EXPECT_EQ(m.examples, 16);
  EXPECT_DOUBLE_EQ(m.loss, 0.5);
  EXPECT_DOUBLE_EQ(m.accuracy, 12.0 / 16.0);
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 5.0 / 7.0);
  EXPECT_DOUBLE_EQ(m.per_class[1].recall, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 0.8);
  EXPECT_NEAR(m.per_class[0].f1, 10.0 / 13.0, 1e-15);
  EXPECT_NEAR(m.per_class[1].f1, 0.6, 1e-15);
  EXPECT_NEAR(m.per_class[2].f1, 8.0 / 9.0, 1e-15);
  EXPECT_NEAR(m.macro_f1, (10.0 / 13.0 + 0.6 + 8.0 / 9.0) / 3.0, 1e-15);
  EXPECT_EQ(m.per_class[1].support, 6);
}

// A class never predicted has precision 0 (sklearn zero_division=0); a class absent from both
// truth and predictions is left out of the macro average (sklearn's labels=None).
TEST(MetricsTest, ZeroDivisionAndAbsentClass) {
  ConfusionMatrix cm(3);
  cm.Add(0, 0, 3);
  cm.Add(1, 0, 1);  // class 1 never predicted; class 2 absent
  EvalMetrics m = ComputeMetrics(cm, 0, {"a", "b", "c"});
  EXPECT_DOUBLE_EQ(m.per_class[1].precision, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[1].f1, 0.0);
  // f1_0 = 2*(3/4)*1/(3/4+1) = 6/7; macro over classes 0 and 1 only.
  EXPECT_NEAR(m.macro_f1, (6.0 / 7.0) / 2.0, 1e-15);
}

TEST(MetricsTest, JsonHasConfusionRowsAsTruth) {
  ConfusionMatrix cm(2);
  cm.Add(0, 1, 2);
  cm.Add(1, 1, 1);
  nlohmann::json j = MetricsToJson(ComputeMetrics(cm, 0, {"n", "p"}));
  EXPECT_EQ(j["confusion_matrix"].dump(), "[[0,2],[0,1]]");
}

}  // namespace
}  // namespace trainyard::train
