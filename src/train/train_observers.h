// What happens around the training step: console lines, the metrics history, hypertune reports,
// TensorBoard scalars and checkpoints, as observers the loop in trainer.cc notifies after each
// step and each epoch. The loop owns the training state (model, optimizer, counters); observers
// only read the events, except the checkpoint observer, which asks the trainer to save.
//
// Numbers in events are global (summed over data-parallel replicas), so every rank sees the same
// ones; observers that write shared files exist only on rank 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "train/batch_plan.h"
#include "train/hypertune_reporter.h"
#include "train/metrics.h"
#include "train/progress.h"
#include "train/tensorboard_writer.h"

namespace trainyard::train {

// The article's progress line comes every kLogInterval batches; EpochCounters' window spans one
// such interval.
inline constexpr int64_t kLogInterval = 50;

// Per-epoch counters, saved in checkpoints so a resumed epoch reports the same numbers.
struct EpochCounters {
  double loss_sum = 0;  // sum of batch mean loss * batch size
  int64_t correct = 0, count = 0;
  int64_t window_correct = 0, window_count = 0;  // since the last progress line
  double last_loss = 0;
  double seconds = 0;  // training + evaluation time spent in this epoch before a resume

  nlohmann::json ToJson() const;
  static EpochCounters FromJson(const nlohmann::json& j);
};

struct StepEvent {
  int64_t epoch = 0;        // 1-based
  int64_t batch = 0;        // 0-based position of this step's batch in the epoch's plan
  int64_t batches = 0;      // batches in the epoch's plan
  int64_t steps = 0;        // batches this epoch runs (1 on a dry run)
  int64_t global_step = 0;  // optimizer steps so far, this one included
  double loss = 0;          // this step's mean loss over all replicas' examples
  double learning_rate = 0;
  double samples_per_second = 0;  // all replicas, over this run's training steps
  int64_t global_batch_size = 0;
  bool stopping = false;  // every rank stops after this step (SIGTERM on some rank)
  const EpochCounters* counters = nullptr;  // the epoch's totals, this step included
  const BatchPlan* plan = nullptr;          // the epoch's plan (for a checkpoint)
};

struct EpochEvent {
  int64_t epoch = 0;
  double seconds = 0;  // training + validation time of the epoch
  double train_loss = 0, train_accuracy = 0;
  const EvalMetrics* validation = nullptr;
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void OnEpochBegin(int64_t /*epoch*/) {}
  // After every optimizer step. An error ends training (a checkpoint that cannot be written);
  // best-effort outputs (hypertune, TensorBoard) log a warning instead.
  virtual Status OnStep(const StepEvent& /*event*/) { return Status::Ok(); }
  // After each epoch's validation.
  virtual Status OnEpochEnd(const EpochEvent& /*event*/) { return Status::Ok(); }
};

// The article's console output: a batch line every kLogInterval batches, the progress bar, and the
// end-of-epoch line between rules.
class ConsoleObserver : public TrainObserver {
 public:
  explicit ConsoleObserver(TrainConsole& console) : console_(console) {}
  void OnEpochBegin(int64_t epoch) override;
  Status OnStep(const StepEvent& e) override;
  Status OnEpochEnd(const EpochEvent& e) override;

 private:
  TrainConsole& console_;
  std::chrono::steady_clock::time_point window_start_;
};

// Per-epoch metrics for metrics.json and checkpoints.
class HistoryObserver : public TrainObserver {
 public:
  Status OnEpochEnd(const EpochEvent& e) override;
  const nlohmann::json& history() const { return history_; }
  void Restore(nlohmann::json history) { history_ = std::move(history); }

 private:
  nlohmann::json history_ = nlohmann::json::array();
};

// Validation accuracy per epoch to CLOUD_ML_HP_METRIC_FILE (hypertune_reporter.h).
class HypertuneObserver : public TrainObserver {
 public:
  HypertuneObserver(HypertuneReporter reporter, TrainConsole& console)
      : reporter_(std::move(reporter)), console_(console) {}
  Status OnEpochEnd(const EpochEvent& e) override;

 private:
  HypertuneReporter reporter_;
  TrainConsole& console_;
};

// train/loss and train/learning_rate every 10 steps, epoch/* scalars after each epoch.
class TensorBoardObserver : public TrainObserver {
 public:
  TensorBoardObserver(TensorBoardWriter writer, TrainConsole& console)
      : writer_(std::move(writer)), console_(console) {}
  Status OnStep(const StepEvent& e) override;
  Status OnEpochEnd(const EpochEvent& e) override;

 private:
  TensorBoardWriter writer_;
  TrainConsole& console_;
};

// Checkpoints every `every_steps` optimizer steps (0 = never; not after an epoch's last batch,
// nor when stopping: the stop writes its own) and after every epoch.
class CheckpointObserver : public TrainObserver {
 public:
  using Save = std::function<Status(int64_t epoch, int64_t next_batch, const BatchPlan& plan)>;
  CheckpointObserver(Save save, int every_steps) : save_(std::move(save)), every_(every_steps) {}
  Status OnStep(const StepEvent& e) override;
  Status OnEpochEnd(const EpochEvent& e) override;

 private:
  Save save_;
  int every_;
};

}  // namespace trainyard::train
