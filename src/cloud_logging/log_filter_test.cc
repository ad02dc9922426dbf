#include "cloud_logging/log_filter.h"

#include <gtest/gtest.h>

#include "common/time.h"

namespace trainyard::cloud_logging {
namespace {

EntryView Entry(const std::string& task, const std::string& time, bool err = false,
                const std::string& insert_id = "123-0000000000000001") {
  return {.project = "p",
          .job_id = "123",
          .task_name = task,
          .log_name = "projects/p/logs/" + task,
          .severity = err ? "ERROR" : "INFO",
          .timestamp = *ParseTimestamp(time),
          .text = "epoch 1 loss=0.5",
          .insert_id = insert_id};
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
  EXPECT_NE(LogFilter::Parse("resource.labels.job_id=1 OR severity=INFO")
                .status()
                .message()
                .find("joined by AND"),
            std::string::npos);
  EXPECT_NE(LogFilter::Parse("resource.labels.job_id=1 AND (severity=INFO")
                .status()
                .message()
                .find("without a matching ')'"),
            std::string::npos);
  EXPECT_NE(LogFilter::Parse("resource.labels.job_id=1 severity=INFO)")
                .status()
                .message()
                .find("unexpected ')'"),
            std::string::npos);
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=1 AND").ok());
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=1 AND ()").ok());
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=1 OR").ok());
  EXPECT_FALSE(LogFilter::Parse("NOT resource.labels.job_id=1").ok());
  EXPECT_NE(LogFilter::Parse("resource.labels.job_id=1 jsonPayload.x=1")
                .status()
                .message()
                .find("jsonPayload.x"),
            std::string::npos);
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=").ok());
  EXPECT_FALSE(LogFilter::Parse("resource.labels.job_id=1 severity=LOUD").ok());
}

// What `gcloud ai custom-jobs stream-logs` sends once it has seen a line
// (command_lib/logs/stream.py).
TEST(LogFilterTest, GcloudStreamLogsResumeFilterWithOrAndParentheses) {
  auto f = LogFilter::Parse(
      "resource.labels.job_id=\"123\" AND "
      "((timestamp=\"2026-11-23T19:00:00.000001Z\" AND insertId>\"123-0000000000000007\") OR "
      "timestamp>\"2026-11-23T19:00:00.000001Z\") AND timestamp<\"2026-11-23T20:00:00Z\"");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->job_id(), "123");
  const char* same = "2026-11-23T19:00:00.000001Z";
  std::string seen;
  for (auto [time, id] : std::vector<std::pair<const char*, const char*>>{
           {same, "123-0000000000000007"},                       // the resume point itself
           {same, "123-0000000000000012"},                       // same microsecond, later line
           {"2026-11-23T18:59:59Z", "123-0000000000000001"},     // before
           {"2026-11-23T19:30:00Z", "123-0000000000000020"},     // after
           {"2026-11-23T20:00:00Z", "123-0000000000000030"}}) {  // upper bound, excluded
    seen += f->Matches(Entry("workerpool0-0", time, false, id)) ? '1' : '0';
  }
  EXPECT_EQ(seen, "01010");
}

TEST(LogFilterTest, NotBindsTighterThanOrWhichBindsTighterThanAnd) {
  // Cloud Logging: `a OR b AND c` is `(a OR b) AND c`.
  auto f = LogFilter::Parse(
      "resource.labels.job_id=123 severity=ERROR OR textPayload:\"loss\" AND "
      "NOT logName=\"projects/p/logs/workerpool0-0\" -resource.labels.task_name=workerpool2-0");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->Matches(Entry("workerpool1-0", "2026-01-01T00:00:00Z", false)));
  EXPECT_FALSE(f->Matches(Entry("workerpool0-0", "2026-01-01T00:00:00Z", true)));
  EXPECT_FALSE(f->Matches(Entry("workerpool2-0", "2026-01-01T00:00:00Z", true)));
}

TEST(LogFilterTest, DeepNestingIsRefusedNotACrash) {
  std::string deep = "resource.labels.job_id=1 AND " + std::string(100000, '(') + "severity=INFO" +
                     std::string(100000, ')');
  auto status = LogFilter::Parse(deep).status();
  EXPECT_NE(status.message().find("nested deeper than 64"), std::string::npos) << status;
  std::string nots = "resource.labels.job_id=1 AND ";
  for (int i = 0; i < 100000; ++i) nots += "NOT ";
  EXPECT_FALSE(LogFilter::Parse(nots + "severity=INFO").ok());
  EXPECT_TRUE(LogFilter::Parse("resource.labels.job_id=1 AND " + std::string(10, '(') +
                               "severity=INFO" + std::string(10, ')'))
                  .ok());
}

}  // namespace
}  // namespace trainyard::cloud_logging
