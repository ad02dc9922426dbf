#include "controller/batch_prediction_controller.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "common/file_util.h"
#include "executor/fake_executor.h"
#include "spec/batch_prediction_job.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kParent = "projects/p/locations/l";

json Body(const std::string& model) {
  json body = json::parse(R"({"displayName": "bp",
    "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": ["gs://inputs/a.jsonl"]}},
    "outputConfig": {"predictionsFormat": "jsonl", "gcsDestination": {"outputUriPrefix": "gs://outputs/batch"}},
    "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-4"}, "startingReplicaCount": 2},
    "labels": {"team": "nlp"}})");
  body["model"] = model;
  return body;
}

class BatchPredictionControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TRAINYARD_BUCKET_ROOT", (dir_ / "buckets").c_str(), 1);
    for (const char* b : {"inputs", "outputs", "stage", "models"})
      fs::create_directories(dir_ / "buckets" / b);
    Restart();
    model_ = Upload("gs://models/bert", "");
  }
  void TearDown() override { ::unsetenv("TRAINYARD_BUCKET_ROOT"); }

  void Restart() {
    std::set<std::string> running;
    if (executor_) {
      for (const auto& g : executor_->submitted()) {
        auto st = executor_->Get(g.job_id);
        if (st.ok() && st->state == GangState::kRunning) running.insert(g.job_id);
      }
    }
    batch_.reset();
    jobs_.reset();
    executor_ = std::make_unique<executor::FakeExecutor>();
    for (const auto& id : running) executor_->SetAdoptResult(id, GangState::kRunning);
    jobs_ = std::make_unique<JobController>(&store_, executor_.get(), &images_, nullptr,
                                            JobControllerOptions{dir_ / "jobs"});
    ASSERT_TRUE(jobs_->Start().ok());
    BatchPredictionOptions o;
    o.poll_interval = std::chrono::milliseconds(0);
    o.staging_bucket = "gs://stage/";
    o.is_bert_classifier = [](const std::string& uri) { return uri == "gs://models/bert"; };
    batch_ = std::make_unique<BatchPredictionController>(&store_, jobs_.get(), &models_, o);
    ASSERT_TRUE(batch_->Start().ok());
  }

  std::string Upload(const std::string& artifacts, const std::string& image) {
    ModelUpload u{kParent, "", "", {{"displayName", "bert model"}, {"artifactUri", artifacts}}, ""};
    if (!image.empty()) u.model["containerSpec"] = {{"imageUri", image}};
    EXPECT_TRUE(models_.Target(&u).ok());
    auto up = models_.Upload(u);
    EXPECT_TRUE(up.ok()) << up.status();
    return up.ok() ? up->model : "";
  }
  std::string Create(const json& body) {
    auto created = batch_->Create(kParent, body.dump());
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->value("name", "") : "";
  }
  json Get(const std::string& name) { return batch_->stored().Get(name).value_or(json()); }
  static std::string JobOf(const json& j) {
    return j["trainyardInfo"].value("backingCustomJob", "");
  }
  static std::string Id(const std::string& name) { return name.substr(name.rfind('/') + 1); }
  void Advance(const std::string& job, GangState state, const std::string& error = "") {
    ASSERT_TRUE(executor_->Advance(Id(JobOf(Get(job))), state, error).ok());
    batch_->PollOnce();
  }
  fs::path Staging(const std::string& name) {
    return dir_ / "buckets" / "stage" / ("batch-prediction-" + Id(name));
  }
  // What a replica leaves: its progress and its shards.
  void Replica(const std::string& name, int shard, int ok, int failed) {
    const fs::path s = Staging(name);
    fs::create_directories(s / "output");
    testing::WriteFileOrDie(
        s / "progress" / ("progress-" + std::to_string(shard) + ".json"),
        json({{"total", ok + failed}, {"successful", ok}, {"failed", failed}, {"done", true}})
            .dump());
    testing::WriteFileOrDie(s / "output" / spec::ResultsFileName(shard, 2), "{}\n");
    if (failed) testing::WriteFileOrDie(s / "output" / spec::ErrorsFileName(shard, 2), "{}\n");
  }

  fs::path dir_ = testing::MakeTestDir();
  store::MemoryJobStore store_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  ModelRegistry models_{&store_, [](const std::string&) { return Status::Ok(); }};
  std::unique_ptr<executor::FakeExecutor> executor_;
  std::unique_ptr<JobController> jobs_;
  std::unique_ptr<BatchPredictionController> batch_;
  std::string model_;
};

TEST_F(BatchPredictionControllerTest, RunsABackingJobAndCollectsVertexShapedOutput) {
  const std::string name = Create(Body(model_ + "@1"));
  json job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_PENDING");
  EXPECT_EQ(job["modelVersionId"], "1");
  const std::string out = job["outputInfo"]["gcsOutputDirectory"];
  EXPECT_TRUE(out.starts_with("gs://outputs/batch/prediction-bert_model-")) << out;
  auto backing = jobs_->Get(JobOf(job));
  ASSERT_TRUE(backing.ok());
  EXPECT_EQ(backing->labels.at(kBatchPredictionLabel), Id(name));
  EXPECT_EQ(backing->labels.at("team"), "nlp");
  ASSERT_EQ(backing->job_spec.worker_pool_specs.size(), 2u);
  const auto& pool = backing->job_spec.worker_pool_specs.at(0);
  EXPECT_EQ(pool.replica_count, 1);
  EXPECT_EQ(backing->job_spec.worker_pool_specs.at(1).replica_count, 1);
  EXPECT_EQ(pool.container_spec->image_uri, kBatchPredictImage);
  const auto& args = pool.container_spec->args;
  EXPECT_NE(std::find(args.begin(), args.end(), "gs://models/bert"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "gs://inputs/a.jsonl"), args.end());

  Advance(name, GangState::kRunning);
  Replica(name, 0, 3, 1);
  batch_->PollOnce();
  job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_RUNNING");
  EXPECT_TRUE(job.contains("startTime"));
  EXPECT_EQ(job["completionStats"]["successfulCount"], "3");

  // Both shards written: done, while the backing job still stops its replicas.
  Replica(name, 1, 2, 0);
  batch_->PollOnce();
  job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_SUCCEEDED") << job.dump();
  EXPECT_EQ(jobs_->Get(JobOf(job))->state, spec::JobState::kRunning);
  EXPECT_EQ(job["completionStats"],
            json({{"successfulCount", "5"}, {"failedCount", "1"}, {"incompleteCount", "0"}}));
  EXPECT_EQ(job["partialFailures"][0]["code"], 3);
  EXPECT_TRUE(job.contains("endTime"));
  EXPECT_TRUE(job["resourcesConsumed"].contains("replicaHours"));
  const fs::path dest =
      dir_ / "buckets" / "outputs" / out.substr(std::string("gs://outputs/").size());
  EXPECT_TRUE(fs::exists(dest / "prediction.results-00000-of-00002"));
  EXPECT_TRUE(fs::exists(dest / "prediction.results-00001-of-00002"));
  EXPECT_TRUE(fs::exists(dest / "prediction.errors_stats-00000-of-00002"));
  EXPECT_FALSE(fs::exists(Staging(name) / "output" / "prediction.results-00000-of-00002"));
}

TEST_F(BatchPredictionControllerTest, AllInstancesFailedIsFailedAndAFailedJobCarriesItsError) {
  const std::string name = Create(Body(Id(model_)));
  Advance(name, GangState::kRunning);
  Replica(name, 0, 0, 2);
  Replica(name, 1, 0, 1);
  Advance(name, GangState::kSucceeded);
  json job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_FAILED");
  EXPECT_NE(job["error"]["message"].get<std::string>().find("all 3 instances failed"),
            std::string::npos);
  const std::string other = Create(Body(model_));
  // Started and failed between two passes: startTime still comes from the backing job.
  ASSERT_TRUE(executor_->Advance(Id(JobOf(Get(other))), GangState::kRunning).ok());
  Advance(other, GangState::kFailed, "workerpool0 replica 1 exited with code 1");
  EXPECT_TRUE(Get(other).contains("startTime")) << Get(other).dump();
  job = Get(other);
  EXPECT_EQ(job["state"], "JOB_STATE_FAILED");
  EXPECT_NE(job["error"]["message"].get<std::string>().find("exited with code 1"),
            std::string::npos);
}

TEST_F(BatchPredictionControllerTest, ALinkAReplicaPlantedIsNeverMovedOrFollowed) {
  const std::string name = Create(Body(model_));
  Advance(name, GangState::kRunning);
  Replica(name, 0, 1, 0);
  fs::create_symlink("/etc/passwd", Staging(name) / "output" / "prediction.results-00001-of-00002");
  Advance(name, GangState::kSucceeded);
  json job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_FAILED");
  EXPECT_NE(job["error"]["message"].get<std::string>().find("not a shard file"), std::string::npos)
      << job.dump();
}

TEST_F(BatchPredictionControllerTest, CancelAndRestartAdoptTheBackingJob) {
  const std::string name = Create(Body(model_));
  Advance(name, GangState::kRunning);
  const std::string backing = JobOf(Get(name));
  Restart();
  batch_->PollOnce();
  EXPECT_EQ(JobOf(Get(name)), backing);
  EXPECT_EQ(Get(name)["state"], "JOB_STATE_RUNNING");
  ASSERT_TRUE(batch_->Cancel(name).ok());
  // The fake executor ends a cancelled job at once: the next pass sees it CANCELLED.
  batch_->PollOnce();
  json job = Get(name);
  EXPECT_EQ(job["state"], "JOB_STATE_CANCELLED");
  EXPECT_EQ(job["error"]["code"], 1);
  EXPECT_EQ(batch_->Cancel(name).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(batch_->stored().Delete(name).ok());
}

TEST_F(BatchPredictionControllerTest, AModelInItsOwnContainerIsFedByPoolZero) {
  ModelUpload u{kParent,
                "",
                "",
                {{"displayName", "custom"},
                 {"artifactUri", "gs://models/other"},
                 {"containerSpec",
                  {{"imageUri", "local"},
                   {"command", {"python3", "serve.py"}},
                   {"args", {"--model=$(AIP_STORAGE_URI)"}},
                   {"env", {{{"name", "X"}, {"value", "1"}}}},
                   {"predictRoute", "/p"}}}},
                ""};
  ASSERT_TRUE(models_.Target(&u).ok());
  auto up = models_.Upload(u);
  ASSERT_TRUE(up.ok()) << up.status();
  const std::string name = Create(Body(up->model));
  auto backing = jobs_->Get(JobOf(Get(name)));
  ASSERT_TRUE(backing.ok());
  const auto& pools = backing->job_spec.worker_pool_specs;
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].replica_count, 1);
  EXPECT_EQ(pools[0].container_spec->image_uri, kBatchPredictImage);
  const auto& feeder = pools[0].container_spec->args;
  auto after = [&](const std::string& flag) {
    auto it = std::find(feeder.begin(), feeder.end(), flag);
    return it == feeder.end() || it + 1 == feeder.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(after("--model-pool"), "1");
  EXPECT_EQ(after("--predict-route"), "/p");
  EXPECT_EQ(after("--model-dir"), "");
  EXPECT_EQ(pools[1].replica_count, 2);
  EXPECT_EQ(pools[1].machine_spec->machine_type, "n1-standard-4");
  EXPECT_EQ(pools[1].container_spec->image_uri, "local");
  EXPECT_EQ(pools[1].container_spec->args, std::vector<std::string>{"--model=gs://models/other"});
  std::map<std::string, std::string> env;
  for (const auto& e : pools[1].container_spec->env) env[e.name] = e.value;
  EXPECT_EQ(env["AIP_HTTP_PORT"], "$(TRAINYARD_REPLICA_PORT)");
  EXPECT_EQ(env["AIP_PREDICT_ROUTE"], "/p");
  EXPECT_EQ(env["X"], "1");
}

TEST_F(BatchPredictionControllerTest, RefusesWhatCannotRunNamingTheField) {
  auto r = batch_->Create(kParent, Body("projects/p/locations/l/models/404").dump());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(r.status().message().starts_with("model: ")) << r.status();
  const std::string not_bert = Upload("gs://models/other", "");
  r = batch_->Create(kParent, Body(not_bert).dump());
  EXPECT_NE(r.status().message().find("not a BERT classifier"), std::string::npos);
  json body = Body(model_);
  body["inputConfig"]["gcsSource"]["uris"] = {"gs://no-bucket/a.jsonl"};
  r = batch_->Create(kParent, body.dump());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(r.status().message().starts_with("inputConfig.gcsSource.uris[0]: "));
  body = Body(model_);
  body["outputConfig"]["gcsDestination"]["outputUriPrefix"] = "gs://no-bucket/x";
  r = batch_->Create(kParent, body.dump());
  EXPECT_TRUE(r.status().message().starts_with("outputConfig.gcsDestination.outputUriPrefix"));
  body = Body(model_);
  body["dedicatedResources"]["machineSpec"]["machineType"] = "n1-nonsense-3";
  r = batch_->Create(kParent, body.dump());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(batch_->stored().List({.parent = kParent}).value().jobs.empty());
}

}  // namespace
}  // namespace trainyard::controller
