#include "observability/restart_reasons.h"

#include <gtest/gtest.h>

namespace trainyard::observability {
namespace {

// A job whose replicas restarted, with the steps the job controller writes (RecordRestarts).
spec::CustomJob JobWithRestarts(std::vector<spec::ReplicaInfo> replicas,
                                std::vector<std::string> details) {
  spec::CustomJob job;
  job.name = "projects/p/locations/l/customJobs/1";
  job.trainyard_info = spec::TrainyardInfo{};
  job.trainyard_info->replicas = std::move(replicas);
  for (auto& d : details)
    job.trainyard_info->state_history.push_back({spec::JobState::kRunning, {}, d});
  return job;
}

std::string Show(const std::map<RestartReason, int>& counts) {
  std::string out;
  for (const auto& [reason, n] : counts) {
    out += std::string(RestartReasonName(reason)) + "=" + std::to_string(n) + " ";
  }
  return out;
}

TEST(RestartReasonsTest, ExitCodesAboveOneTwentyEightAreSignalsAndSigkillStandsApart) {
  EXPECT_EQ(std::string(RestartReasonName(RestartReasonOfExit(1))) + " " +
                std::string(RestartReasonName(RestartReasonOfExit(128))) + " " +
                std::string(RestartReasonName(RestartReasonOfExit(137))) + " " +
                std::string(RestartReasonName(RestartReasonOfExit(143))) + " " +
                std::string(RestartReasonName(RestartReasonOfExit(255))),
            "exit_code exit_code sigkill signal exit_code");
}

// Restart 3 of workerpool0-0 has no step (two restarts between two status reports) and the one of
// workerpool1-0 names no exit code (a replica lost with its node): both are "unknown".
TEST(RestartReasonsTest, EachNewRestartGetsTheReasonOfItsStep) {
  spec::CustomJob job = JobWithRestarts(
      {{0, 0, 1, 3}, {1, 0, std::nullopt, 1}},
      {"workerpool0-0 restarted (restart 1, it had exited with code 1)",
       "workerpool0-0 restarted (restart 2, it had exited with code 137)",
       "workerpool1-0 restarted (restart 1)", "replica 0 exited with code 1 after 3 restarts"});
  std::map<std::string, int> seen = {{"workerpool0-0", 1}};  // restart 1 was counted before
  EXPECT_EQ(Show(NewRestarts(job, seen)), "sigkill=1 unknown=2 ");
  EXPECT_EQ(Show(NewRestarts(job, seen)), "");  // nothing new the second time
}

}  // namespace
}  // namespace trainyard::observability
