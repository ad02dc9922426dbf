#include "distributed/distributed_config.h"

#include <gtest/gtest.h>

namespace trainyard::distributed {
namespace {

std::string Render(const StatusOr<DistributedConfig>& c) {
  if (!c.ok()) return c.status().ToString();
  return c->source + " rank=" + std::to_string(c->rank) +
         " world=" + std::to_string(c->world_size) + " master=" + c->master_addr + ":" +
         std::to_string(c->master_port);
}

const char* kClusterSpec2 =
    R"({"cluster":{"workerpool0":["10.0.0.1:2222"],"workerpool1":["10.0.0.2:2223","10.0.0.3:2224"]},)"
    R"("environment":"cloud","task":{"type":"workerpool1","index":1,"trial":""}})";

TEST(DistributedConfigTest, NothingSetIsSingleProcess) {
  EXPECT_EQ(Render(ConfigFromEnvironment({})), "single rank=0 world=1 master=:0");
}

TEST(DistributedConfigTest, TorchVariables) {
  EXPECT_EQ(Render(ConfigFromEnvironment({{"MASTER_ADDR", "10.0.0.1"},
                                          {"MASTER_PORT", "29500"},
                                          {"WORLD_SIZE", "4"},
                                          {"RANK", "3"},
                                          {"LOCAL_RANK", "0"}})),
            "MASTER_ADDR rank=3 world=4 master=10.0.0.1:29500");
}

TEST(DistributedConfigTest, PartialTorchVariablesNameTheMissingOne) {
  auto c = ConfigFromEnvironment({{"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}, {"RANK", "0"}});
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("WORLD_SIZE is not set"), std::string::npos) << c.status();
}

TEST(DistributedConfigTest, RankOutsideWorldIsAnError) {
  auto c = ConfigFromEnvironment(
      {{"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}, {"WORLD_SIZE", "2"}, {"RANK", "2"}});
  EXPECT_EQ(c.status().ToString(),
            "INVALID_ARGUMENT: WORLD_SIZE=2: RANK: must be in [0, 1], got 2");
}

TEST(DistributedConfigTest, BadPortIsAnError) {
  auto c = ConfigFromEnvironment(
      {{"MASTER_ADDR", "h"}, {"MASTER_PORT", "http"}, {"WORLD_SIZE", "2"}, {"RANK", "0"}});
  EXPECT_EQ(c.status().ToString(),
            "INVALID_ARGUMENT: MASTER_PORT: expected an integer, got \"http\"");
}

TEST(DistributedConfigTest, ClusterSpecRanksPoolZeroFirst) {
  EXPECT_EQ(Render(ConfigFromEnvironment({{"CLUSTER_SPEC", kClusterSpec2}})),
            "CLUSTER_SPEC rank=2 world=3 master=10.0.0.1:2222");
}

TEST(DistributedConfigTest, ClusterSpecChiefIsRankZero) {
  std::string spec = R"({"cluster":{"workerpool0":["[::1]:2222"],"workerpool1":["h:1"]},)"
                     R"("task":{"type":"workerpool0","index":0}})";
  EXPECT_EQ(Render(ConfigFromEnvironment({{"CLUSTER_SPEC", spec}})),
            "CLUSTER_SPEC rank=0 world=2 master=::1:2222");
}

TEST(DistributedConfigTest, ClusterSpecIndexOutsidePool) {
  std::string spec = R"({"cluster":{"workerpool0":["h:1"],"workerpool1":["h:2"]},)"
                     R"("task":{"type":"workerpool1","index":1}})";
  EXPECT_EQ(ConfigFromEnvironment({{"CLUSTER_SPEC", spec}}).status().ToString(),
            "INVALID_ARGUMENT: CLUSTER_SPEC: task workerpool1 index 1 is outside "
            "cluster.workerpool1 (1 replicas)");
}

TEST(DistributedConfigTest, ClusterSpecMalformed) {
  auto c = ConfigFromEnvironment({{"CLUSTER_SPEC", "{not json"}});
  EXPECT_NE(c.status().message().find("CLUSTER_SPEC: not valid JSON"), std::string::npos);
  std::string bad_addr = R"({"cluster":{"workerpool0":["nohost"],"workerpool1":["h:2"]},)"
                         R"("task":{"type":"workerpool1","index":0}})";
  EXPECT_EQ(ConfigFromEnvironment({{"CLUSTER_SPEC", bad_addr}}).status().ToString(),
            "INVALID_ARGUMENT: CLUSTER_SPEC cluster pool 0[0]: expected \"host:port\", got "
            "\"nohost\"");
}

TEST(DistributedConfigTest, TfConfigChiefWorkerPs) {
  std::string tf = R"({"cluster":{"chief":["c:1"],"worker":["w0:2","w1:3"]},)"
                   R"("task":{"type":"worker","index":0}})";
  EXPECT_EQ(Render(ConfigFromEnvironment({{"TF_CONFIG", tf}})),
            "TF_CONFIG rank=1 world=3 master=c:1");
}

TEST(DistributedConfigTest, TfConfigEvaluatorRunsAlone) {
  std::string tf = R"({"cluster":{"chief":["c:1"],"worker":["w0:2"]},)"
                   R"("task":{"type":"evaluator","index":0}})";
  EXPECT_EQ(Render(ConfigFromEnvironment({{"TF_CONFIG", tf}})), "single rank=0 world=1 master=:0");
}

TEST(DistributedConfigTest, UnknownTaskType) {
  std::string tf = R"({"cluster":{"chief":["c:1"]},"task":{"type":"driver","index":0}})";
  EXPECT_EQ(ConfigFromEnvironment({{"TF_CONFIG", tf}}).status().ToString(),
            "INVALID_ARGUMENT: TF_CONFIG: unknown task.type \"driver\" (expected chief, worker, "
            "ps or evaluator)");
}

TEST(DistributedConfigTest, TfConfigLegacyMasterIsTheChief) {
  std::string tf = R"({"cluster":{"master":["m:1"],"worker":["w0:2"]},)"
                   R"("task":{"type":"master","index":0}})";
  EXPECT_EQ(Render(ConfigFromEnvironment({{"TF_CONFIG", tf}})),
            "TF_CONFIG rank=0 world=2 master=m:1");
}

TEST(DistributedConfigTest, TorchVariablesContradictingClusterSpec) {
  auto c = ConfigFromEnvironment({{"MASTER_ADDR", "10.0.0.1"},
                                  {"MASTER_PORT", "2222"},
                                  {"WORLD_SIZE", "3"},
                                  {"RANK", "1"},
                                  {"CLUSTER_SPEC", kClusterSpec2}});
  EXPECT_EQ(c.status().ToString(),
            "INVALID_ARGUMENT: WORLD_SIZE/RANK (3/1) contradict CLUSTER_SPEC (world 3, rank 2): "
            "unset the overridden variables");
}

TEST(DistributedConfigTest, DescribeForLogs) {
  auto c = ConfigFromEnvironment({{"CLUSTER_SPEC", kClusterSpec2}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Describe(), "rank 2/3 (master 10.0.0.1:2222, from CLUSTER_SPEC)");
}

}  // namespace
}  // namespace trainyard::distributed
