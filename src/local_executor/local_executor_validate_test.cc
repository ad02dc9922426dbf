// LocalExecutor::Validate and Submit-time checks (no processes are started).
#include <gtest/gtest.h>

#include "local_executor/local_executor.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

GangSpec OneReplica(std::string machine, std::string accel = "", int count = 0) {
  GangSpec spec;
  spec.job_id = "v1";
  spec.job_dir = "/tmp/unused-v1";
  ReplicaSpec r;
  r.machine_type = std::move(machine);
  r.accelerator_type = std::move(accel);
  r.accelerator_count = count;
  r.argv = {"/bin/true"};
  spec.replicas.push_back(r);
  return spec;
}

std::unique_ptr<LocalExecutor> Executor(int gpus, const std::string& model = "Tesla T4",
                                        bool any_gpu_model = false) {
  LocalExecutorOptions o;
  HostInventory inv{2, 8, {}, {}};
  for (int i = 0; i < gpus; ++i) inv.gpus.push_back({i, model, 15});
  o.inventory = inv;
  o.any_gpu_model = any_gpu_model;
  return std::make_unique<LocalExecutor>(o);
}

TEST(LocalExecutorValidateTest, GpuOnAHostWithoutGpus) {
  EXPECT_EQ(Executor(0)->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1)).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[0]: NVIDIA_TESLA_T4 x1 requested but this host has "
            "no GPU");
  EXPECT_EQ(Executor(1)->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 2)).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[0]: NVIDIA_TESLA_T4 x2 requested but this host has "
            "only 1 GPU");
}

TEST(LocalExecutorValidateTest, GangGpuTotalMustFitTheHost) {
  GangSpec spec = OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1);
  ReplicaSpec w = spec.replicas[0];
  w.pool_index = 1;
  spec.replicas.push_back(w);
  EXPECT_EQ(Executor(1)->Validate(spec).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[1]: the job needs 2+ GPUs at once (gang) but this "
            "host has 1");
  EXPECT_TRUE(Executor(2)->Validate(spec).ok());
}

TEST(LocalExecutorValidateTest, MoreReplicasThanTheHostRunsAtOnceIsRefused) {
  GangSpec spec = OneReplica("n1-standard-4");
  for (int i = 1; i < 9; ++i) {
    ReplicaSpec w = spec.replicas[0];
    w.pool_index = 1;
    w.replica_index = i - 1;
    spec.replicas.push_back(w);
  }
  // 2 CPUs: at most max(8, 4 x 2) = 8 at once by default.
  EXPECT_EQ(Executor(0)->Validate(spec).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs: the job has 9 replicas in all, but this host runs "
            "at most 8 at once (they all start together); lower replicaCount, start the server "
            "with --max-replicas 9, or run it on the Slurm executor");
  LocalExecutorOptions o;
  o.inventory = HostInventory{2, 8, {}, {}};
  o.max_replicas = 0;  // no cap: oversubscribed, as before
  EXPECT_TRUE(LocalExecutor(o).Validate(spec).ok());
  spec.replicas.pop_back();
  EXPECT_TRUE(Executor(0)->Validate(spec).ok());
}

TEST(LocalExecutorValidateTest, UnknownTypesNameTheField) {
  Status s = Executor(0)->Validate(OneReplica("z9-huge-3"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      s.message().starts_with("workerPoolSpecs[0].machineSpec.machineType: unknown machine "
                              "type 'z9-huge-3'; use one of n1-standard-1,"))
      << s;
  s = Executor(1)->Validate(OneReplica("n1-standard-4", "TESLA_T4", 1));
  EXPECT_TRUE(
      s.message().starts_with("workerPoolSpecs[0].machineSpec.acceleratorType: unknown "
                              "accelerator 'TESLA_T4'"))
      << s;
  s = Executor(1)->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 0));
  EXPECT_EQ(s.message(),
            "workerPoolSpecs[0].machineSpec.acceleratorCount: must be >= 1 when "
            "acceleratorType NVIDIA_TESLA_T4 is set");
}

TEST(LocalExecutorValidateTest, BundledGpusMustMatchTheMachineType) {
  auto e = Executor(8, "NVIDIA A100-SXM4-40GB");
  EXPECT_TRUE(e->Validate(OneReplica("a2-highgpu-2g")).ok());
  EXPECT_TRUE(e->Validate(OneReplica("a2-highgpu-2g", "NVIDIA_TESLA_A100", 2)).ok());
  EXPECT_EQ(e->Validate(OneReplica("a2-highgpu-2g", "NVIDIA_TESLA_T4", 2)).message(),
            "workerPoolSpecs[0].machineSpec: a2-highgpu-2g comes with 2 x NVIDIA_TESLA_A100; set "
            "acceleratorType NVIDIA_TESLA_A100 and acceleratorCount 2 (or leave both unset)");
  EXPECT_EQ(Executor(1)->Validate(OneReplica("a2-highgpu-2g")).message(),
            "workerPoolSpecs[0]: NVIDIA_TESLA_A100 x2 requested but this host has only 1 GPU");
}

// A T4 job must not be admitted onto an H200, nor wait forever for a T4 that this
// host does not have: it is rejected at create time, naming the field and the host's GPUs.
TEST(LocalExecutorValidateTest, RequestedGpuModelMustBeOnTheHost) {
  auto h200 = Executor(2, "NVIDIA H200");
  EXPECT_EQ(h200->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1)).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[0].machineSpec.acceleratorType: NVIDIA_TESLA_T4 "
            "requested but this host's GPUs are 0: NVIDIA H200, 1: NVIDIA H200 (nvidia-smi); ask "
            "for acceleratorType NVIDIA_H200_141GB, or start the server with --any-gpu-model to "
            "let any GPU serve any type");
  EXPECT_TRUE(h200->Validate(OneReplica("n1-standard-4", "NVIDIA_H200_141GB", 2)).ok());
  // Escape hatches: placeholders from --gpus N without nvidia-smi, and --any-gpu-model.
  EXPECT_TRUE(Executor(1, "configured GPU")
                  ->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1))
                  .ok());
  EXPECT_TRUE(Executor(1, "NVIDIA H200", /*any_gpu_model=*/true)
                  ->Validate(OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1))
                  .ok());
}

TEST(LocalExecutorValidateTest, GangMayNotNeedMoreGpusOfAModelThanTheHostHas) {
  LocalExecutorOptions o;
  o.inventory = HostInventory{2, 8, {{0, "Tesla T4", 15}, {1, "NVIDIA L4", 22}}, {}};
  LocalExecutor e(o);
  GangSpec spec = OneReplica("n1-standard-4", "NVIDIA_TESLA_T4", 1);
  ReplicaSpec w = spec.replicas[0];
  w.pool_index = 1;
  spec.replicas.push_back(w);
  EXPECT_EQ(e.Validate(spec).ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[1].machineSpec.acceleratorCount: the job needs 2 x "
            "NVIDIA_TESLA_T4 at once (gang) but this host has 1 (0: Tesla T4, 1: NVIDIA L4)");
  spec.replicas[1].accelerator_type = "NVIDIA_L4";
  EXPECT_TRUE(e.Validate(spec).ok());
}

TEST(LocalExecutorValidateTest, OversizedMachinesAreAccepted) {
  // n1-standard-32 on a 2-vCPU host runs, taking the whole host (with a warning in its log).
  EXPECT_TRUE(Executor(0)->Validate(OneReplica("n1-standard-32")).ok());
}

TEST(LocalExecutorValidateTest, BadIdsCommandsAndShapes) {
  auto e = Executor(0);
  GangSpec spec = OneReplica("n1-standard-4");
  spec.job_id = "../x";
  EXPECT_EQ(e->Validate(spec).code(), StatusCode::kInvalidArgument);
  spec = OneReplica("n1-standard-4");
  spec.replicas[0].argv.clear();
  EXPECT_TRUE(e->Validate(spec).message().starts_with("workerPoolSpecs[0]: no command to run"));
  spec = OneReplica("n1-standard-4");
  spec.replicas.push_back(spec.replicas[0]);
  EXPECT_EQ(e->Validate(spec).message(),
            "workerPoolSpecs[0]: replica index 0 is negative or appears twice");
  spec = OneReplica("n1-standard-4");
  spec.replicas.clear();
  EXPECT_EQ(e->Validate(spec).code(), StatusCode::kInvalidArgument);
}

TEST(LocalExecutorValidateTest, UnknownJobsAreNotFound) {
  auto e = Executor(0);
  EXPECT_EQ(e->Get("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(e->Cancel("nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(e->ReadLogs("nope", -1, 10).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace trainyard::executor
