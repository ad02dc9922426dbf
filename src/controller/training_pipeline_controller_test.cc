#include "controller/training_pipeline_controller.h"

#include <gtest/gtest.h>

#include <set>

#include "executor/fake_executor.h"
#include "spec/training_pipeline.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

using executor::GangState;
using nlohmann::json;

constexpr const char* kPipelineParent = "projects/p/locations/l";

json Body(const std::string& display_name = "tp") {
  json body = json::parse(R"({
    "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
    "trainingTaskInputs": {"worker_pool_specs": [{"replica_count": 1.0,
        "machine_spec": {"machine_type": "n1-standard-4"},
        "containerSpec": {"imageUri": "local", "command": ["true"]}}]},
    "labels": {"team": "nlp"},
    "modelToUpload": {"displayName": "tp-model", "containerSpec": {"imageUri": "serve"}}})");
  body["displayName"] = display_name;
  return body;
}

class TrainingPipelineControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // New controllers over the same store, as after a server restart (jobs the old executor ran
  // are re-adopted as running).
  void Restart() {
    std::set<std::string> running;
    if (executor_) {
      for (const auto& g : executor_->submitted()) {
        auto st = executor_->Get(g.job_id);
        if (st.ok() && st->state == GangState::kRunning) running.insert(g.job_id);
      }
    }
    pipelines_.reset();
    jobs_.reset();
    executor_ = std::make_unique<executor::FakeExecutor>();
    for (const auto& id : running) executor_->SetAdoptResult(id, GangState::kRunning);
    jobs_ = std::make_unique<JobController>(&store_, executor_.get(), &images_, nullptr,
                                            JobControllerOptions{dir_ / "jobs"});
    ASSERT_TRUE(jobs_->Start().ok());
    TrainingPipelineOptions o;
    o.poll_interval = std::chrono::milliseconds(0);
    o.staging_bucket = "gs://stage/";
    pipelines_ = std::make_unique<TrainingPipelineController>(&store_, jobs_.get(), &models_, o);
    ASSERT_TRUE(pipelines_->Start().ok());
  }

  std::string Create(const json& body = Body()) {
    auto created = pipelines_->Create(kPipelineParent, body.dump());
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->value("name", "") : "";
  }
  json Get(const std::string& name) { return pipelines_->stored().Get(name).value_or(json()); }
  static std::string JobOf(const json& p) {
    return p["trainingTaskMetadata"].value("backingCustomJob", "");
  }
  static std::string Id(const std::string& name) { return name.substr(name.rfind('/') + 1); }
  // Moves the pipeline's job to `state` and runs a poll pass.
  void Advance(const std::string& pipeline, GangState state, const std::string& error = "") {
    ASSERT_TRUE(executor_->Advance(Id(JobOf(Get(pipeline))), state, error).ok());
    pipelines_->PollOnce();
  }
  std::string State(const json& p) { return p.value("state", ""); }

  std::filesystem::path dir_ = testing::MakeTestDir();
  store::MemoryJobStore store_;
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::set<std::string> artifacts_;  // the gs:// URIs that hold a model
  ModelRegistry models_{&store_, [this](const std::string& uri) {
                          return artifacts_.count(uri) ? Status::Ok()
                                                       : InvalidArgumentError(uri + " is empty");
                        }};
  std::unique_ptr<executor::FakeExecutor> executor_;
  std::unique_ptr<JobController> jobs_;
  std::unique_ptr<TrainingPipelineController> pipelines_;
};

TEST_F(TrainingPipelineControllerTest, ASucceededJobRegistersTheModelFromAipModelDir) {
  const std::string name = Create();
  const json created = Get(name);
  auto job = jobs_->Get(JobOf(created));
  ASSERT_TRUE(job.ok()) << job.status();
  Advance(name, GangState::kRunning);
  const std::string running =
      State(Get(name)) + " " + std::to_string(Get(name).contains("startTime"));
  const std::string model_dir = "gs://stage/aiplatform-custom-training-" + Id(name) + "/model/";
  artifacts_.insert(model_dir);
  Advance(name, GangState::kSucceeded);
  const json done = Get(name);
  auto model = models_.Get(done["modelToUpload"].value("name", ""), "1");
  ASSERT_TRUE(model.ok()) << done;
  EXPECT_EQ(State(created) + " " + job->display_name + " " + job->labels.at("team") + " " +
                job->labels.at(kPipelineLabel) + " " + job->job_spec.base_output_directory + " | " +
                running + " | " + State(done) + " " + done["modelToUpload"].dump() + " | " +
                model->value("artifactUri", "") + " " + model->value("trainingPipeline", "") + " " +
                std::to_string(done.contains("error")),
            "PIPELINE_STATE_QUEUED tp-custom-job nlp " + Id(name) +
                " gs://stage/aiplatform-custom-training-" + Id(name) +
                " | PIPELINE_STATE_RUNNING 1 | PIPELINE_STATE_SUCCEEDED "
                R"({"containerSpec":{"imageUri":"serve"},"displayName":"tp-model","name":")" +
                done["modelToUpload"].value("name", "") + R"(","versionId":"1"})" + " | " +
                model_dir + " " + name + " 0");
}

TEST_F(TrainingPipelineControllerTest, AFailedJobFailsThePipelineWithItsErrorAndNoModel) {
  const std::string name = Create();
  Advance(name, GangState::kFailed, "replica workerpool0-0 exited with code 3");
  const json p = Get(name);
  auto models = models_.stored().List({kPipelineParent, "", 0, ""});
  EXPECT_EQ(State(p) + " " + p["error"].dump() + " " + std::to_string(p.contains("endTime")) + " " +
                std::to_string(p["modelToUpload"].contains("name")) + " " +
                std::to_string(models->jobs.size()),
            "PIPELINE_STATE_FAILED " + p["error"].dump() + " 1 0 0");
  EXPECT_NE(p["error"].value("message", "").find("exited with code 3"), std::string::npos) << p;
}

TEST_F(TrainingPipelineControllerTest, MissingModelFilesFailThePipeline) {
  const std::string name = Create();
  Advance(name, GangState::kSucceeded);
  const json p = Get(name);
  EXPECT_EQ(
      State(p) + " " + p["error"]["code"].dump() + " " +
          p["error"].value("message", "").substr(0, 65),
      "PIPELINE_STATE_FAILED 3 the model upload failed: model.artifactUri: gs://stage/aiplatform");
}

TEST_F(TrainingPipelineControllerTest, CancelCancelsTheBackingJobAndACancelledPipelineStays) {
  const std::string name = Create();
  Advance(name, GangState::kRunning);
  executor_->SetHoldCancel(true);
  const Status cancel = pipelines_->Cancel(name);
  const std::string cancelling = State(Get(name));
  Advance(name, GangState::kCancelled);
  const json p = Get(name);
  EXPECT_EQ(cancel.ToString() + " " + cancelling + " " + State(p) + " " +
                p["error"]["code"].dump() + " " +
                pipelines_->Cancel(name).ToString().substr(0, 19) + " " +
                std::string(spec::JobStateName(jobs_->Get(JobOf(p))->state)),
            "OK PIPELINE_STATE_CANCELLING PIPELINE_STATE_CANCELLED 1 FAILED_PRECONDITION "
            "JOB_STATE_CANCELLED");
}

TEST_F(TrainingPipelineControllerTest, CreateRefusesWhatTheJobWouldAndStoresNothing) {
  json unknown = Body();
  unknown["trainingTaskInputs"]["worker_pool_specs"][0]["machine_spec"]["machine_type"] = "n9-huge";
  json parent = Body();
  parent["parentModel"] = "nope";
  std::string got;
  for (const json& body : {unknown, parent}) {
    auto r = pipelines_->Create(kPipelineParent, body.dump());
    const std::string error = r.status().ToString();
    got += error.substr(0, error.find(';')) + " | ";  // up to the list of valid machine types
  }
  auto listed = pipelines_->stored().List({kPipelineParent, "", 0, ""});
  EXPECT_EQ(got + std::to_string(listed->jobs.size()),
            "INVALID_ARGUMENT: trainingTaskInputs.workerPoolSpecs[0].machineSpec.machineType: "
            "unknown machine type 'n9-huge' | NOT_FOUND: parentModel: Model "
            "projects/p/locations/l/models/nope not found | 0");
}

TEST_F(TrainingPipelineControllerTest, ARestartAdoptsAJobCreatedBeforeTheCrashAndRegistersOnce) {
  // A crash after the job was created but before the pipeline recorded it.
  auto stored = pipelines_->stored().Insert(kPipelineParent,
                                            *spec::DecodeTrainingPipeline(Body().dump()), "");
  ASSERT_TRUE(stored.ok()) << stored.status();
  const std::string name = stored->value("name", "");
  spec::CustomJob orphan;
  orphan.display_name = "tp-custom-job";
  orphan.labels[kPipelineLabel] = Id(name);
  orphan.job_spec = *spec::TrainingTaskSpec(*stored);
  auto job = jobs_->Create(kPipelineParent, orphan);
  ASSERT_TRUE(job.ok()) << job.status();
  Restart();
  pipelines_->PollOnce();
  const std::string adopted = JobOf(Get(name)) == job->name ? "adopted" : "new job";
  // A crash after the model was registered but before the pipeline recorded it.
  artifacts_.insert("gs://m/");
  ASSERT_TRUE(pipelines_->stored()
                  .Mutate(name,
                          [](json& p, json& runtime) {
                            p["modelToUpload"]["artifactUri"] = "gs://m/";
                            runtime["modelId"] = "from-before";
                            return Status::Ok();
                          })
                  .ok());
  ModelUpload before{kPipelineParent, "from-before", "", Get(name)["modelToUpload"], name};
  ASSERT_TRUE(models_.Upload(before).ok());
  ASSERT_TRUE(executor_->Advance(job->Id(), GangState::kSucceeded).ok());
  Restart();
  pipelines_->PollOnce();
  const json p = Get(name);
  auto jobs = jobs_->List({kPipelineParent, "", 0, ""});
  auto versions = models_.ListVersions(p["modelToUpload"].value("name", ""), {"", "", 0, ""});
  EXPECT_EQ(adopted + " " + std::to_string(jobs->jobs.size()) + " " + State(p) + " " +
                p["modelToUpload"].value("name", "") + "@" +
                p["modelToUpload"].value("versionId", "") + " " +
                std::to_string(versions->versions.size()),
            "adopted 1 PIPELINE_STATE_SUCCEEDED projects/p/locations/l/models/from-before@1 1");
}

TEST_F(TrainingPipelineControllerTest, DeletingAnEndedPipelineKeepsItsJobAndModel) {
  const std::string name = Create();
  artifacts_.insert("gs://stage/aiplatform-custom-training-" + Id(name) + "/model/");
  const std::string refused = pipelines_->stored().Delete(name).ToString().substr(0, 19);
  Advance(name, GangState::kSucceeded);
  const json p = Get(name);
  ASSERT_TRUE(pipelines_->stored().Delete(name).ok());
  EXPECT_EQ(refused + " " + jobs_->Get(JobOf(p)).status().ToString() + " " +
                models_.Get(p["modelToUpload"].value("name", ""), "").status().ToString() + " " +
                pipelines_->stored().Get(name).status().ToString().substr(0, 9),
            "FAILED_PRECONDITION OK OK NOT_FOUND");
}

}  // namespace
}  // namespace trainyard::controller
