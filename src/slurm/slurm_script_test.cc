#include "slurm/slurm_script.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trainyard::slurm {
namespace {

using executor::GangSpec;
using machines::MachineCatalog;

SlurmNode Node(const std::string& name, int cpus, int64_t mem_mb, int gpus = 0,
               const std::string& state = "idle") {
  SlurmNode n;
  n.name = name;
  n.partitions = {"debug"};
  n.default_partition = true;
  n.cpus = cpus;
  n.memory_mb = mem_mb;
  n.gpus = gpus;
  n.state = state;
  return n;
}

GangSpec Spec(const std::string& pool1_machine, int workers = 1) {
  GangSpec g;
  g.job_id = "42";
  g.job_dir = "/shared/jobs/42";
  g.replicas.push_back({0, 0, "n1-standard-4", "", 0, {"python3", "train.py"}, {{"A", "1"}}});
  for (int i = 0; i < workers; ++i) {
    g.replicas.push_back({1, i, pool1_machine, "", 0, {"python3", "train.py"}, {}});
  }
  return g;
}

std::string Describe(const SlurmAllocation& a) {
  std::string s;
  for (const auto& c : a.components) {
    s += "[" + std::to_string(c.ntasks) + "x " + std::to_string(c.cpus_per_task) + "cpu " +
         std::to_string(c.mem_per_cpu_mb) + "M/cpu " + std::to_string(c.gpus_per_task) + "gpu]";
  }
  return s + " warnings=" + std::to_string(a.warnings.size());
}

TEST(SlurmScriptTest, SameShapePoolsAreOneHomogeneousJobGolden) {
  auto alloc = PlanAllocation(Spec("n1-standard-4"), MachineCatalog::Default(),
                              {Node("n1", 8, 32000), Node("n2", 8, 32000)}, "");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  SbatchSettings settings;
  settings.partition = "gpu";
  settings.account = "ml";
  settings.qos = "normal";
  settings.time_limit = std::chrono::seconds(3725);
  settings.task_binary = "/opt/trainyard/bin/trainyard-slurm-task";
  std::string script = RenderSbatchScript(Spec("n1-standard-4"), *alloc, settings,
                                          "/shared/jobs/42/slurm/attempt-1");
  EXPECT_EQ(script,
            R"GOLDEN(#!/bin/bash
# Written by Trainyard's SlurmExecutor for job 42; do not edit.
#SBATCH --job-name=trainyard-42
#SBATCH --output=/shared/jobs/42/slurm/attempt-1/batch.out
#SBATCH --chdir=/shared/jobs/42/slurm/attempt-1
#SBATCH --no-requeue
#SBATCH --partition=gpu
#SBATCH --account=ml
#SBATCH --qos=normal
#SBATCH --time=0-01:02:05
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=4
#SBATCH --mem-per-cpu=3840M

ATTEMPT_DIR='/shared/jobs/42/slurm/attempt-1'
TASK='/opt/trainyard/bin/trainyard-slurm-task'
# Node names need not resolve (and on clusters with a separate fabric they are the wrong
# address): map every node of the allocation to its NodeAddr once, for MASTER_ADDR and
# CLUSTER_SPEC. A heterogeneous job lists each component's nodes separately.
for list in "${SLURM_JOB_NODELIST:-}" $(env | sed -n 's/^SLURM_JOB_NODELIST_HET_GROUP_[0-9]*=//p'); do
  [ -n "$list" ] || continue
  for node in $(scontrol show hostnames "$list"); do
    addr=$(scontrol show node -o "$node" 2>/dev/null | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')
    echo "$node ${addr:-$node}"
  done
done | sort -u > "$ATTEMPT_DIR/nodes.tmp" && mv "$ATTEMPT_DIR/nodes.tmp" "$ATTEMPT_DIR/nodes"
echo "[trainyard] Slurm job $SLURM_JOB_ID on $(tr '\n' ' ' < "$ATTEMPT_DIR/nodes")"
srun --kill-on-bad-exit=1 --ntasks=2 --cpus-per-task=4 "$TASK" --plan "$ATTEMPT_DIR/plan.json"
rc=$?
echo "[trainyard] srun exited with code $rc"
exit $rc
)GOLDEN");
}

TEST(SlurmScriptTest, DifferentShapesMakeAHeterogeneousJobOnTwoNodes) {
  GangSpec spec = Spec("n1-highmem-2", 2);
  auto alloc = PlanAllocation(spec, MachineCatalog::Default(),
                              {Node("n1", 8, 32000), Node("n2", 8, 32000)}, "");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  SbatchSettings settings;
  settings.task_binary = "/bin/task";
  std::string script = RenderSbatchScript(spec, *alloc, settings, "/j/a1");
  std::string het_part =
      script.substr(script.find("#SBATCH --ntasks=1"),
                    script.find("\n\nATTEMPT_DIR") - script.find("#SBATCH --ntasks=1"));
  std::string srun =
      script.substr(script.find("srun "), script.find("\nrc=") - script.find("srun "));
  EXPECT_EQ(Describe(*alloc) + "\n" + het_part + "\n" + srun,
            "[1x 4cpu 3840M/cpu 0gpu][2x 2cpu 6656M/cpu 0gpu] warnings=0\n"
            "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=4\n#SBATCH --mem-per-cpu=3840M\n"
            "#SBATCH hetjob\n"
            "#SBATCH --ntasks=2\n#SBATCH --cpus-per-task=2\n#SBATCH --mem-per-cpu=6656M\n"
            "srun --kill-on-bad-exit=1 --ntasks=1 --cpus-per-task=4 \"$TASK\" --plan "
            "\"$ATTEMPT_DIR/plan.json\" : --ntasks=2 --cpus-per-task=2 \"$TASK\" --plan "
            "\"$ATTEMPT_DIR/plan.json\"");
}

TEST(SlurmScriptTest, OneNodeFallsBackToOneComponentSizedForTheLargestPool) {
  auto alloc = PlanAllocation(Spec("n1-highmem-2", 2), MachineCatalog::Default(),
                              {Node("n1", 8, 32000), Node("n2", 8, 32000, 0, "down*")}, "debug");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(Describe(*alloc) + " " + alloc->warnings.at(0),
            "[3x 4cpu 3840M/cpu 0gpu] warnings=1 the worker pools have different machine shapes, "
            "which needs a heterogeneous Slurm job, but Slurm starts those only across 2 or more "
            "nodes and partition debug has 1 usable node; every replica gets the largest pool's "
            "shape instead (4 CPUs, 15 GiB)");
}

TEST(SlurmScriptTest, ClampsToTheLargestNodeWithAWarning) {
  auto alloc = PlanAllocation(Spec("n1-standard-4"), MachineCatalog::Default(),
                              {Node("n1", 2, 10847), Node("n2", 2, 10847)}, "");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(Describe(*alloc) + " " + alloc->warnings.at(0),
            "[2x 2cpu 5423M/cpu 0gpu] warnings=2 workerPoolSpecs[0]: n1-standard-4 asks for 4 "
            "vCPUs / 15 GiB but the largest node of the default partition has 2 CPUs / 10.6 GiB; "
            "each replica gets 2 CPUs / 10.6 GiB");
}

TEST(SlurmScriptTest, AGangLargerThanThePartitionIsShrunkToFit) {
  auto alloc = PlanAllocation(Spec("n1-standard-4"), MachineCatalog::Default(),
                              {Node("n1", 2, 10847)}, "debug");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(Describe(*alloc) + " " + alloc->warnings.back(),
            "[2x 1cpu 5423M/cpu 0gpu] warnings=3 the job's 2 replicas together ask for 4 CPUs / "
            "21.2 GiB but partition debug has 2 CPUs / 10.6 GiB in all; every replica is shrunk "
            "to fit (oversubscribed)");
}

TEST(SlurmScriptTest, GpuReplicasTakeANodeEachWithGres) {
  GangSpec spec = Spec("n1-standard-4");
  for (auto& r : spec.replicas) {
    r.accelerator_type = "NVIDIA_TESLA_T4";
    r.accelerator_count = 2;
  }
  auto alloc = PlanAllocation(spec, MachineCatalog::Default(),
                              {Node("n1", 8, 32000, 2), Node("n2", 8, 32000, 4)}, "");
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  SbatchSettings settings;
  settings.task_binary = "/bin/task";
  std::string script = RenderSbatchScript(spec, *alloc, settings, "/j/a1");
  size_t from = script.find("#SBATCH --ntasks=");
  EXPECT_EQ(script.substr(from, script.find("\n\n") - from),
            "#SBATCH --ntasks=2\n#SBATCH --cpus-per-task=4\n#SBATCH --mem-per-cpu=3840M\n"
            "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:2");
}

TEST(SlurmScriptTest, ImpossibleGpuRequestsNameThePool) {
  GangSpec spec = Spec("n1-standard-4");
  spec.replicas[1].accelerator_type = "NVIDIA_TESLA_T4";
  spec.replicas[1].accelerator_count = 1;
  auto none = PlanAllocation(spec, MachineCatalog::Default(), {Node("n1", 8, 32000)}, "debug");
  spec.replicas[0].accelerator_type = "NVIDIA_TESLA_T4";
  spec.replicas[0].accelerator_count = 1;
  auto too_few = PlanAllocation(spec, MachineCatalog::Default(), {Node("n1", 8, 32000, 4)}, "");
  EXPECT_EQ(none.status().message() + "\n" + too_few.status().message(),
            "workerPoolSpecs[1]: NVIDIA_TESLA_T4 x1 requested but the largest node of partition "
            "debug has no GPU (GRES gpu)\n"
            "workerPoolSpecs: the job needs 2 nodes with >= 1 GPUs at once (one GPU replica per "
            "node) but the default partition has 1");
}

TEST(SlurmScriptTest, LaunchPlanListsTasksInRankOrder) {
  GangSpec spec = Spec("n1-standard-4", 2);
  std::swap(spec.replicas[0], spec.replicas[2]);  // pool 1 replica 1 first in the spec
  spec.extra_env["CLOUD_ML_TRIAL_ID"] = "7";
  auto alloc = PlanAllocation(spec, MachineCatalog::Default(), {Node("n1", 8, 32000)}, "");
  ASSERT_TRUE(alloc.ok());
  LaunchPlanSettings settings;
  auto plan = nlohmann::json::parse(RenderLaunchPlan(spec, *alloc, settings, 3, "/j/a3"));
  std::string order;
  for (const auto& t : plan["tasks"]) {
    order += t["dir"].get<std::string>() + " " + t["work_dir"].get<std::string>() + "\n";
  }
  EXPECT_EQ(order + plan["trial_id"].get<std::string>(),
            "/j/a3/workerpool0-0 /shared/jobs/42/work/workerpool0-0\n"
            "/j/a3/workerpool1-0 /shared/jobs/42/work/workerpool1-0\n"
            "/j/a3/workerpool1-1 /shared/jobs/42/work/workerpool1-1\n7");
  EXPECT_FALSE(plan.contains("run_as"));                 // the server's own user
  EXPECT_FALSE(plan["tasks"][0].contains("cpu_limit"));  // host processes: the step's cgroup
  // A container's podman limits are its task's share of the allocation.
  for (auto& r : spec.replicas) r.image = "registry/trainer:1";
  plan = nlohmann::json::parse(RenderLaunchPlan(spec, *alloc, settings, 3, "/j/a3"));
  const auto& c = alloc->components[0];
  EXPECT_EQ(plan["tasks"][2]["cpu_limit"].get<int>(), c.cpus_per_task);
  EXPECT_EQ(plan["tasks"][2]["memory_bytes"].get<int64_t>(),
            c.mem_per_cpu_mb * c.cpus_per_task * (int64_t{1} << 20));
  spec.run_as = executor::RunAs{"alice", 1000, 100, {995}, "/home/alice", std::nullopt};
  plan = nlohmann::json::parse(RenderLaunchPlan(spec, *alloc, settings, 3, "/j/a3"));
  EXPECT_EQ(plan["run_as"].dump(),
            R"({"gid":100,"groups":[995],"home":"/home/alice","uid":1000,"user":"alice"})");
}

TEST(SlurmScriptTest, ShellQuoteAndTime) {
  EXPECT_EQ(ShellQuote("/a b/it's") + " " + FormatSlurmTime(std::chrono::seconds(90061)),
            "'/a b/it'\\''s' 1-01:01:01");
}

}  // namespace
}  // namespace trainyard::slurm
