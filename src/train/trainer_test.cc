// Trainer behaviour that is fast to check: input errors, export + predict round trip, dry run.
#include "train/trainer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <optional>

#include "common/file_util.h"
#include "model/hf_checkpoint.h"
#include "train/labeled_dataset.h"
#include "train/predictor.h"
#include "train/trainer_test_util.h"

namespace trainyard::train {
namespace {
namespace fs = std::filesystem;
using testing_util::BaseOptions;
using testing_util::CapturedRun;
using testing_util::WriteSyntheticSplits;

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = trainyard::testing::MakeTestDir();
    splits_ = WriteSyntheticSplits(dir_);
  }
  // Where the hypertune file goes (the default /tmp/hypertune would be shared by every test).
  replica_contract::EnvMap Env() const {
    return {{"CLOUD_ML_HP_METRIC_FILE", (dir_ / "hypertune" / "output.metrics").string()}};
  }
  std::string ErrorOf(const TrainOptions& o) {
    CapturedRun run(Env());
    auto r = run.Run(o);
    return r.ok() ? "OK" : r.status().ToString();
  }
  void ExpectErrorContains(const TrainOptions& o, const std::string& part) {
    const std::string error = ErrorOf(o);
    EXPECT_NE(error.find(part), std::string::npos) << error;
  }
  fs::path dir_;
  testing_util::Splits splits_;
};

TEST_F(TrainerTest, MissingColumnNamesColumnsAndFlag) {
  TrainOptions o = BaseOptions(splits_);
  o.text_column = "review";
  EXPECT_EQ(ErrorOf(o), "INVALID_ARGUMENT: " + splits_.train.string() +
                            ": no column 'review' (columns: bodyText, Target); pass --text-column "
                            "to name the column to use");
}

TEST_F(TrainerTest, EmptyCsvIsAnError) {
  TrainOptions o = BaseOptions(splits_);
  trainyard::testing::WriteFileOrDie(splits_.valid, "bodyText,Target\n");
  EXPECT_NE(ErrorOf(o).find(splits_.valid.string() + ": no data rows"), std::string::npos)
      << ErrorOf(o);
  trainyard::testing::WriteFileOrDie(splits_.valid, "");
  EXPECT_NE(ErrorOf(o).find("INVALID_ARGUMENT: " + splits_.valid.string()), std::string::npos)
      << ErrorOf(o);
}

TEST_F(TrainerTest, LabelOutOfRangeNamesLine) {
  trainyard::testing::WriteFileOrDie(splits_.train.parent_path() / "labels.json",
                                     R"(["neg","pos"])");
  trainyard::testing::WriteFileOrDie(splits_.test, "bodyText,Target\ngood,1\nbad,2\n");
  EXPECT_NE(
      ErrorOf(BaseOptions(splits_))
          .find(splits_.test.string() + ":3: class id 2 is out of range: the model has 2 classes"),
      std::string::npos)
      << ErrorOf(BaseOptions(splits_));
}

TEST_F(TrainerTest, NonIntegerLabelIsAnError) {
  trainyard::testing::WriteFileOrDie(splits_.train, "bodyText,Target\ngood,positive\n");
  EXPECT_NE(ErrorOf(BaseOptions(splits_)).find(":2: Target 'positive' is not a class id"),
            std::string::npos);
}

TEST_F(TrainerTest, MissingVocabIsRequired) {
  TrainOptions o = BaseOptions(splits_);
  o.vocab.clear();
  EXPECT_NE(ErrorOf(o).find("--vocab is required"), std::string::npos);
  o.vocab = (dir_ / "nope.txt").string();
  EXPECT_NE(ErrorOf(o).find("NOT_FOUND"), std::string::npos) << ErrorOf(o);
}

TEST_F(TrainerTest, JobDirWithForeignFilesIsRefusedBeforeTraining) {
  TrainOptions o = BaseOptions(splits_);
  o.job_dir = dir_ / "job";
  trainyard::testing::WriteFileOrDie(dir_ / "job" / "notes.txt", "mine");
  EXPECT_NE(ErrorOf(o).find("contains 'notes.txt'"), std::string::npos);
}

TEST_F(TrainerTest, MismatchedCheckpointIsAClearError) {
  TrainOptions o = BaseOptions(splits_);
  o.epochs = 1;
  o.checkpoint_dir = dir_ / "ckpt";
  CapturedRun first(Env());
  ASSERT_TRUE(first.Run(o).ok());
  o.batch_size = 8;
  EXPECT_NE(
      ErrorOf(o).find("FAILED_PRECONDITION: checkpoint " + (dir_ / "ckpt").string() +
                      "/checkpoint-00000006 does not match this run (batch_size: checkpoint 16, "
                      "this run 8)"),
      std::string::npos)
      << ErrorOf(o);
}

// Vertex users reuse output prefixes: a new job in the same AIP_CHECKPOINT_DIR starts afresh
// (whatever its flags), and only a restart of the same job resumes.
TEST_F(TrainerTest, JobsSharingACheckpointDirResumeOnlyTheirOwn) {
  TrainOptions o = BaseOptions(splits_);
  o.epochs = 1;
  o.checkpoint_dir = dir_ / "ckpt";
  o.job_id = "101";
  CapturedRun first(Env());
  auto r1 = first.Run(o);
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_FALSE(r1->resumed);
  EXPECT_TRUE(fs::exists(dir_ / "ckpt" / "101" / "checkpoint-00000006" / "DONE"));

  TrainOptions other = o;
  other.job_id = "102";
  other.learning_rate = 5e-4;  // would not match job 101's checkpoint
  CapturedRun second(Env());
  auto r2 = second.Run(other);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_FALSE(r2->resumed);
  EXPECT_EQ(r2->global_step, 6);
  EXPECT_TRUE(fs::exists(dir_ / "ckpt" / "102" / "checkpoint-00000006" / "DONE"));

  other.job_id = "103";
  other.trial_id = "2";
  CapturedRun trial(Env());
  ASSERT_TRUE(trial.Run(other).ok());
  EXPECT_TRUE(fs::exists(dir_ / "ckpt" / "103-2" / "checkpoint-00000006" / "DONE"));

  CapturedRun restart(Env());  // job 101 again: a restart resumes its own checkpoint
  auto r3 = restart.Run(o);
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_TRUE(r3->resumed);
}

TEST_F(TrainerTest, AnotherJobsCheckpointInThisJobsDirIsRefused) {
  TrainOptions o = BaseOptions(splits_);
  o.epochs = 1;
  o.checkpoint_dir = dir_ / "ckpt";
  o.job_id = "101";
  CapturedRun first(Env());
  ASSERT_TRUE(first.Run(o).ok());
  fs::copy(dir_ / "ckpt" / "101", dir_ / "ckpt" / "102", fs::copy_options::recursive);
  o.job_id = "102";
  EXPECT_EQ(ErrorOf(o), "FAILED_PRECONDITION: checkpoint " +
                            (dir_ / "ckpt" / "102" / "checkpoint-00000006").string() +
                            " was written by job 101, not by this job (102); pass --resume-from " +
                            (dir_ / "ckpt" / "102" / "checkpoint-00000006").string() +
                            " to continue it on purpose");
  o.job_id = "../elsewhere";
  ExpectErrorContains(o,
                      "INVALID_ARGUMENT: CLOUD_ML_JOB_ID '../elsewhere' cannot name a "
                      "checkpoint directory");
}

TEST_F(TrainerTest, ResumeFromContinuesAnotherRunsCheckpoint) {
  TrainOptions o = BaseOptions(splits_);
  o.checkpoint_dir = dir_ / "a";
  o.checkpoint_every_steps = 2;
  std::atomic<bool> stop{false};
  CapturedRun interrupted(Env());
  auto r1 = interrupted.Run(o, &stop, [&](int64_t step) {
    if (step == 4) stop = true;
  });
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_EQ(r1->global_step, 4);

  o.checkpoint_dir = dir_ / "b";
  o.resume_from = dir_ / "a";
  CapturedRun resumed(Env());
  auto r2 = resumed.Run(o);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_TRUE(r2->resumed);
  EXPECT_EQ(r2->global_step, 12);
  EXPECT_NE(resumed.log.str().find("Resuming from checkpoint " +
                                   (dir_ / "a" / "checkpoint-00000004").string()),
            std::string::npos)
      << resumed.log.str();
  EXPECT_TRUE(fs::exists(dir_ / "b" / "checkpoint-00000012" / "DONE"));

  o.resume_from = dir_ / "missing";
  o.checkpoint_dir = dir_ / "c";
  ExpectErrorContains(
      o, "NOT_FOUND: --resume-from " + (dir_ / "missing").string() + " does not exist");
  o.batch_size = 8;
  o.resume_from = dir_ / "a";
  ExpectErrorContains(o,
                      "(batch_size: checkpoint 16, this run 8); rerun with the flags and "
                      "data it was written with, or drop --resume-from");
}

TEST_F(TrainerTest, DryRunPrintsArticleLinesAndExportsNothing) {
  TrainOptions o = BaseOptions(splits_);
  o.dry_run = true;
  o.job_dir = dir_ / "job";
  CapturedRun run(Env());
  auto r = run.Run(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->global_step, 1);
  EXPECT_NE(run.out.str().find("Epoch   1 |     0/    6 batches | accuracy "), std::string::npos)
      << run.out.str();
  EXPECT_NE(run.out.str().find("End of epoch   1 - time: "), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "job"));
  EXPECT_TRUE(fs::exists(dir_ / "hypertune" / "output.metrics"));
}

// The exported directory loads in the predictor and reproduces the trainer's test accuracy; the
// predictor's logits equal the in-memory model's on the same inputs.
TEST_F(TrainerTest, ExportThenPredictReproducesLogitsAndMetrics) {
  torch::manual_seed(3);
  model::BertConfig config = model::BertConfig::Tiny({"neg", "pos"});
  config.vocab_size = 23;
  config.num_hidden_layers = 1;
  model::BertForSequenceClassification model(config);
  model->eval();
  const fs::path out = dir_ / "exported";
  fs::create_directories(out);
  ASSERT_TRUE(model::SaveModelFiles(model, out).ok());
  fs::copy_file(splits_.vocab, out / "vocab.txt");
  auto predictor = Predictor::Load(out, 32);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  std::vector<std::string> texts = {"good movie .", "the food was really very awful poor .",
                                    "hate"};
  auto logits = predictor->Logits(texts, 2);
  ASSERT_TRUE(logits.ok()) << logits.status();
  auto tokenizer = text::BertTokenizer::FromFile(splits_.vocab);
  for (size_t i = 0; i < texts.size(); ++i) {
    text::Encoding e = tokenizer->Encode(texts[i], 32);
    torch::Tensor ids =
        torch::tensor(std::vector<int64_t>(e.input_ids.begin(), e.input_ids.end())).unsqueeze(0);
    torch::NoGradGuard no_grad;
    torch::Tensor expected = model->forward(ids, torch::ones_like(ids), torch::zeros_like(ids));
    EXPECT_LT((logits->index({static_cast<int64_t>(i)}) - expected[0]).abs().max().item<double>(),
              1e-5);
  }
}

TEST_F(TrainerTest, TrainedExportMatchesReportedTestAccuracy) {
  TrainOptions o = BaseOptions(splits_);
  o.epochs = 1;
  o.job_dir = dir_ / "job";
  CapturedRun run(Env());
  auto r = run.Run(o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const char* f :
       {"model.safetensors", "config.json", "vocab.txt", "labels.json", "metrics.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / "job" / f)) << f;
  }
  auto predictor = Predictor::Load(dir_ / "job", 32);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  auto data = ReadLabeledCsv(splits_.test, "bodyText", "Target");
  auto predictions = predictor->Predict(data->texts, 7);
  ASSERT_TRUE(predictions.ok());
  int correct = 0;
  for (size_t i = 0; i < data->texts.size(); ++i)
    correct += (*predictions)[i].label == data->labels[i];
  EXPECT_EQ(correct, r->test->confusion.correct());
  auto metrics =
      nlohmann::json::parse(trainyard::testing::ReadFileOrDie(dir_ / "job" / "metrics.json"));
  EXPECT_EQ(metrics["test"]["accuracy"].get<double>(), r->test->accuracy);
}

// --bf16 on CPU: matrix products in bf16 (oneDNN), with two threads so the split linear layers
// run in bf16 too; it learns the synthetic task as float32 does, and the log says which
// unit runs it (or warns that this CPU has none).
TEST_F(TrainerTest, Bf16OnCpuTrainsLikeFloat32) {
  TrainOptions o = BaseOptions(splits_);
  o.threads = 2;
  o.epochs = 8;
  o.learning_rate = 3e-3;
  std::optional<EvalMetrics> test[2];
  std::string log;
  for (bool bf16 : {false, true}) {
    o.bf16 = bf16;
    o.job_dir = dir_ / (bf16 ? "bf16" : "f32");
    CapturedRun run(Env());
    auto r = run.Run(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(std::isfinite(r->train_loss));
    test[bf16] = r->test;
    if (bf16) log = run.log.str();
  }
  ASSERT_TRUE(test[0] && test[1]);
  EXPECT_LT(test[0]->loss, 0.2);  // the task was learnt (chance is ln 2 = 0.69)
  EXPECT_LT(test[1]->loss, 0.2) << "float32 " << test[0]->loss;
  EXPECT_NEAR(test[1]->accuracy, test[0]->accuracy, 0.1);
  EXPECT_TRUE(log.find("bf16 autocast on CPU") != std::string::npos ||
              log.find("without AMX or AVX512-BF16") != std::string::npos)
      << log;
}

}  // namespace
}  // namespace trainyard::train
