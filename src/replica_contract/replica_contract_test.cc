#include "replica_contract/replica_contract.h"

#include <gtest/gtest.h>

namespace trainyard::replica_contract {
namespace {

// A gang with `counts[p]` replicas in pool p, listed out of order (the encoders sort), with
// distinct addresses "10.0.<pool>.<index>:<2222 + pool>".
std::vector<Member> Gang(const std::vector<int>& counts) {
  std::vector<Member> members;
  for (int p = static_cast<int>(counts.size()) - 1; p >= 0; --p) {
    for (int i = counts[p] - 1; i >= 0; --i) {
      members.push_back(
          {p, i,
           "10.0." + std::to_string(p) + "." + std::to_string(i) + ":" + std::to_string(2222 + p)});
    }
  }
  return members;
}

std::string Render(const StatusOr<ReplicaRole>& role) {
  if (!role.ok()) return role.status().ToString();
  return role->source + " " + std::to_string(role->rank) + "/" + std::to_string(role->world_size) +
         " " + role->master_addr + ":" + std::to_string(role->master_port);
}

// What each replica must decode: its position in (pool, index) order, the whole gang as the
// world, pool 0's first replica as the master. TF_CONFIG leaves evaluators (pool 3) out of the
// cluster, so there the world shrinks and an evaluator runs alone.
std::string Expected(const std::string& source, const std::vector<int>& counts, const Member& self,
                     bool tf_config) {
  int world = 0, rank = self.replica_index;
  for (int p = 0; p < kPoolCount; ++p) {
    if (tf_config && p == 3) continue;
    world += counts[p];
    if (p < self.pool_index) rank += counts[p];
  }
  if (world <= 1 || (tf_config && self.pool_index == 3)) return "single 0/1 :0";
  return source + " " + std::to_string(rank) + "/" + std::to_string(world) + " 10.0.0.0:2222";
}

TEST(ReplicaContractTest, EveryPoolLayoutRoundTrips) {
  std::string mismatches;
  int checked = 0;
  for (int workers : {0, 1, 3}) {
    for (int servers : {0, 1, 2}) {
      for (int evaluators : {0, 1}) {
        const std::vector<int> counts = {1, workers, servers, evaluators};
        ClusterLayout layout;
        layout.members = Gang(counts);
        layout.trial_id = workers == 1 ? "7" : "";
        layout.job_spec_json =
            R"({"workerPoolSpecs":[{"replicaCount":")" + std::to_string(workers) + R"("}]})";
        for (size_t self = 0; self < layout.members.size(); ++self) {
          layout.self = self;
          const Member& m = layout.members[self];
          const std::string spec = EncodeClusterSpec(layout), tf = EncodeTfConfig(layout);
          EnvMap all = EncodeRoleVariables(layout);
          all[kClusterSpec] = spec;
          all[kTfConfig] = tf;
          const std::string where = TaskName(m.pool_index, m.replica_index) + " of 1/" +
                                    std::to_string(workers) + "/" + std::to_string(servers) + "/" +
                                    std::to_string(evaluators) + ": ";
          auto check = [&](const std::string& got, const std::string& want) {
            ++checked;
            if (got != want) mismatches += where + "got " + got + ", want " + want + "\n";
          };
          const bool alone = layout.members.size() == 1;
          // WORLD_SIZE=1 is a single process that still knows its (unused) master address.
          check(Render(DecodeRole(all)),
                alone ? "single 0/1 10.0.0.0:2222" : Expected("MASTER_ADDR", counts, m, false));
          check(Render(DecodeRole({{kClusterSpec, spec}})),
                Expected("CLUSTER_SPEC", counts, m, false));
          check(Render(DecodeRole({{kTfConfig, tf}})), Expected("TF_CONFIG", counts, m, true));
          auto doc = DecodeClusterSpec(spec);
          auto tf_doc = DecodeTfConfig(tf);
          check(doc.ok() ? doc->task_type + "[" + std::to_string(doc->task_index) +
                               "] trial=" + doc->trial + " job=" + doc->job
                         : doc.status().ToString(),
                ClusterSpecPoolName(m.pool_index) + "[" + std::to_string(m.replica_index) +
                    "] trial=" + layout.trial_id + " job=" + layout.job_spec_json);
          check(tf_doc.ok() ? tf_doc->task_type + "[" + std::to_string(tf_doc->task_index) +
                                  "] job=" + tf_doc->job
                            : tf_doc.status().ToString(),
                TfConfigRole(m.pool_index) + "[" + std::to_string(m.replica_index) +
                    "] job=" + layout.job_spec_json);
        }
      }
    }
  }
  EXPECT_EQ(mismatches + std::to_string(checked) + " checks", "345 checks");
}

TEST(ReplicaContractTest, ClusterSpecShapeAsVertexWritesIt) {
  ClusterLayout layout;
  layout.members = Gang({1, 2});
  layout.self = 0;  // Gang lists pool 1 first: members[0] is workerpool1-1
  EXPECT_EQ(EncodeClusterSpec(layout),
            R"({"cluster":{"workerpool0":["10.0.0.0:2222"],)"
            R"("workerpool1":["10.0.1.0:2223","10.0.1.1:2223"]},)"
            R"("environment":"cloud","task":{"type":"workerpool1","index":1,"trial":""}})");
}

// AI Platform Training's legacy TF_CONFIG: pool 0 is "master" (useChiefInTfConfig picks
// "chief"); it decodes back to the same roles.
TEST(ReplicaContractTest, TfConfigNamesPoolZeroMasterWhereTheLayoutAsks) {
  ClusterLayout layout;
  layout.members = Gang({1, 1});
  layout.tf_config_primary_role = "master";
  layout.self = 1;  // workerpool0-0
  const std::string master = EncodeTfConfig(layout);
  layout.self = 0;  // workerpool1-0
  const std::string worker = EncodeTfConfig(layout);
  EXPECT_EQ(master + "\n" + Render(DecodeRole({{kTfConfig, master}})) + "\n" +
                Render(DecodeRole({{kTfConfig, worker}})),
            R"({"cluster":{"master":["10.0.0.0:2222"],"worker":["10.0.1.0:2223"]},)"
            R"("environment":"cloud","task":{"type":"master","index":0,"trial":""}})"
            "\nTF_CONFIG 0/2 10.0.0.0:2222\nTF_CONFIG 1/2 10.0.0.0:2222");
}

TEST(ReplicaContractTest, OversizedJobSpecIsLeftOut) {
  ClusterLayout layout;
  layout.members = Gang({1});
  layout.job_spec_json = "\"" + std::string(kMaxJobFieldBytes, 'x') + "\"";
  auto doc = DecodeClusterSpec(EncodeClusterSpec(layout));
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->job, "");
}

TEST(ReplicaContractTest, OutputDirsRoundTrip) {
  EnvMap env;
  EncodeOutputDirs(OutputDirsFor("gs://bkt/out", "7"), &env);
  const OutputDirs dirs = DecodeOutputDirs(env);
  EXPECT_EQ(dirs.model_dir + " " + dirs.checkpoint_dir + " " + dirs.tensorboard_log_dir + " " +
                std::to_string(env.size()),
            "gs://bkt/out/7/model/ gs://bkt/out/7/checkpoints/ gs://bkt/out/7/logs/ 3");
  EXPECT_EQ(OutputDirsFor("", "7").model_dir, "");
}

TEST(ReplicaContractTest, PlatformOwnedNames) {
  std::string owned;
  for (const char* name : {"RANK", "TF_CONFIG", "AIP_MODEL_DIR", "CLOUD_ML_TRIAL_ID",
                           "CUDA_VISIBLE_DEVICES", "PATH", "RANKING", "OMP_NUM_THREADS"}) {
    owned += std::string(name) + "=" + (IsPlatformOwned(name) ? "1 " : "0 ");
  }
  EXPECT_EQ(owned,
            "RANK=1 TF_CONFIG=1 AIP_MODEL_DIR=1 CLOUD_ML_TRIAL_ID=1 CUDA_VISIBLE_DEVICES=1 PATH=0 "
            "RANKING=0 OMP_NUM_THREADS=0 ");
}

}  // namespace
}  // namespace trainyard::replica_contract
