// Options of `trainyard-bert train`: the article's main.py flags plus the trainer's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "replica_contract/replica_contract.h"

namespace trainyard::train {

struct TrainOptions {
  // The article's flags (same names and meaning).
  std::string training_file;
  std::string validation_file;
  std::string testing_file;  // optional: no test evaluation without it
  std::string job_dir;       // export directory (AIP_MODEL_DIR on Vertex); may be gs://
  int epochs = 2;
  int batch_size = 128;
  double learning_rate = 1e-4;
  bool dry_run = false;  // one step of one epoch, validation, no test, no export

  std::string model_dir;  // pretrained HF directory (config.json + weights [+ vocab.txt])
  std::string vocab;      // vocab.txt; defaults to <model_dir>/vocab.txt
  int max_length = 100;
  uint64_t seed = 42;
  int threads = 0;  // intra-op threads; 0 = DataParallel::DefaultThreadCount
  std::string text_column = "bodyText";
  std::string label_column = "Target";
  int warmup_steps = 0;
  double weight_decay = 0.01;
  std::string checkpoint_dir;  // AIP_CHECKPOINT_DIR on Vertex; see CheckpointRunName
  std::string resume_from;     // a checkpoint (or a run's checkpoint dir) to start from
  // The job and trial this run is (CLOUD_ML_JOB_ID, CLOUD_ML_TRIAL_ID), empty outside a job.
  std::string job_id;
  std::string trial_id;
  int checkpoint_every_steps = 0;  // 0 = only at the end of each epoch
  bool freeze_encoder = false;
  int trainable_layers = -1;  // -1 all; K = last K encoder layers (+ pooler, head)
  bool length_grouping = true;
  std::string hypertune_metric = "accuracy";
  std::string tensorboard_dir;  // AIP_TENSORBOARD_LOG_DIR on Vertex
  bool bf16 = false;            // autocast to bfloat16 (CPU; CUDA with LibTorch >= 2)
  int eval_batch_size = 0;      // 0 = 2 x batch_size

  // Data parallelism (the role comes from MASTER_ADDR/WORLD_SIZE/RANK, CLUSTER_SPEC or TF_CONFIG).
  bool check_replicas = false;      // compare weights with rank 0 after every step (debug)
  double collective_timeout_s = 0;  // 0 = TRAINYARD_COLLECTIVE_TIMEOUT_S or 300 s
};

// Fills job_dir / checkpoint_dir / tensorboard_dir from `env`'s AIP_MODEL_DIR /
// AIP_CHECKPOINT_DIR / AIP_TENSORBOARD_LOG_DIR (replica_contract::DecodeOutputDirs) when the flags
// were not given (Vertex sets these for custom jobs), job_id / trial_id from CLOUD_ML_JOB_ID /
// CLOUD_ML_TRIAL_ID, and check_replicas from
// TRAINYARD_CHECK_REPLICAS=1. The CLI calls it with its environment; the trainer never reads the
// process environment itself.
void ApplyEnvironmentDefaults(TrainOptions& options, const replica_contract::EnvMap& env);

// The sub-directory of checkpoint_dir this run writes its checkpoints to and resumes from:
// "<job>" or "<job>-<trial>" inside a job, "" outside one. Output prefixes are reused across
// jobs (a pipeline re-sent with one flag changed, a study run again), so a job resumes only its
// own restarts' checkpoints, never another job's; outside a job, rerunning the same command
// resumes, and --resume-from continues any run.
std::string CheckpointRunName(const TrainOptions& options);

// INVALID_ARGUMENT naming the flag and the fix for out-of-range or conflicting values.
Status ValidateOptions(const TrainOptions& options);

}  // namespace trainyard::train
