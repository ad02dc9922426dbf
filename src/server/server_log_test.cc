#include "server/server_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/test_util.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& file) { return testing::ReadFileOrDie(file); }

// The line without its timestamp (the first word).
std::string Untimed(const std::string& line) { return line.substr(line.find(' ') + 1); }

TEST(ServerLogTest, TextLinesCarryLevelEventMessageAndQuotedFields) {
  const fs::path file = testing::MakeTestDir() / "server.log";
  auto log = ServerLog::Open({file, false, LogLevel::kInfo});
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  (*log)->Log(LogLevel::kInfo, "request", "GET /v1/x 200 1.5ms",
              {{"caller", "t1"}, {"code", 200}, {"userAgent", "gcloud/1 (linux)"}});
  (*log)->Log(LogLevel::kDebug, "request", "not written");
  (*log)->Log(LogLevel::kWarning, "job", "two\nlines");
  const std::string text = Read(file);
  const size_t nl = text.find('\n');
  EXPECT_EQ(Untimed(text.substr(0, nl)),
            "INFO request GET /v1/x 200 1.5ms caller=t1 code=200 userAgent=\"gcloud/1 (linux)\"");
  EXPECT_EQ(Untimed(text.substr(nl + 1)), "WARNING job two\\nlines\n");
}

TEST(ServerLogTest, JsonLinesAreObjectsWithCloudLoggingSeverities) {
  const fs::path file = testing::MakeTestDir() / "server.log";
  auto log = ServerLog::Open({file, true, LogLevel::kWarning});
  ASSERT_TRUE(log.ok());
  (*log)->Log(LogLevel::kInfo, "request", "filtered out");
  (*log)->Log(LogLevel::kError, "retention", "the pass failed", {{"bytes", 12}});
  nlohmann::json j = nlohmann::json::parse(Read(file));
  j.erase("time");
  EXPECT_EQ(j.dump(),
            R"({"bytes":12,"event":"retention","message":"the pass failed","severity":"ERROR"})");
}

TEST(ServerLogTest, ReopenStartsANewFileAfterLogrotateMovedTheOldOne) {
  const fs::path dir = testing::MakeTestDir();
  auto log = ServerLog::Open({dir / "server.log", false, LogLevel::kInfo});
  ASSERT_TRUE(log.ok());
  (*log)->Log(LogLevel::kInfo, "reload", "before");
  fs::rename(dir / "server.log", dir / "server.log.1");
  (*log)->Log(LogLevel::kInfo, "reload", "moved");
  ASSERT_TRUE((*log)->Reopen().ok());
  (*log)->Log(LogLevel::kInfo, "reload", "after");
  EXPECT_EQ(std::to_string(Read(dir / "server.log.1").find("moved") != std::string::npos) +
                Untimed(Read(dir / "server.log")),
            "1INFO reload after\n");
}

TEST(ServerLogTest, AnUnwritableFileAndABadLevelAreNamed) {
  const fs::path blocked = testing::MakeTestDir() / "a-file";
  testing::WriteFileOrDie(blocked, "");
  auto log = ServerLog::Open({blocked / "server.log", false, LogLevel::kInfo});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(
      log.status().message().rfind("--log-file " + (blocked / "server.log").string() + ": ", 0), 0u)
      << log.status().message();
  EXPECT_EQ(ParseLogLevel("loud").status().message(),
            "--log-level: 'loud' is not one of debug, info, warning, error");
}

}  // namespace
}  // namespace trainyard::server
