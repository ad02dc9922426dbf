#include "executor/job_dir_layout.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;

// These names are on disk in existing data dirs: a change here breaks Adopt, Get and ReadLogs of
// jobs that ran before an upgrade.
TEST(JobDirLayoutTest, EveryEntryOfAJobDir) {
  const fs::path job = JobDir("/data/jobs", "42");
  const fs::path attempt = SlurmAttemptDir(job, 2);
  std::string paths;
  for (const fs::path& p :
       {job, JobLogDir(job), LocalStateFile(job), SlurmStateFile(job), ReplicaWorkDir(job, 1, 0),
        ReplicaDir(job, 1, 0), ReplicaAttemptFile(job, 1, 0, 3, "status"),
        ReplicaHpMetricFile(job, 0, 0), attempt, SlurmTaskDir(attempt, 2, 1)}) {
    paths += p.string() + "\n";
  }
  EXPECT_EQ(paths,
            "/data/jobs/42\n"
            "/data/jobs/42/logs\n"
            "/data/jobs/42/executor_state.json\n"
            "/data/jobs/42/slurm_state.json\n"
            "/data/jobs/42/work/workerpool1-0\n"
            "/data/jobs/42/replicas/workerpool1-0\n"
            "/data/jobs/42/replicas/workerpool1-0/attempt-3.status\n"
            "/data/jobs/42/replicas/workerpool0-0/hypertune/output.metrics\n"
            "/data/jobs/42/slurm/attempt-2\n"
            "/data/jobs/42/slurm/attempt-2/workerpool2-1\n");
}

TEST(JobDirLayoutTest, TheHpMetricFileIsAbsoluteForARelativeJobDir) {
  EXPECT_EQ(
      ReplicaHpMetricFile("jobs/7", 1, 2).string(),
      (fs::current_path() / "jobs/7/replicas/workerpool1-2/hypertune/output.metrics").string());
}

}  // namespace
}  // namespace trainyard::executor
