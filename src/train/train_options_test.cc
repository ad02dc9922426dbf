#include "train/train_options.h"

#include <gtest/gtest.h>

#include <map>

namespace trainyard::train {
namespace {

TEST(TrainOptionsTest, VertexEnvironmentFillsUnsetDirectories) {
  std::map<std::string, std::string> env = {{"AIP_MODEL_DIR", "gs://b/model"},
                                            {"AIP_CHECKPOINT_DIR", "gs://b/ckpt"},
                                            {"AIP_TENSORBOARD_LOG_DIR", "gs://b/logs"}};
  TrainOptions o;
  o.checkpoint_dir = "/explicit";
  ApplyEnvironmentDefaults(o, env);
  EXPECT_EQ(o.job_dir + "|" + o.checkpoint_dir + "|" + o.tensorboard_dir,
            "gs://b/model|/explicit|gs://b/logs");
}

TEST(TrainOptionsTest, JobAndTrialNameTheCheckpointSubdirectory) {
  TrainOptions o;
  EXPECT_EQ(CheckpointRunName(o), "");
  ApplyEnvironmentDefaults(o, {{"CLOUD_ML_JOB_ID", "4711"}});
  EXPECT_EQ(CheckpointRunName(o), "4711");
  ApplyEnvironmentDefaults(o, {{"CLOUD_ML_JOB_ID", "4712"}, {"CLOUD_ML_TRIAL_ID", "3"}});
  EXPECT_EQ(CheckpointRunName(o), "4712-3");
  o.training_file = "t.csv";
  o.validation_file = "v.csv";
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.trial_id = "3/..";
  EXPECT_EQ(ValidateOptions(o).message(),
            "CLOUD_ML_TRIAL_ID '3/..' cannot name a checkpoint directory: use at most 128 "
            "letters, digits, '-', '_' or '.'");
}

TEST(TrainOptionsTest, ValidationNamesTheFlag) {
  TrainOptions o;
  o.training_file = "t.csv";
  o.validation_file = "v.csv";
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.epochs = 0;
  EXPECT_EQ(ValidateOptions(o).message(), "--epochs: must be >= 1, got 0");
  o.epochs = 1;
  o.freeze_encoder = true;
  o.trainable_layers = 1;
  EXPECT_NE(ValidateOptions(o).message().find("--freeze-encoder and --trainable-layers 1 conflict"),
            std::string::npos);
  o.freeze_encoder = false;
  o.hypertune_metric = "timestamp";
  EXPECT_FALSE(ValidateOptions(o).ok());
}

}  // namespace
}  // namespace trainyard::train
