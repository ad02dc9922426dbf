#include "cloud_logging/log_filter.h"

#include <gtest/gtest.h>

#include "common/time.h"

namespace trainyard::cloud_logging {
namespace {

EntryView Entry(const std::string& task, const std::string& time, bool err = false) {
  return {"123",
          task,
          "projects/p/logs/" + task,
          err ? "ERROR" : "INFO",
          *ParseTimestamp(time),
          "epoch 1 loss=0.5"};
}

TEST(LogFilterTest, GcloudStreamLogsFilter) {
  auto f = LogFilter::Parse(
      "resource.type=\"ml_job\" AND resource.labels.job_id=\"123\" AND "
      "timestamp>=\"1970-01-01T01:00:00.000000000Z\" AND "
      "timestamp<\"2026-11-23T19:47:45.016003Z\"");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->job_id(), "123");
  EXPECT_TRUE(f->Matches(Entry("workerpool0-0", "2026-11-23T19:00:00Z")));
  EXPECT_FALSE(f->Matches(Entry("workerpool0-0", "2026-11-23T19:47:45.016003Z")));
}

TEST(LogFilterTest, TaskNameSeverityTextAndNegation) {
  auto f = LogFilter::Parse(
      "resource.labels.job_id=123 labels.\"ml.googleapis.com/task_name\"=\"workerpool1-0\" "
      "severity>=ERROR textPayload:\"loss\" NOT logName=\"x\"");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->Matches(Entry("workerpool1-0", "2026-01-01T00:00:00Z", true)));
  EXPECT_FALSE(f->Matches(Entry("workerpool1-0", "2026-01-01T00:00:00Z", false)));
  EXPECT_FALSE(f->Matches(Entry("workerpool0-0", "2026-01-01T00:00:00Z", true)));
}

TEST(LogFilterTest, UnsupportedFiltersAreClearErrors) {
  EXPECT_NE(LogFilter::Parse("timestamp>=\"2026-01-01T00:00:00Z\"")
                .status()
                .message()
                .find("resource.labels.job_id"),
            std::string::npos);
  EXPECT_NE(
      LogFilter::Parse("resource.labels.job_id=1 OR severity=INFO").status().message().find("OR"),
      std::string::npos);
  EXPECT_NE(LogFilter::Parse("resource.labels.job_id=1 jsonPayload.x=1")
                .status()
                .message()
                .find("jsonPayload.x"),
            std::string::npos);
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=").ok());
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=1 severity=LOUD").ok());
}

}  // namespace
}  // namespace trainyard::cloud_logging
