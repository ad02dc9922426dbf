// sqlite/schema.h: every step once, in order, each atomic; a backup before every upgrade of a
// database that holds anything, and no upgrade without it.
#include "sqlite/schema.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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

// The names in `dir`, sorted: "t.db t.db.pre-v1.bak".
std::string Files(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string Rows(const std::filesystem::path& path, const std::string& table) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return "cannot open";
  std::string out;
  {
    Stmt q(db, "SELECT x FROM " + table + " ORDER BY x");
    while (q.Step() == SQLITE_ROW) out += (out.empty() ? "" : " ") + q.Text(0);
  }
  sqlite3_close(db);
  return out;
}

const SchemaStep kTwoSteps[] = {
    {1, "a", "CREATE TABLE a(x);"},
    {2, "b", "CREATE TABLE b(x); INSERT INTO a VALUES ('added by 2');"},
};

TEST(SchemaTest, AnUpgradeFirstLeavesABackupAtTheOldVersionWithTheOldRows) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(MigrateFile(dir / "t.db", std::span(kTwoSteps).first(1)).ok());
  ASSERT_TRUE(ExecSqlOnFile(dir / "t.db", "INSERT INTO a VALUES ('old');").ok());
  ASSERT_TRUE(MigrateFile(dir / "t.db", kTwoSteps).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "t.db.pre-v1.bak").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Files(dir) + " | " + Tables(dir / "t.db.pre-v1.bak") + " " +
                Rows(dir / "t.db.pre-v1.bak", "a") + " | " + Tables(dir / "t.db") + " " +
                Rows(dir / "t.db", "a"),
            "t.db t.db.pre-v1.bak | v1: a old | v2: a b added by 2 old");
}

TEST(SchemaTest, AFreshDatabaseAndAnUpToDateOneGetNoBackup) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(MigrateFile(dir / "t.db", kTwoSteps).ok());
  ASSERT_TRUE(MigrateFile(dir / "t.db", kTwoSteps).ok());
  EXPECT_EQ(Files(dir), "t.db");
}

// A file of the releases before versioned upgrades: version 0 but tables in it.
TEST(SchemaTest, AnUnversionedDatabaseWithTablesIsBackedUpAsV0) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(ExecSqlOnFile(dir / "t.db", "CREATE TABLE a(x); INSERT INTO a VALUES ('old');").ok());
  const SchemaStep steps[] = {{1, "a", "CREATE TABLE IF NOT EXISTS a(x);"}};
  ASSERT_TRUE(MigrateFile(dir / "t.db", steps).ok());
  EXPECT_EQ(Files(dir) + " | " + Tables(dir / "t.db.pre-v0.bak") + " " +
                Rows(dir / "t.db.pre-v0.bak", "a"),
            "t.db t.db.pre-v0.bak | v0: a old");
}

// Upgrade after upgrade, only the two newest pre-upgrade copies stay (a copy per release would
// add up); other files that merely look alike are left alone.
TEST(SchemaTest, OnlyTheTwoNewestPreUpgradeCopiesAreKept) {
  auto dir = testing::MakeTestDir();
  const SchemaStep steps[] = {{1, "a", "CREATE TABLE a(x); INSERT INTO a VALUES ('old');"},
                              {2, "b", "CREATE TABLE b(x);"},
                              {3, "c", "CREATE TABLE c(x);"},
                              {4, "d", "CREATE TABLE d(x);"}};
  testing::WriteFileOrDie(dir / "t.db.pre-vX.bak", "not a copy");
  for (size_t n = 1; n <= 4; ++n) {
    ASSERT_TRUE(MigrateFile(dir / "t.db", std::span(steps).first(n)).ok());
  }
  EXPECT_EQ(Files(dir), "t.db t.db.pre-v2.bak t.db.pre-v3.bak t.db.pre-vX.bak");
}

// The dir is made read-only, which binds every user but root; root is refused by a non-empty
// directory where the backup would go (its rename fails as a full disk's write would).
TEST(SchemaTest, AnUpgradeWhoseBackupCannotBeWrittenIsRefusedAndTheFileStaysAsItWas) {
  auto dir = testing::MakeTestDir();
  ASSERT_TRUE(MigrateFile(dir / "t.db", std::span(kTwoSteps).first(1)).ok());
  ASSERT_TRUE(ExecSqlOnFile(dir / "t.db", "INSERT INTO a VALUES ('old');").ok());
  std::filesystem::create_directories(dir / "t.db.pre-v1.bak" / "blocker");
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  Status s = MigrateFile(dir / "t.db", kTwoSteps);
  ::chmod(dir.c_str(), 0755);
  const std::string expected =
      "UNAVAILABLE: refusing to upgrade t.db from schema 1 to 2 without "
      "its backup " +
      (dir / "t.db.pre-v1.bak").string() +
      "; free space there and start again (cannot write the database "
      "copy " +
      (dir / "t.db.pre-v1.bak").string() + " (";
  EXPECT_EQ(s.ToString().substr(0, expected.size()), expected) << s;
  EXPECT_NE(s.message().find(" MiB free in " + dir.string()), std::string::npos) << s;
  EXPECT_EQ(Files(dir) + " | " + Tables(dir / "t.db") + " " + Rows(dir / "t.db", "a"),
            "t.db t.db.pre-v1.bak | v1: a old");
}

}  // namespace
}  // namespace trainyard::sqlite
