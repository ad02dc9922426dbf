// server/backup.h: a data dir copied whole while its databases are open, its links listed and not
// followed; a backup put back only when it is whole, into a data dir no server uses, never over
// content unless --force moved it aside.
#include "server/backup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/backup_manifest.h"
#include "server/data_dir.h"
#include "sqlite/sqlite.h"
#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;

const TimePoint kNow = FromUnixMicros(1795672189000000);  // 2026-11-26T05:49:49Z

std::string Mode(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "missing";
  char buf[8];
  std::snprintf(buf, sizeof buf, "%o", st.st_mode & 07777);
  return buf;
}

// "jobs.db v4 job_labels=0 jobs=1 ...; auth.db v0 tokens=1; 3 files 17 bytes; skipped
// jobs/1/link symlink /etc, ...": a manifest in one line.
std::string Summary(const BackupManifest& m) {
  std::string out;
  for (const BackupDatabase& d : m.databases) {
    out += d.file + " v" + std::to_string(d.schema_version);
    for (const auto& [table, n] : d.rows) out += " " + table + "=" + std::to_string(n);
    out += "; ";
  }
  out += std::to_string(m.files.files) + " files " + std::to_string(m.files.bytes) + " bytes";
  for (const SkippedEntry& s : m.files.skipped) {
    out += "; skipped " + s.path + " " + s.kind + (s.target.empty() ? "" : " " + s.target);
  }
  return out;
}

class BackupTest : public ::testing::Test {
 protected:
  // A data dir as a server leaves it: jobs.db open (WAL) with one row, auth.db, job files with
  // their own modes, a link and a FIFO a job left, images.yaml, the lock and a pre-upgrade copy.
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    data_ = dir_ / "data";
    fs::create_directories(data_);
    auto store = store::SqliteJobStore::Open(data_ / "jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    ASSERT_TRUE(Sql(data_ / "jobs.db",
                    "INSERT INTO jobs VALUES('projects/p/locations/l/customJobs/1', "
                    "'projects/p/locations/l', 4, 'one', 1, 2, '{}');")
                    .ok());
    ASSERT_TRUE(Sql(data_ / "auth.db",
                    "PRAGMA journal_mode=WAL; CREATE TABLE tokens(id); INSERT INTO tokens "
                    "VALUES('t1');")
                    .ok());
    testing::WriteFileOrDie(data_ / "jobs/1/logs/replica.log", "hello\n");
    testing::WriteFileOrDie(data_ / "jobs/1/work/out.txt", "result");
    testing::WriteFileOrDie(data_ / "images.yaml", "{}\n");
    testing::WriteFileOrDie(data_ / "server.lock", "1\n");
    testing::WriteFileOrDie(data_ / "jobs.db.pre-v3.bak", "old");
    ::chmod((data_ / "jobs/1/logs/replica.log").c_str(), 0640);
    ::chmod((data_ / "jobs/1/work").c_str(), 0751);
    fs::create_symlink("/etc", data_ / "jobs/1/work/etc");
    ::mkfifo((data_ / "jobs/1/work/pipe").c_str(), 0600);
  }

  static Status Sql(const fs::path& db, const std::string& sql) {
    return sqlite::ExecSqlOnFile(db, sql);
  }

  StatusOr<BackupManifest> Backup(const fs::path& dest) {
    return BackupDataDir(data_, dest, {"9.9.9", kNow});
  }

  fs::path dir_, data_;
  std::unique_ptr<store::SqliteJobStore> store_;
};

TEST_F(BackupTest, CopiesEveryDatabaseAndJobFileWithTheirModesAndListsWhatItSkipped) {
  auto m = Backup(dir_ / "backup");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "backup")) {
    names.push_back(fs::relative(e.path(), dir_ / "backup").string() + ":" + Mode(e.path()));
  }
  std::sort(names.begin(), names.end());
  std::string listing;
  for (const auto& n : names) listing += n + " ";
  EXPECT_EQ(
      Summary(*m) + " | " + listing,
      "auth.db v0 tokens=1; jobs.db v4 job_labels=0 jobs=1 resources=0 tuning_jobs=0; 3 "
      "files 15 bytes; skipped jobs/1/work/etc symlink /etc; skipped jobs/1/work/pipe fifo "
      "| MANIFEST.json:644 auth.db:600 images.yaml:644 jobs.db:600 jobs/1/logs/replica.log:640 "
      "jobs/1/logs:755 jobs/1/work/out.txt:644 jobs/1/work:751 jobs/1:755 jobs:755 ");
  EXPECT_EQ(Mode(dir_ / "backup"), "700");
  auto decoded = DecodeManifest(testing::ReadFileOrDie(dir_ / "backup/MANIFEST.json"), "m");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(EncodeManifest(*decoded), EncodeManifest(*m));
}

// The server's open write transaction is not in the copy, and does not block it.
TEST_F(BackupTest, TakesTheLastCommittedStateWhileAWriterHoldsATransaction) {
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open((data_ / "jobs.db").c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer,
                         "BEGIN IMMEDIATE; INSERT INTO jobs VALUES('projects/p/locations/l/"
                         "customJobs/2', 'projects/p/locations/l', 1, 'two', 3, 3, '{}');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto m = Backup(dir_ / "backup");
  sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->databases[1].file + " jobs=" + std::to_string(m->databases[1].rows["jobs"]),
            "jobs.db jobs=1");
}

TEST_F(BackupTest, RefusesANonEmptyDestinationAndADirWithoutJobsDb) {
  testing::WriteFileOrDie(dir_ / "full/x", "");
  EXPECT_EQ(Backup(dir_ / "full").status().ToString(),
            "FAILED_PRECONDITION: the backup dir " + (dir_ / "full").string() +
                " exists and is not an empty dir; name a new dir");
  EXPECT_EQ(BackupDataDir(dir_ / "full", dir_ / "b", {}).status().ToString(),
            "FAILED_PRECONDITION: " + (dir_ / "full").string() +
                " has no jobs.db: is it a trainyard server's --data-dir?");
  fs::create_directories(dir_ / "empty");
  EXPECT_TRUE(Backup(dir_ / "empty").ok());
}

TEST_F(BackupTest, ARestoredDataDirHoldsWhatWasBackedUpWithPrivateDatabases) {
  ASSERT_TRUE(Backup(dir_ / "backup").ok());
  auto r = RestoreDataDir(dir_ / "backup", dir_ / "restored", {false, KnownSchemaVersions(), kNow});
  ASSERT_TRUE(r.ok()) << r.status();
  auto restored = BackupDataDir(dir_ / "restored", dir_ / "backup3", {"9.9.9", kNow});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(Summary(*restored) + " | " + Mode(dir_ / "restored/jobs.db") + " " +
                Mode(dir_ / "restored/auth.db") + " " +
                Mode(dir_ / "restored/jobs/1/logs/replica.log") + " " +
                testing::ReadFileOrDie(dir_ / "restored/jobs/1/logs/replica.log") +
                r->moved_aside.string(),
            "auth.db v0 tokens=1; jobs.db v4 job_labels=0 jobs=1 resources=0 tuning_jobs=0; 3 "
            "files 15 bytes | 600 600 640 hello\n");
}

TEST_F(BackupTest, RestoreRefusesADataDirAServerUses) {
  ASSERT_TRUE(Backup(dir_ / "backup").ok());
  auto held = DataDir::Lock(dir_ / "target");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(RestoreDataDir(dir_ / "backup", dir_ / "target", {}).status().ToString(),
            "FAILED_PRECONDITION: cannot restore: another trainyard server is using --data-dir " +
                (dir_ / "target").string() + "; stop it or choose another --data-dir");
}

TEST_F(BackupTest, RestoreMovesContentAsideOnlyWithForce) {
  ASSERT_TRUE(Backup(dir_ / "backup").ok());
  store_.reset();
  const std::string refused =
      RestoreDataDir(dir_ / "backup", data_, {false, KnownSchemaVersions(), kNow})
          .status()
          .ToString();
  EXPECT_EQ(refused,
            "FAILED_PRECONDITION: --data-dir " + data_.string() +
                " is not empty (auth.db, auth.db-shm, auth.db-wal, images.yaml, ...); restore into "
                "a new dir, or pass --force to move its content aside to " +
                data_.string() + ".before-restore-<time>");
  testing::WriteFileOrDie(data_ / "jobs/2/new.txt", "after the backup");
  auto r = RestoreDataDir(dir_ / "backup", data_, {true, KnownSchemaVersions(), kNow});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->moved_aside.string() + " " +
                testing::ReadFileOrDie(r->moved_aside / "jobs/2/new.txt") + " " +
                std::to_string(fs::exists(data_ / "jobs/2")) + " " +
                std::to_string(fs::exists(data_ / "jobs/1/work/out.txt")),
            data_.string() + ".before-restore-20261126T054949Z after the backup 0 1");
}

TEST_F(BackupTest, RestoreRefusesASchemaNewerThanThisBinaryReads) {
  ASSERT_TRUE(Backup(dir_ / "backup").ok());
  const std::map<std::string, int> latest = {{"jobs.db", 3}};
  EXPECT_EQ(RestoreDataDir(dir_ / "backup", dir_ / "t", {false, latest, kNow}).status().ToString(),
            "FAILED_PRECONDITION: " + (dir_ / "backup/jobs.db").string() +
                " is at schema 4, newer than this trainyard reads (3): the backup was written by "
                "trainyard 9.9.9; restore it with that version or a newer one");
  EXPECT_FALSE(fs::exists(dir_ / "t"));
}

TEST_F(BackupTest, RestoreRefusesADamagedOrIncompleteBackupBeforeTouchingTheDataDir) {
  ASSERT_TRUE(Backup(dir_ / "backup").ok());
  fs::remove(dir_ / "backup/jobs/1/work/out.txt");
  EXPECT_EQ(VerifyBackup(dir_ / "backup", KnownSchemaVersions()).status().ToString(),
            "FAILED_PRECONDITION: " + (dir_ / "backup").string() +
                " holds 2 files (9 bytes) besides its databases but MANIFEST.json says 3 (15 "
                "bytes): the backup is incomplete or was changed; restore another one");
  {
    std::FILE* f = std::fopen((dir_ / "backup/jobs.db").c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const std::string garbage(3 * 4096, 'U');  // pages 2-4: the first tables' b-trees
    std::fseek(f, 4096, SEEK_SET);
    std::fwrite(garbage.data(), 1, garbage.size(), f);
    std::fclose(f);
  }
  const std::string damaged =
      VerifyBackup(dir_ / "backup", KnownSchemaVersions()).status().ToString();
  EXPECT_TRUE(damaged.starts_with("FAILED_PRECONDITION: " + (dir_ / "backup/jobs.db").string() +
                                  " fails PRAGMA integrity_check"))
      << damaged;
  fs::remove(dir_ / "backup/MANIFEST.json");
  EXPECT_EQ(RestoreDataDir(dir_ / "backup", dir_ / "t", {}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(dir_ / "t"));
}

}  // namespace
}  // namespace trainyard::server
