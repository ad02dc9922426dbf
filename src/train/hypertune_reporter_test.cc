#include "train/hypertune_reporter.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/test_util.h"

namespace trainyard::train {
namespace {

TEST(PythonFloatReprTest, MatchesPythonRepr) {
  EXPECT_EQ(PythonFloatRepr(0.8123), "0.8123");
  EXPECT_EQ(PythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(PythonFloatRepr(0.0), "0.0");
  EXPECT_EQ(PythonFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(1732200000.5), "1732200000.5");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(123456.0), "123456.0");
  EXPECT_EQ(PythonFloatRepr(-2.5), "-2.5");
  EXPECT_EQ(PythonFloatRepr(0.1 + 0.2), "0.30000000000000004");
}

TEST(HypertuneReporterTest, WritesSortedKeysNewestLast) {
  auto dir = testing::MakeTestDir();
  double now = 1732200000.5;
  HypertuneReporter r(dir / "out.metrics", "7", "accuracy", false, [&] { return now; });
  ASSERT_TRUE(r.Report(0.8123, 3).ok());
  now += 1;
  ASSERT_TRUE(r.Report(0.85, 4).ok());
  EXPECT_EQ(testing::ReadFileOrDie(dir / "out.metrics"),
            "{\"accuracy\": \"0.8123\", \"global_step\": \"3\", \"timestamp\": 1732200000.5, "
            "\"trial\": \"7\"}\n"
            "{\"accuracy\": \"0.85\", \"global_step\": \"4\", \"timestamp\": 1732200001.5, "
            "\"trial\": \"7\"}\n");
}

TEST(HypertuneReporterTest, KeepsAtMostHundredLines) {
  auto dir = testing::MakeTestDir();
  HypertuneReporter r(dir / "m", "0", "val_acc", false, [] { return 1.0; });
  for (int i = 1; i <= 105; ++i) ASSERT_TRUE(r.Report(0.5, i).ok());
  std::string content = testing::ReadFileOrDie(dir / "m");
  EXPECT_EQ(std::count(content.begin(), content.end(), '\n'), 100);
  EXPECT_EQ(content.substr(0, content.find('\n')),
            "{\"global_step\": \"6\", \"timestamp\": 1.0, \"trial\": \"0\", \"val_acc\": \"0.5\"}");
}

TEST(HypertuneReporterTest, ResumedRunContinuesHistoryFreshRunReplacesIt) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "m", "{\"old\": 1}\n");
  HypertuneReporter resumed(dir / "m", "0", "accuracy", true, [] { return 2.0; });
  ASSERT_TRUE(resumed.Report(0.25, 2).ok());
  EXPECT_EQ(testing::ReadFileOrDie(dir / "m"),
            "{\"old\": 1}\n{\"accuracy\": \"0.25\", \"global_step\": \"2\", \"timestamp\": 2.0, "
            "\"trial\": \"0\"}\n");
  HypertuneReporter fresh(dir / "m", "0", "accuracy", false, [] { return 2.0; });
  ASSERT_TRUE(fresh.Report(0.25, 1).ok());
  EXPECT_EQ(
      testing::ReadFileOrDie(dir / "m"),
      "{\"accuracy\": \"0.25\", \"global_step\": \"1\", \"timestamp\": 2.0, \"trial\": \"0\"}\n");
}

}  // namespace
}  // namespace trainyard::train
