#include "executor/replica_env.h"

#include <gtest/gtest.h>

namespace trainyard::executor {
namespace {

// 1 chief + 2 workers + 1 parameter server + 1 evaluator, as Vertex numbers the pools.
ReplicaEnvInput FivePools(size_t self) {
  ReplicaEnvInput in;
  in.job_id = "123";
  in.base_output_dir = "gs://bkt/out";
  in.members = {{0, 0, "127.0.0.1:2000"},
                {1, 0, "127.0.0.1:2001"},
                {1, 1, "127.0.0.1:2002"},
                {2, 0, "127.0.0.1:2003"},
                {3, 0, "127.0.0.1:2004"}};
  in.self = self;
  in.hp_metric_file = "/jobs/123/replicas/x/hypertune/output.metrics";
  return in;
}

TEST(ReplicaEnvTest, ClusterSpecOfASecondWorker) {
  EXPECT_EQ(ClusterSpecJson(FivePools(2)),
            R"({"cluster":{"workerpool0":["127.0.0.1:2000"],)"
            R"("workerpool1":["127.0.0.1:2001","127.0.0.1:2002"],)"
            R"("workerpool2":["127.0.0.1:2003"],"workerpool3":["127.0.0.1:2004"]},)"
            R"("environment":"cloud","task":{"type":"workerpool1","index":1,"trial":""}})");
}

TEST(ReplicaEnvTest, TfConfigUsesTensorflowRolesAndLeavesTheEvaluatorOutOfTheCluster) {
  const std::string cluster =
      R"({"cluster":{"chief":["127.0.0.1:2000"],"worker":["127.0.0.1:2001","127.0.0.1:2002"],)"
      R"("ps":["127.0.0.1:2003"]},"environment":"cloud",)";
  EXPECT_EQ(TfConfigJson(FivePools(0)),
            cluster + R"("task":{"type":"chief","index":0,"trial":""}})");
  EXPECT_EQ(TfConfigJson(FivePools(3)), cluster + R"("task":{"type":"ps","index":0,"trial":""}})");
  EXPECT_EQ(TfConfigJson(FivePools(4)),
            cluster + R"("task":{"type":"evaluator","index":0,"trial":""}})");
}

// AI Platform Training's legacy jobs (GangSpec::tf_config_primary_role): pool 0 is "master".
TEST(ReplicaEnvTest, TfConfigOfAnAiPlatformJobNamesPoolZeroMaster) {
  ReplicaEnvInput in = FivePools(1);
  in.tf_config_primary_role = "master";
  EXPECT_EQ(
      PlatformEnv(in).at("TF_CONFIG"),
      R"({"cluster":{"master":["127.0.0.1:2000"],"worker":["127.0.0.1:2001","127.0.0.1:2002"],)"
      R"("ps":["127.0.0.1:2003"]},"environment":"cloud",)"
      R"("task":{"type":"worker","index":0,"trial":""}})");
}

TEST(ReplicaEnvTest, JobSpecAndTrialAreIncludedWhenKnown) {
  ReplicaEnvInput in = FivePools(0);
  in.members.resize(1);
  in.trial_id = "7";
  in.job_spec_json = R"({"workerPoolSpecs":[]})";
  EXPECT_EQ(ClusterSpecJson(in),
            R"({"cluster":{"workerpool0":["127.0.0.1:2000"]},"environment":"cloud",)"
            R"("task":{"type":"workerpool0","index":0,"trial":"7"},)"
            R"("job":"{\"workerPoolSpecs\":[]}"})");
  EnvMap env = PlatformEnv(in);
  EXPECT_EQ(env["AIP_MODEL_DIR"], "gs://bkt/out/7/model/");
  EXPECT_EQ(env["CLOUD_ML_TRIAL_ID"], "7");
}

TEST(ReplicaEnvTest, PlatformVariablesOfTheSecondWorker) {
  EnvMap env = PlatformEnv(FivePools(2));
  env.erase("CLUSTER_SPEC");
  env.erase("TF_CONFIG");
  std::string rendered;
  for (const auto& [k, v] : env) rendered += k + "=" + v + "\n";
  EXPECT_EQ(rendered,
            "AIP_CHECKPOINT_DIR=gs://bkt/out/checkpoints/\n"
            "AIP_MODEL_DIR=gs://bkt/out/model/\n"
            "AIP_TENSORBOARD_LOG_DIR=gs://bkt/out/logs/\n"
            "CLOUD_ML_HP_METRIC_FILE=/jobs/123/replicas/x/hypertune/output.metrics\n"
            "CLOUD_ML_JOB_ID=123\n"
            "CUDA_VISIBLE_DEVICES=\n"
            "LOCAL_RANK=0\n"
            "MASTER_ADDR=127.0.0.1\n"
            "MASTER_PORT=2000\n"
            "RANK=2\n"
            "TRAINYARD_REPLICA_PORT=2002\n"
            "WORLD_SIZE=5\n");
}

TEST(ReplicaEnvTest, NoOutputDirMeansNoAipDirs) {
  ReplicaEnvInput in = FivePools(0);
  in.base_output_dir.clear();
  in.gpus = {2, 3};
  EnvMap env = PlatformEnv(in);
  EXPECT_EQ(env.count("AIP_MODEL_DIR"), 0u);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2,3");
}

TEST(ReplicaEnvTest, ExpandsReferencesKubernetesStyle) {
  EnvMap vars{{"A", "x"}, {"AIP_MODEL_DIR", "gs://b/m/"}};
  EXPECT_EQ(ExpandEnvReferences("$(AIP_MODEL_DIR)best/$(A)-$$(A)-$(MISSING)-$(", vars),
            "gs://b/m/best/x-$(A)-$(MISSING)-$(");
}

TEST(ReplicaEnvTest, PrecedenceInheritedUserPlatformExtra) {
  EnvMap inherited{{"PATH", "/bin"}, {"RANK", "99"}, {"AIP_FOO", "stale"}, {"HOME", "/h"}};
  EnvMap user{{"HOME", "/u"}, {"OUT", "$(AIP_MODEL_DIR)x"}, {"RANK", "5"}};
  EnvMap extra{{"CLOUD_ML_TRIAL_ID", "3"}};
  EnvMap env = BuildReplicaEnv(inherited, user, FivePools(1), extra);
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["HOME"], "/u");
  EXPECT_EQ(env["OUT"], "gs://bkt/out/model/x");
  EXPECT_EQ(env["RANK"], "1");  // the platform's rank wins over the user's
  EXPECT_EQ(env.count("AIP_FOO"), 0u);
  EXPECT_EQ(env["CLOUD_ML_TRIAL_ID"], "3");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "1");
}

// OMP/MKL threads follow the replica's CPUs unless the job sets them; the server's own setting
// does not leak into replicas.
TEST(ReplicaEnvTest, ThreadCountsFollowTheReplicasCpusUnlessTheJobSetsThem) {
  ReplicaEnvInput in = FivePools(1);
  in.cpu_threads = 2;
  EnvMap inherited{{"OMP_NUM_THREADS", "64"}};
  EnvMap env = BuildReplicaEnv(inherited, {{"MKL_NUM_THREADS", "1"}}, in, {});
  in.cpu_threads = 0;
  EnvMap unpinned = BuildReplicaEnv(inherited, {}, in, {});
  EXPECT_EQ(env["OMP_NUM_THREADS"] + " " + env["MKL_NUM_THREADS"] + " | " +
                unpinned["OMP_NUM_THREADS"] + " " +
                std::to_string(unpinned.count("MKL_NUM_THREADS")),
            "2 1 | 64 0");
}

TEST(ReplicaEnvTest, TaskNames) { EXPECT_EQ(TaskName(1, 3), "workerpool1-3"); }

}  // namespace
}  // namespace trainyard::executor
