// `trainyard-bert train`: fine-tunes a BERT sequence classifier on CSV data, the native
// equivalent of the article's main.py (same flags, same log lines), plus checkpoint/resume,
// preemption handling, hypertune reporting and an HF-loadable export.
//
// Flow: resolve paths (gs:// -> bucket root) -> tokenize each file once -> build or load the model
// -> resume from the newest complete checkpoint if any -> epochs of length-grouped, dynamically
// padded batches with AdamW + linear warmup/decay -> validation each epoch (hypertune line,
// checkpoint) -> test -> export model.safetensors, config.json, vocab.txt, labels.json,
// metrics.json to the job dir in one atomic directory commit.
//
// The loop (trainer.cc, Trainer::TrainEpochs/RunStep) calls TrainStep (train_step.h: forward,
// loss, backward, all-reduce, AdamW) and then its observers (train_observers.h: console lines,
// metrics history, hypertune, TensorBoard, checkpoints). Options and the environment come in
// through TrainOptions and TrainIo; nothing here reads the process environment.
//
// Data parallelism (train/data_parallel.h): when the environment names a multi-process job
// (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, CLUSTER_SPEC or TF_CONFIG, as the platform injects),
// every process trains on its shard of each global batch (--batch-size per replica x world
// size), gradients are all-reduced, and only rank 0 writes checkpoints, the export, the
// hypertune file and TensorBoard events. A checkpoint resumes at any world size.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>

#include "common/status.h"
#include "replica_contract/replica_contract.h"
#include "train/metrics.h"
#include "train/train_options.h"

namespace trainyard::train {

struct TrainIo {
  std::ostream* out = nullptr;  // progress lines and reports (stdout)
  std::ostream* log = nullptr;  // info/warning lines and the progress bar (stderr)
  bool progress_bar = false;    // draw the bar on `log` (the CLI: when stderr is a terminal)
  // Polled after every optimizer step; when true the trainer writes a checkpoint and returns
  // kPreempted (the CLI sets it from SIGTERM). May be null.
  const std::atomic<bool>* stop_requested = nullptr;
  // Called after every optimizer step with the global step (tests use it to request a stop at
  // an exact step). May be empty.
  std::function<void(int64_t global_step)> after_step;
  // The environment the platform gave this replica: its role (MASTER_ADDR/.../RANK, CLUSTER_SPEC,
  // TF_CONFIG), CLOUD_ML_HP_METRIC_FILE / CLOUD_ML_TRIAL_ID, OMP_NUM_THREADS, LOCAL_WORLD_SIZE,
  // TRAINYARD_COLLECTIVE_TIMEOUT_S. The CLI passes its own (replica_contract::CurrentEnvironment);
  // the trainer never reads the process environment.
  replica_contract::EnvMap env;
};

enum class TrainOutcome { kCompleted, kPreempted };

struct TrainResult {
  TrainOutcome outcome = TrainOutcome::kCompleted;
  int64_t global_step = 0;
  bool resumed = false;
  double train_loss = 0, train_accuracy = 0;  // the last epoch's means
  std::optional<EvalMetrics> validation;      // after the last epoch
  std::optional<EvalMetrics> test;            // when a testing file was given (not on dry runs)
  int64_t train_samples = 0;                  // examples trained on by this process (its shards)
  double train_seconds = 0;                   // time in training steps (no evaluation)
  std::filesystem::path exported_to;          // empty when nothing was exported
};

// Runs a whole training job. Errors (bad flags, files, data, checkpoints; IO) come back as a
// Status whose message names the flag/file and the fix; LibTorch exceptions are converted.
StatusOr<TrainResult> RunTraining(const TrainOptions& options, const TrainIo& io);

}  // namespace trainyard::train
