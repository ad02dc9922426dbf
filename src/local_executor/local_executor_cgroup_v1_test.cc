// Memory limits on a real cgroup v1 memory controller (a v1 or hybrid host where this test may
// create cgroups, e.g. root on CI): a replica over its limit is OOM-killed and its failure says
// so with its limit and peak; one within its limit succeeds; both leave no cgroup behind.
// Skipped, with the reason, where limits are not enforced through cgroup v1.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "executor/executor.h"
#include "local_executor/cgroup_limits.h"
#include "local_executor/local_executor.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class LocalExecutorCgroupV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir();
    CgroupLimits probe = CgroupLimits::Probe(CgroupOptions{});
    if (probe.version() != CgroupVersion::kV1) {
      GTEST_SKIP() << "needs a writable cgroup v1 memory controller: "
                   << (probe.enabled() ? "this host has cgroup v2" : probe.why_not());
    }
    memory_parent_ = probe.parent();
    LocalExecutorOptions o;
    o.data_dir = dir_ / "data";
    // 256 MiB of memory: an n1-standard-1 replica (3.75 GiB) is limited to the whole host.
    o.inventory = HostInventory{2, 0.25, {}, {}};
    o.poll_interval = 20ms;
    o.wrapper_path = testing::ToolPath("trainyard-exec-wrapper");
    executor_ = std::make_unique<LocalExecutor>(o);
  }

  // One n1-standard-1 replica running `script`, no restarts; waits for its end.
  GangStatus Run(const std::string& id, const std::string& script) {
    GangSpec spec;
    spec.job_id = id;
    spec.job_name = "projects/p/locations/l/customJobs/" + id;
    spec.job_dir = dir_ / "jobs" / id;
    spec.kill_grace = 1s;
    spec.max_restarts = 0;  // the OOM kill is the job's own failure: restarts would repeat it
    ReplicaSpec r;
    r.machine_type = "n1-standard-1";
    r.argv = {"/bin/sh", "-c", script};
    spec.replicas.push_back(r);
    EXPECT_TRUE(executor_->Submit(spec).ok());
    for (auto deadline = std::chrono::steady_clock::now() + 60s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms)) {
      auto s = executor_->Get(id);
      if (s.ok() && (s->state == GangState::kSucceeded || s->state == GangState::kFailed)) {
        return *s;
      }
    }
    ADD_FAILURE() << "job " << id << " did not end within 60 s";
    return {};
  }

  // The replica cgroups left in the memory hierarchy for job `id`.
  int CgroupsLeft(const std::string& id) const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(memory_parent_)) {
      n += e.path().filename().string().starts_with("trainyard-" + id + "-");
    }
    return n;
  }

  fs::path dir_;
  fs::path memory_parent_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(LocalExecutorCgroupV1Test, AReplicaOverItsMemoryLimitIsReportedAsOomKilled) {
  auto start = std::chrono::steady_clock::now();
  // tail keeps a line without a newline in memory: 600 MiB of zeros do not fit in 256 MiB. The
  // shell exits with tail's status, 137 when the OOM killer took it.
  GangStatus s = Run("oom", "head -c 600M /dev/zero | tail >/dev/null");
  std::cout << "OOM job: " << s.error_message << " ("
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms)\n";
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message,
            "FAILED: workerpool0 replica 0 was killed by the out-of-memory killer: it used 256.0 "
            "MiB of its 256.0 MiB limit (n1-standard-1); pick a machine type with more memory");
  EXPECT_EQ(CgroupsLeft("oom"), 0);
}

TEST_F(LocalExecutorCgroupV1Test, AReplicaWithinItsLimitSucceeds) {
  GangStatus s = Run("fits", "head -c 50M /dev/zero | tail >/dev/null");
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message + " cgroups left " +
                std::to_string(CgroupsLeft("fits")),
            "SUCCEEDED:  cgroups left 0");
}

}  // namespace
}  // namespace trainyard::executor
