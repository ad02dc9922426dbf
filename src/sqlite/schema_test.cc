// sqlite/schema.h: every step once, in order, each atomic.
#include "sqlite/schema.h"

#include <gtest/gtest.h>

#include "sqlite/sqlite.h"
#include "testing/test_util.h"

namespace trainyard::sqlite {
namespace {

// The tables of `path` and its version: "v3: a b c".
std::string Tables(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "cannot open";
  std::string out = "v" + std::to_string(SchemaVersion(db).value_or(-1)) + ":";
  {
    Stmt q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (q.Step() == SQLITE_ROW) out += " " + q.Text(0);
  }
  sqlite3_close(db);
  return out;
}

Status MigrateFile(const std::filesystem::path& path, std::span<const SchemaStep> steps) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return UnavailableError("open");
  Status s = Migrate(db, steps, path.filename().string());
  sqlite3_close(db);
  return s;
}

TEST(SchemaTest, AFailingStepLeavesTheFileAtThePreviousStepWithNothingHalfDone) {
  auto dir = testing::MakeTestDir();
  const SchemaStep steps[] = {
      {1, "a", "CREATE TABLE a(x);"},
      {2, "b", "CREATE TABLE b(x); CREATE TABLE a(y);"},  // the second statement fails
      {3, "c", "CREATE TABLE c(x);"},
  };
  Status s = MigrateFile(dir / "t.db", steps);
  EXPECT_EQ(s.ToString(),
            "UNAVAILABLE: cannot upgrade t.db to schema 2 (b): table a already exists; it stays "
            "at schema 1");
  EXPECT_EQ(Tables(dir / "t.db"), "v1: a");
  const SchemaStep fixed[] = {steps[0], {2, "b", "CREATE TABLE b(x);"}, steps[2]};
  ASSERT_TRUE(MigrateFile(dir / "t.db", fixed).ok());
  ASSERT_TRUE(MigrateFile(dir / "t.db", fixed).ok());  // nothing left to run
  EXPECT_EQ(Tables(dir / "t.db"), "v3: a b c");
}

}  // namespace
}  // namespace trainyard::sqlite
