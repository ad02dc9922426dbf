// Training checkpoints: everything needed to continue a run bit-for-bit.
//
// A checkpoint is a directory <checkpoint_dir>/checkpoint-<global step, 8 digits>/ holding
//   state.pt            model parameters ("model.<name>") and AdamW moments
//                       ("optim.<name>.exp_avg", "optim.<name>.exp_avg_sq"), a
//                       torch.save-compatible pickle (torch::pickle_save); no RNG state: the
//                       trainer derives dropout masks from (seed, global step, rank);
//   trainer_state.json  format/version, position (epoch, next batch, global step), the current
//                       epoch's batch plan, the run's fingerprint and progress counters;
//   DONE                the completion marker, written last.
// It is built in a staging directory, fsynced and renamed into place (CommitDirectory), so a
// crash leaves either the previous checkpoints or the new one complete; a directory without DONE
// is never loaded. The newest `keep` complete checkpoints are kept.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "train/batch_plan.h"

namespace trainyard::train {

struct TrainingState {
  int64_t epoch = 1;           // 1-based epoch the run continues in
  int64_t next_batch = 0;      // index in `plan` of the next batch to train on
  int64_t global_step = 0;     // optimizer steps taken so far
  BatchPlan plan;              // this epoch's data order; empty = not started (rebuild from seed)
  nlohmann::json fingerprint;  // settings that must match to resume (see trainer.cc)
  nlohmann::json progress;     // counters and per-epoch history, opaque here
  // Who wrote it: {"job": CLOUD_ML_JOB_ID, "trial": CLOUD_ML_TRIAL_ID} inside a job, {} outside
  // one (and in checkpoints from before it was recorded). The trainer resumes a job only from
  // its own checkpoints.
  nlohmann::json writer = nlohmann::json::object();
  std::map<std::string, torch::Tensor> tensors;  // model.*, optim.*
};

class CheckpointManager {
 public:
  static constexpr int kFormatVersion = 1;

  CheckpointManager(std::filesystem::path dir, int keep = 2);

  // Writes a checkpoint for state.global_step (replacing one of the same step) and prunes older
  // ones beyond `keep`. IO errors are returned; earlier checkpoints stay intact.
  Status Save(const TrainingState& state);

  // The newest complete checkpoint, or nullopt when there is none (missing or empty directory).
  // DATA_LOSS when the newest complete checkpoint cannot be read. `from` receives its directory.
  StatusOr<std::optional<TrainingState>> LoadLatest(std::filesystem::path* from = nullptr) const;

  // One checkpoint directory (checkpoint-<step>/ with DONE). DATA_LOSS when it is unreadable,
  // NOT_FOUND when it is not a complete checkpoint.
  static StatusOr<TrainingState> Load(const std::filesystem::path& checkpoint);

  // `path` itself when it is a complete checkpoint, else the newest complete one in it (the
  // --resume-from rule); NOT_FOUND naming `flag` and what it must hold otherwise.
  static StatusOr<std::filesystem::path> FindCheckpoint(const std::filesystem::path& path,
                                                        const std::string& flag);

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::vector<std::filesystem::path> CompleteCheckpoints() const;  // oldest first

  std::filesystem::path dir_;
  int keep_;
};

}  // namespace trainyard::train
