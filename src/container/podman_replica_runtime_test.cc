// PodmanReplicaRuntime and trainyard-container-run's spec without podman: the spec round trip,
// pull policy, image checks, how a recorded start failure and a lost supervisor are observed,
// and that Kill/Release act on the container (FakeContainerEngine).
#include "container/podman_replica_runtime.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "common/file_util.h"
#include "container/container_run.h"
#include "container/fake_container_engine.h"
#include "testing/test_util.h"

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;
using executor::GangFailure;
using executor::ReplicaHandle;
using executor::ReplicaObservation;

TEST(ContainerRunSpecTest, RoundTripsThroughJson) {
  ContainerRunSpec s;
  s.podman.global_args = {"--root", "/r"};
  s.runtime.runtime = "runc";
  s.runtime.ulimits = {"nofile=20000:20000"};
  s.requested_image = "eu.gcr.io/p/t:dev";
  s.pull = PullPolicy::kAlways;
  s.container.name = "trainyard-1-wp0-0";
  s.container.image = "127.0.0.1:5000/t:dev";
  s.container.command = std::vector<std::string>{"sh", "-c"};
  s.container.env = {{"RANK", "0"}};
  s.container.memory_bytes = 1 << 30;
  s.container.gpus = {1};
  s.container.uid = 65534;
  s.container.gid = 65534;
  s.container.groups = {995};
  s.container.read_only_mounts = {"/etc/pip.conf"};
  s.error_file = "/x/attempt-1.container-error";
  auto back = ContainerRunSpecFromJson(ContainerRunSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ContainerRunSpecToJson(*back), ContainerRunSpecToJson(s));
  EXPECT_FALSE(back->container.args.has_value());
  EXPECT_EQ(back->container.uid, 65534u);
  EXPECT_EQ(back->container.groups, std::vector<uint32_t>{995});
  EXPECT_EQ(back->container.read_only_mounts, std::vector<fs::path>{"/etc/pip.conf"});
  EXPECT_EQ(ContainerRunSpecFromJson("{}").status().code(), StatusCode::kInvalidArgument);
}

TEST(PodmanReplicaRuntimeTest, PullsLatestAlwaysAndPinnedTagsWhenMissing) {
  EXPECT_EQ(std::to_string(PullPolicyFor("r/a:latest") == PullPolicy::kAlways) +
                std::to_string(PullPolicyFor("r/a:v1") == PullPolicy::kAlways) +
                std::to_string(PullPolicyFor("r/a:latest@sha256:ab") == PullPolicy::kAlways) +
                std::to_string(PullPolicyFor("localhost/a:latest") == PullPolicy::kAlways),
            "1000");
}

class PodmanReplicaRuntimeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    PodmanReplicaRuntimeOptions options;
    options.registry = "127.0.0.1:5000";
    options.runtime = PodmanRuntime{"runc", {}, false, "runc"};
    options.engine = &engine_;
    runtime_ = std::make_unique<PodmanReplicaRuntime>(options);
    handle_.pid_file = dir_ / "attempt-1.pid";
    handle_.status_file = dir_ / "attempt-1.status";
    handle_.container = "trainyard-1-wp0-0";
    engine_.AddImage("img");
  }
  std::string Describe(const ReplicaObservation& o) {
    return std::to_string(static_cast<int>(o.phase)) + " " + std::to_string(o.exit_code) + " " +
           executor::GangFailureName(o.failure) + " " + o.lost_reason;
  }

  fs::path dir_;
  FakeContainerEngine engine_;
  std::unique_ptr<PodmanReplicaRuntime> runtime_;
  ReplicaHandle handle_;
};

TEST_F(PodmanReplicaRuntimeFixture, ChecksTheReferenceNamingTheField) {
  Status bad =
      runtime_->CheckImage("eu.gcr.io/p/Up:dev", "workerPoolSpecs[1].containerSpec.imageUri");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(bad.message().starts_with("workerPoolSpecs[1].containerSpec.imageUri: ")) << bad;
  EXPECT_TRUE(runtime_->CheckImage("eu.gcr.io/p/up:dev", "f").ok());
}

TEST_F(PodmanReplicaRuntimeFixture, ARecordedPullFailureIsImageUnavailableNotAnExitCode) {
  ASSERT_TRUE(WriteFileAtomic(handle_.status_file, R"({"exit_code":125})").ok());
  ASSERT_TRUE(WriteContainerStartError(ContainerErrorFile(handle_.pid_file),
                                       {"IMAGE_UNAVAILABLE", "image 'x' is not in its registry"})
                  .ok());
  EXPECT_EQ(Describe(runtime_->Observe(&handle_)),
            "2 125 IMAGE_UNAVAILABLE could not be started: image 'x' is not in its registry");
}

TEST_F(PodmanReplicaRuntimeFixture, AnExitedContainerWhoseSupervisorIsGoneGivesItsExitCode) {
  // No status file and no live supervisor (pid 0); the container, found by name, has exited.
  ContainerSpec spec;
  spec.name = handle_.container;
  spec.image = "img";
  ASSERT_TRUE(engine_.Run(spec).ok());
  engine_.Exit(handle_.container, 4);
  ReplicaObservation seen = runtime_->Observe(&handle_);
  auto left = engine_.Inspect(handle_.container);
  EXPECT_EQ(Describe(seen) + "| left " +
                std::to_string(left.ok() && left->status != ContainerStatus::kMissing),
            "1 4 REPLICA_LOST | left 0");
}

TEST_F(PodmanReplicaRuntimeFixture, KillSignalsTheContainerAndReleaseRemovesIt) {
  ContainerSpec spec;
  spec.name = handle_.container;
  spec.image = "img";
  ASSERT_TRUE(engine_.Run(spec).ok());
  EXPECT_TRUE(runtime_->Kill(handle_));
  runtime_->Release(handle_);
  auto state = engine_.Inspect(handle_.container);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(std::to_string(engine_.SignalsOf(handle_.container).at(0)) + " " +
                std::to_string(state->status == ContainerStatus::kMissing),
            std::to_string(SIGKILL) + " 1");
}

}  // namespace
}  // namespace trainyard::container
