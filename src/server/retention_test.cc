#include "server/retention.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "common/beneath.h"
#include "controller/job_files.h"
#include "executor/gang_record.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

constexpr char kParent[] = "projects/p1/locations/us-central1";

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = testing::MakeTestDir();
    jobs_dir_ = data_ / "jobs";
    fs::create_directories(jobs_dir_);
    operations_ =
        std::make_unique<controller::OperationController>(&store_, [this] { return now_; });
    audit_ = std::move(*auth::AuditLog::Open(data_ / "auth.db"));
  }

  // A job row (ended `ended_ago` before now_ when `state` is terminal) and its dir with a log, a
  // work dir and an executor file.
  void AddJob(const std::string& id, spec::JobState state, hours ended_ago) {
    spec::CustomJob job;
    job.name = std::string(kParent) + "/customJobs/" + id;
    job.display_name = id;
    job.state = state;
    job.create_time = now_ - ended_ago - hours(1);
    if (spec::IsTerminal(state)) job.end_time = now_ - ended_ago;
    ASSERT_TRUE(store_.Create(job).ok());
    MakeJobDir(id);
  }
  void MakeJobDir(const std::string& id) {
    testing::WriteFileOrDie(jobs_dir_ / id / "logs" / "segment-0.log", "hello\n");
    testing::WriteFileOrDie(jobs_dir_ / id / "work" / "workerpool0-0" / "model.pt",
                            std::string(10000, 'x'));
    testing::WriteFileOrDie(jobs_dir_ / id / "executor_state.json", "{}");
    ASSERT_TRUE(executor::RegisterJobDir(data_, "executor", id, jobs_dir_ / id).ok());
  }

  Retention Make(RetentionPolicy policy = {}) {
    policy.interval = std::chrono::seconds(0);
    RetentionParts parts;
    parts.data_dir = data_;
    parts.jobs_dir = jobs_dir_;
    parts.registries = {"executor"};
    parts.jobs = &store_;
    parts.operations = operations_.get();
    parts.audit = audit_.get();
    parts.clock = [this] { return now_; };
    return Retention(policy, std::move(parts));
  }

  // What is under the jobs dir, one relative path per line, sorted.
  std::string Tree() const {
    std::vector<std::string> paths;
    for (const auto& e : fs::recursive_directory_iterator(jobs_dir_)) {
      if (!e.is_directory()) paths.push_back(fs::relative(e.path(), jobs_dir_).string());
    }
    std::sort(paths.begin(), paths.end());
    std::string out;
    for (const auto& p : paths) out += p + "\n";
    return out;
  }

  TimePoint now_ = std::chrono::system_clock::now();
  fs::path data_, jobs_dir_;
  store::MemoryJobStore store_;
  std::unique_ptr<controller::OperationController> operations_;
  std::unique_ptr<auth::AuditLog> audit_;
};

TEST_F(RetentionTest, EndedJobsLoseWorkFilesThenLogsRunningAndRecentOnesKeepEverything) {
  AddJob("old", spec::JobState::kSucceeded, hours(24 * 40));    // past both TTLs
  AddJob("week", spec::JobState::kFailed, hours(24 * 8));       // past the work-dir TTL
  AddJob("recent", spec::JobState::kSucceeded, hours(2));       // within both
  AddJob("running", spec::JobState::kRunning, hours(24 * 40));  // never ended
  Retention retention = Make();
  auto report = retention.Collect(/*dry_run=*/false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->Summary().substr(0, 50), "removed: 2 job work dirs, 1 job logs, 0 deleted jo");
  EXPECT_GT(report->bytes, 10000u);
  EXPECT_EQ(Tree(),
            "recent/executor_state.json\nrecent/logs/segment-0.log\n"
            "recent/work/workerpool0-0/model.pt\n"
            "running/executor_state.json\nrunning/logs/segment-0.log\n"
            "running/work/workerpool0-0/model.pt\n"
            "week/logs/segment-0.log\n");
  // The rows stay: a job is listed until it is deleted.
  EXPECT_TRUE(store_.Get(std::string(kParent) + "/customJobs/old").ok());
}

// A replica (another user under a root server) may leave links in its work dir: retention
// removes the links, never what they point at.
TEST_F(RetentionTest, LinksAReplicaPlantedAreRemovedNotFollowed) {
  AddJob("linked", spec::JobState::kSucceeded, hours(24 * 40));
  const fs::path outside = data_ / "outside";  // beside the jobs dir, not in it
  testing::WriteFileOrDie(outside / "precious", "keep");
  fs::create_directory_symlink(outside, jobs_dir_ / "linked" / "work" / "workerpool0-0" / "dir");
  fs::create_symlink(outside / "precious", jobs_dir_ / "linked" / "logs" / "segment-9.log");
  fs::remove_all(jobs_dir_ / "linked" / "executor_state.json");
  fs::create_directory_symlink(outside, jobs_dir_ / "linked" / "executor_state.json");
  Retention retention = Make();
  auto report = retention.Collect(false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(Tree() + "| " + testing::ReadFileOrDie(outside / "precious") + " " +
                std::to_string(fs::is_directory(outside)),
            "| keep 1");
}

TEST_F(RetentionTest, DryRunCountsTheSameAndRemovesNothing) {
  AddJob("old", spec::JobState::kSucceeded, hours(24 * 40));
  const std::string before = Tree();
  Retention retention = Make();
  auto dry = retention.Collect(/*dry_run=*/true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(Tree(), before);
  auto real = retention.Collect(/*dry_run=*/false);
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(dry->Summary().substr(14), real->Summary().substr(9));
}

TEST_F(RetentionTest, ADeletedJobsDirGoesWholeWhenItsLogExpiresWithItsRegistryEntry) {
  MakeJobDir("gone");
  MakeJobDir("gone-recently");
  auto jobs = BeneathDir::Open(jobs_dir_);
  ASSERT_TRUE(jobs.ok());
  const std::string name = std::string(kParent) + "/customJobs/";
  ASSERT_TRUE(controller::WriteTombstone(
                  *jobs, "gone", {name + "gone", "p1", now_ - hours(24 * 31), now_ - hours(1)})
                  .ok());
  ASSERT_TRUE(controller::WriteTombstone(*jobs, "gone-recently",
                                         {name + "gone-recently", "p1", now_ - hours(3), now_})
                  .ok());
  ASSERT_TRUE(controller::RemoveJobWorkFiles(*jobs, "gone-recently", false).ok());
  Retention retention = Make();
  auto report = retention.Collect(false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->deleted_jobs, 1);
  EXPECT_EQ(Tree(), "gone-recently/deleted.json\ngone-recently/logs/segment-0.log\n");
  EXPECT_FALSE(executor::LookupJobDir(data_, "executor", "gone").ok());
  EXPECT_TRUE(executor::LookupJobDir(data_, "executor", "gone-recently").ok());
}

TEST_F(RetentionTest, ADirWithoutARowGoesOnlyOnceItHasNotChangedForAnHour) {
  MakeJobDir("orphan");
  Retention retention = Make();
  auto fresh = retention.Collect(false);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->orphans, 0);  // maybe a job being created right now
  now_ += hours(2);
  auto later = retention.Collect(false);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->orphans, 1);
  EXPECT_EQ(Tree(), "");
}

TEST_F(RetentionTest, DoneOperationsAndAuditRowsExpireRunningOperationsStay) {
  const controller::OperationStart start{kParent, controller::kDeleteOperationMetadata, {}};
  auto done = operations_->RunNow(start, [] { return nlohmann::json{{"@type", "x"}}; });
  auto running = operations_->Begin(start);
  ASSERT_TRUE(done.ok() && running.ok());
  ASSERT_TRUE(audit_->Append({0, now_, "t1", "p1", "GET", "/v1/x", "read", 200}).ok());
  now_ += hours(24 * 100);
  ASSERT_TRUE(audit_->Append({0, now_, "t1", "p1", "GET", "/v1/y", "read", 200}).ok());
  Retention retention = Make();
  auto report = retention.Collect(false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->operations, 1);
  EXPECT_EQ(report->audit_rows, 1);
  EXPECT_FALSE(operations_->Get((*done)["name"]).ok());
  EXPECT_TRUE(operations_->Get((*running)["name"]).ok());
  auto left = audit_->Query({"", 0, 10});
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].path, "/v1/y");
}

TEST_F(RetentionTest, ZeroKeepsForever) {
  AddJob("old", spec::JobState::kSucceeded, hours(24 * 400));
  RetentionPolicy keep;
  keep.work_dir_ttl = keep.log_ttl = keep.operation_ttl = keep.audit_ttl = std::chrono::seconds(0);
  const std::string before = Tree();
  Retention retention = Make(keep);
  auto report = retention.Collect(false);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->Empty());
  EXPECT_EQ(Tree(), before);
}

TEST(RetentionTtlTest, ParsesDaysHoursAndZeroRefusesTheRestNamingTheFlag) {
  EXPECT_EQ(*ParseTtl("--log-ttl", "30d"), std::chrono::hours(24 * 30));
  EXPECT_EQ(*ParseTtl("--log-ttl", "12h"), std::chrono::hours(12));
  EXPECT_EQ(*ParseTtl("--log-ttl", "0"), std::chrono::seconds(0));
  auto bad = ParseTtl("--log-ttl", "30 days");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--log-ttl: '30 days' is not a duration; use 0 (keep forever) or a number with s, m, "
            "h or d, e.g. 30d or 12h");
}

TEST(GcReportTest, JsonRoundTrip) {
  GcReport r{true, 1, 2, 3, 4, 5000000000ull, 6, 7};
  EXPECT_EQ(GcReport::FromJson(r.ToJson()).ToJson(), r.ToJson());
}

}  // namespace
}  // namespace trainyard::server
