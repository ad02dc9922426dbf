#include "executor/job_log.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

using std::chrono::system_clock;

LogRecord Rec(int pool, int replica, bool err, std::string text) {
  return {system_clock::time_point(std::chrono::seconds(1795315312)) + std::chrono::microseconds(5),
          pool, replica, err, std::move(text)};
}

std::string Render(const std::vector<LogLine>& lines) {
  std::string out;
  for (const auto& l : lines) {
    out += FormatLogTime(l.time) + " " + std::to_string(l.pool_index) + "/" +
           std::to_string(l.replica_index) + (l.is_stderr ? " E " : " O ") + l.text + "\n";
  }
  return out;
}

TEST(JobLogTest, FormatsUtcMicroseconds) {
  EXPECT_EQ(FormatLogTime(system_clock::time_point(std::chrono::seconds(1795315312)) +
                          std::chrono::microseconds(123456)),
            "2026-11-22T02:41:52.123456Z");
}

TEST(JobLogTest, RoundTripsRecordsAndResumesAfterACursor) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(AppendJobLog(dir, {}, {Rec(0, 0, false, "hello"), Rec(1, 2, true, "a b  c")}).ok());
  ASSERT_TRUE(AppendJobLog(dir, {}, {Rec(0, 0, false, "")}).ok());
  auto all = ReadJobLog(dir, -1, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Render(*all),
            "2026-11-22T02:41:52.000005Z 0/0 O hello\n"
            "2026-11-22T02:41:52.000005Z 1/2 E a b  c\n"
            "2026-11-22T02:41:52.000005Z 0/0 O \n");
  auto rest = ReadJobLog(dir, (*all)[0].offset, 100);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), 2u);
  EXPECT_EQ(rest->front().offset, (*all)[1].offset);
  EXPECT_TRUE(ReadJobLog(dir, all->back().offset, 100)->empty());
  EXPECT_EQ(ReadJobLog(dir, -1, 1)->size(), 1u);
  EXPECT_TRUE(ReadJobLog(dir / "missing", -1, 10)->empty());
}

TEST(JobLogTest, RotationKeepsTheFirstAndNewestSegmentsAndMarksTheGap) {
  auto dir = testing::MakeTestDir();
  LogLimits limits{200, 3};
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(AppendJobLog(dir, limits, {Rec(0, 0, false, "line " + std::to_string(i))}).ok());
  }
  auto lines = ReadJobLog(dir, -1, 1000);
  ASSERT_TRUE(lines.ok());
  ASSERT_GE(lines->size(), 4u);
  EXPECT_EQ((*lines)[0].text, "line 0");
  EXPECT_EQ(lines->back().text, "line 39");
  int gaps = 0;
  int64_t last = -1;
  for (const auto& l : *lines) {
    gaps += l.text.find("bytes of log were rotated away") != std::string::npos;
    EXPECT_GT(l.offset, last);
    last = l.offset;
  }
  EXPECT_EQ(gaps, 1);
  // A cursor inside the deleted range resumes at the oldest kept record after it.
  auto resumed = ReadJobLog(dir, (*lines)[1].offset + 300, 1000);
  ASSERT_TRUE(resumed.ok());
  ASSERT_FALSE(resumed->empty());
  EXPECT_EQ(resumed->back().text, "line 39");
}

TEST(JobLogTest, LastStderrLineIsTheReplicasOwnNewestOneAcrossSegments) {
  auto dir = testing::MakeTestDir();
  LogLimits limits{200, 8};
  ASSERT_TRUE(AppendJobLog(dir, limits, {Rec(0, 0, true, "first reason")}).ok());
  for (int i = 0; i < 20; ++i) {  // several segments with nothing of replica 0/0 on stderr
    ASSERT_TRUE(AppendJobLog(dir, limits,
                             {Rec(0, 0, false, "out " + std::to_string(i)),
                              Rec(1, 0, true, "worker err " + std::to_string(i))})
                    .ok());
  }
  const std::string early = LastStderrLine(dir, 0, 0);
  ASSERT_TRUE(
      AppendJobLog(dir, limits, {Rec(0, 0, true, "the reason"), Rec(0, 0, false, "x")}).ok());
  EXPECT_EQ(early + " | " + LastStderrLine(dir, 0, 0) + " | " + LastStderrLine(dir, 1, 0) + " | '" +
                LastStderrLine(dir, 2, 0) + "' | '" + LastStderrLine(dir / "missing", 0, 0) + "'",
            "first reason | the reason | worker err 19 | '' | ''");
}

TEST(JobLogTest, SeverityOfTheReplicasLinesByStreamAndOfTheNotesByWhatTheySay) {
  auto severity = [](bool is_stderr, const std::string& text) {
    LogLine line;
    line.is_stderr = is_stderr;
    line.text = text;
    return LogSeverity(line);
  };
  std::string got;
  for (const auto& [is_stderr, text] : std::vector<std::pair<bool, std::string>>{
           {false, "epoch 1"},
           {true, "Traceback (most recent call last):"},
           {true, "[trainyard] workerpool0-0 exited with code 0"},
           {true, "[trainyard] workerpool0-0 exited with code 2"},
           {true, "[trainyard] workerpool0-0 exited with code 07"},
           {true, "[trainyard] srun exited with code 137"},
           {true, "[trainyard] workerpool0-0 killed by signal 9"},
           {true, "[trainyard] cannot execute 'python3': No such file or directory"},
           {true, "[trainyard] restarting the whole job (1 of 3 restarts)"},
           {true, "[trainyard] 4096 bytes of log were rotated away"},
           {false, "[trainyard] pull: Copying blob 1234"},
           {true, "[trainyard] trainyard server 0.1: this host has 2 CPUs"}}) {
    got += severity(is_stderr, text) + " ";
  }
  EXPECT_EQ(got, "INFO ERROR INFO ERROR ERROR ERROR ERROR ERROR WARNING WARNING INFO INFO ");
}

TEST(JobLogTest, SplitterEmitsLinesAndCutsOverlongOnes) {
  LineSplitter s;
  EXPECT_EQ(s.Feed("a\nbc"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(s.Feed("d\n\n"), (std::vector<std::string>{"bcd", ""}));
  EXPECT_EQ(s.Feed("tail"), std::vector<std::string>{});
  EXPECT_EQ(s.Flush(), (std::vector<std::string>{"tail"}));
  std::string huge(kMaxLineBytes + 10, 'x');
  auto parts = s.Feed(huge + "\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].size(), kMaxLineBytes);
  EXPECT_EQ(parts[1].size(), 10u);
}

}  // namespace
}  // namespace trainyard::executor
