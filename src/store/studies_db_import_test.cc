// SqliteJobStore::ImportStudiesDb over a studies.db written by the StudyService that kept
// HP-tuning jobs in their own file (test/fixtures/studies_db).
#include <gtest/gtest.h>

#include "spec/hyperparameter_tuning_job_json.h"
#include "sqlite/sqlite.h"
#include "store/sqlite_job_store.h"
#include "testing/test_util.h"

namespace trainyard::store {
namespace {

class StudiesDbImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        sqlite::ExecSqlOnFile(dir_ / "studies.db", testing::ReadFileOrDie(testing::SourcePath(
                                                       "test/fixtures/studies_db/studies.sql")))
            .ok());
    auto store = SqliteJobStore::Open(dir_ / "jobs.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  // "display name (labels.team) runtime keys" of every tuning job, newest first.
  std::string Listed() {
    auto page = store_->ListTuningJobs({"projects/p/locations/l", "", 0, ""});
    if (!page.ok()) return page.status().ToString();
    std::string out;
    for (const auto& job : page->jobs) {
      auto record = store_->GetTuningJob(job.name);
      out += job.display_name + " (" + job.labels.at("team") + ")";
      for (const auto& [key, value] : record->runtime.items()) out += " " + key;
      out += "; ";
    }
    return out;
  }

  std::filesystem::path dir_ = testing::MakeTestDir();
  std::unique_ptr<SqliteJobStore> store_;
};

TEST_F(StudiesDbImportTest, ImportsEveryStudyOnceAndRenamesTheFile) {
  ASSERT_TRUE(store_->ImportStudiesDb(dir_ / "studies.db").ok());
  ASSERT_TRUE(store_->ImportStudiesDb(dir_ / "studies.db").ok());  // gone: nothing to do
  auto nlp = store_->ListTuningJobs({"projects/p/locations/l", "labels.team=nlp", 0, ""});
  ASSERT_TRUE(nlp.ok());
  EXPECT_EQ(Listed() + "| " + std::to_string(nlp->jobs.size()) + " " +
                std::to_string(std::filesystem::exists(dir_ / "studies.db")) + " " +
                std::to_string(std::filesystem::exists(dir_ / "studies.db.imported")),
            "legacy-cancelled (cv) runner trials; legacy-running (nlp) runner trials; | 1 0 1");
}

// A crash after the import's commit and before the rename repeats the import: no duplicates.
TEST_F(StudiesDbImportTest, ARepeatedImportSkipsStudiesAlreadyThere) {
  ASSERT_TRUE(store_->ImportStudiesDb(dir_ / "studies.db").ok());
  std::filesystem::rename(dir_ / "studies.db.imported", dir_ / "studies.db");
  ASSERT_TRUE(store_->ImportStudiesDb(dir_ / "studies.db").ok());
  EXPECT_EQ(Listed(), "legacy-cancelled (cv) runner trials; legacy-running (nlp) runner trials; ");
}

TEST_F(StudiesDbImportTest, NotAStudiesDatabaseIsDataLossAndTheFileStays) {
  testing::WriteFileOrDie(dir_ / "other.db", std::string(4096, 'x'));
  Status s = store_->ImportStudiesDb(dir_ / "other.db");
  EXPECT_EQ(std::string(StatusCodeName(s.code())) + " " +
                std::to_string(std::filesystem::exists(dir_ / "other.db")) + " [" + Listed() + "]",
            "DATA_LOSS 1 []");
}

}  // namespace
}  // namespace trainyard::store
