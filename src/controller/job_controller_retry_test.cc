// JobController on a full disk (issue 47): writes the store refuses are made on the next
// RetryPendingWrites pass, and a job the executor could not take waits QUEUED instead of failing.
#include <gtest/gtest.h>

#include "controller/job_controller.h"
#include "executor/fake_executor.h"
#include "spec/custom_job_json.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;

// A store whose writes (Mutate) fail as a full disk's do while `full` is set.
class FillableStore : public store::MemoryJobStore {
 public:
  bool full = false;
  StatusOr<spec::CustomJob> Mutate(const std::string& name,
                                   const std::function<Status(spec::CustomJob&)>& mutate) override {
    if (full) return ResourceExhaustedError("the server's data directory is full (0.0 MiB free)");
    return MemoryJobStore::Mutate(name, mutate);
  }
};

class JobControllerRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JobControllerOptions options;
    options.jobs_dir = testing::MakeTestDir() / "jobs";
    controller_ = std::make_unique<JobController>(&store_, &executor_, &images_, nullptr, options);
    ASSERT_TRUE(controller_->Start().ok());
  }
  spec::CustomJob Create() {
    auto request = spec::ParseCustomJob(
        R"({"displayName":"x","jobSpec":{"workerPoolSpecs":[{"machineSpec":
            {"machineType":"n1-standard-4"},"replicaCount":"1",
            "containerSpec":{"imageUri":"local","command":["true"]}}]}})",
        spec::DecodeMode::kRequest);
    auto job = controller_->Create("projects/p/locations/l", *request);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : spec::CustomJob{};
  }
  std::string State(const spec::CustomJob& job) {
    auto got = controller_->Get(job.name);
    return got.ok() ? std::string(spec::JobStateName(got->state)) : got.status().ToString();
  }

  FillableStore store_;
  executor::FakeExecutor executor_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobControllerRetryTest, StateWritesAFullDiskRefusedAreMadeOnTheNextPass) {
  spec::CustomJob job = Create();
  store_.full = true;
  ASSERT_TRUE(executor_.Advance(job.Id(), GangState::kRunning).ok());
  ASSERT_TRUE(executor_.Advance(job.Id(), GangState::kSucceeded).ok());
  const std::string while_full =
      State(job) + " " + std::to_string(controller_->RetryPendingWrites());
  store_.full = false;
  const size_t left = controller_->RetryPendingWrites();
  EXPECT_EQ(while_full + " -> " + State(job) + " " + std::to_string(left),
            "JOB_STATE_QUEUED 1 -> JOB_STATE_SUCCEEDED 0");
}

TEST_F(JobControllerRetryTest, AJobTheExecutorHadNoRoomForWaitsQueuedAndIsHandedOverLater) {
  executor_.SetSubmitError(ResourceExhaustedError("the server's data directory is full"));
  spec::CustomJob job = Create();
  const std::string while_full =
      State(job) + " " + std::to_string(controller_->RetryPendingWrites());
  executor_.SetSubmitError(Status::Ok());
  const size_t left = controller_->RetryPendingWrites();
  ASSERT_TRUE(executor_.Advance(job.Id(), GangState::kSucceeded).ok());
  EXPECT_EQ(while_full + " -> " + std::to_string(left) + " " + State(job),
            "JOB_STATE_QUEUED 1 -> 0 JOB_STATE_SUCCEEDED");
}

TEST_F(JobControllerRetryTest, AWaitingJobCancelledMeanwhileEndsCancelled) {
  executor_.SetSubmitError(ResourceExhaustedError("the server's data directory is full"));
  spec::CustomJob job = Create();
  ASSERT_TRUE(controller_->Cancel(job.name).ok());
  executor_.SetSubmitError(Status::Ok());
  EXPECT_EQ(State(job) + " " + std::to_string(controller_->RetryPendingWrites()) + " " +
                std::to_string(executor_.submitted().size()),
            "JOB_STATE_CANCELLED 0 0");
}

}  // namespace
}  // namespace trainyard::controller
