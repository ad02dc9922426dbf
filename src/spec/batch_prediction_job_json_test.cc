#include <gtest/gtest.h>

#include "spec/batch_prediction_job.h"

namespace trainyard::spec {
namespace {

using nlohmann::json;

json Sdk() {
  // What google-cloud-aiplatform 2.7.0's Model.batch_predict sends.
  return json::parse(
      R"({"displayName": "bp1", "model": "projects/p1/locations/us-central1/models/789@1",
    "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": ["gs://in-bucket/a.jsonl"]}},
    "outputConfig": {"predictionsFormat": "jsonl", "gcsDestination": {"outputUriPrefix": "gs://out-bucket/batch/"}},
    "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-4"}, "startingReplicaCount": 1, "maxReplicaCount": 2},
    "manualBatchTuningParameters": {}})");
}

std::string Error(json body) {
  auto r = DecodeBatchPredictionJob(body.dump());
  return r.ok() ? "" : r.status().message();
}

TEST(BatchPredictionJobJsonTest, DecodesWhatTheClientsSend) {
  auto job = DecodeBatchPredictionJob(Sdk().dump());
  ASSERT_TRUE(job.ok()) << job.status().message();
  auto spec = BatchPredictionSpecOf(*job);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->model, "projects/p1/locations/us-central1/models/789@1");
  EXPECT_EQ(spec->output_uri_prefix, "gs://out-bucket/batch");
  EXPECT_EQ(spec->machine.machine_type, "n1-standard-4");
  EXPECT_EQ(spec->starting_replicas, 1);
  EXPECT_EQ(spec->max_replicas, 2);
  EXPECT_EQ(spec->batch_size, kDefaultBatchSize);
  // Node's create: labels {} and an instanceConfig; snake_case is accepted too.
  json node = Sdk();
  node["labels"] = json::object();
  node["instance_config"] = {
      {"instanceType", "object"}, {"keyField", "id"}, {"excludedFields", {"id"}}};
  node["manualBatchTuningParameters"] = {{"batchSize", 16}};
  node["modelParameters"] = {{"temperature", 0.1}};
  job = DecodeBatchPredictionJob(node.dump());
  ASSERT_TRUE(job.ok()) << job.status().message();
  spec = BatchPredictionSpecOf(*job);
  EXPECT_EQ(spec->instance_config.key_field, "id");
  EXPECT_EQ(spec->batch_size, 16);
  EXPECT_EQ(spec->model_parameters, json({{"temperature", 0.1}}));
  // A described job sent back: output-only fields are dropped.
  json described = *job;
  described["state"] = "JOB_STATE_SUCCEEDED";
  described["completionStats"] = {{"successfulCount", "3"}};
  EXPECT_EQ(Error(described), "");
}

TEST(BatchPredictionJobJsonTest, RefusesWithTheFieldAndTheFix) {
  json j = Sdk();
  j.erase("model");
  EXPECT_NE(Error(j).find("model: required"), std::string::npos) << Error(j);
  j = Sdk();
  j["inputConfig"]["instancesFormat"] = "tf-record";
  EXPECT_NE(Error(j).find("inputConfig.instancesFormat: 'tf-record' is not supported"),
            std::string::npos)
      << Error(j);
  j = Sdk();
  j["inputConfig"]["gcsSource"]["uris"] = {"/local/file"};
  EXPECT_NE(Error(j).find("inputConfig.gcsSource.uris[0]"), std::string::npos) << Error(j);
  j = Sdk();
  j["inputConfig"]["bigquerySource"] = {{"inputUri", "bq://p.d.t"}};
  EXPECT_NE(Error(j).find("bigquerySource: not supported"), std::string::npos) << Error(j);
  j = Sdk();
  j["outputConfig"]["predictionsFormat"] = "csv";
  EXPECT_NE(Error(j).find("predictionsFormat"), std::string::npos);
  j = Sdk();
  j["dedicatedResources"]["startingReplicaCount"] = 0;
  EXPECT_NE(Error(j).find("startingReplicaCount: must be 1 to 64"), std::string::npos) << Error(j);
  j = Sdk();
  j["dedicatedResources"]["maxReplicaCount"] = 100;
  EXPECT_NE(Error(j).find("maxReplicaCount"), std::string::npos);
  j = Sdk();
  j["manualBatchTuningParameters"]["batchSize"] = 100000;
  EXPECT_NE(Error(j).find("batchSize"), std::string::npos);
  j = Sdk();
  j["generateExplanation"] = true;
  EXPECT_NE(Error(j).find("generateExplanation"), std::string::npos);
  j = Sdk();
  j["inputConfg"] = 1;
  EXPECT_NE(Error(j).find("Unknown name \"inputConfg\""), std::string::npos) << Error(j);
  j = Sdk();
  j["instanceConfig"] = {{"includedFields", {"a"}}, {"excludedFields", {"b"}}};
  EXPECT_NE(Error(j).find("not both"), std::string::npos);
  j = Sdk();
  j["inputConfig"]["instancesFormat"] = "csv";
  j["instanceConfig"] = {{"includedFields", {"a"}}};
  EXPECT_NE(Error(j).find("csv rows"), std::string::npos);
  EXPECT_FALSE(DecodeBatchPredictionJob("{\"displayName\": \"\xff\"}").ok());
  EXPECT_FALSE(DecodeBatchPredictionJob(std::string(1000, '[')).ok());
}

TEST(BatchPredictionJobJsonTest, OutputNamesAreVertexs) {
  auto t = FromUnixMicros(1795915800123000);  // 2026-11-29T01:30:00.123Z
  EXPECT_EQ(PredictionDirName("bert sentiment/v1", t),
            "prediction-bert_sentiment_v1-2026_11_29T01_30_00_123Z");
  EXPECT_EQ(ResultsFileName(1, 4), "prediction.results-00001-of-00004");
  EXPECT_EQ(ErrorsFileName(0, 1), "prediction.errors_stats-00000-of-00001");
}

}  // namespace
}  // namespace trainyard::spec
