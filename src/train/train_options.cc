#include "train/train_options.h"

#include <algorithm>
#include <cctype>

#include "train/hypertune_reporter.h"

namespace trainyard::train {

void ApplyEnvironmentDefaults(TrainOptions& options, const replica_contract::EnvMap& env) {
  const replica_contract::OutputDirs dirs = replica_contract::DecodeOutputDirs(env);
  auto fill = [](std::string& field, const std::string& value) {
    if (field.empty()) field = value;
  };
  fill(options.job_dir, dirs.model_dir);
  fill(options.checkpoint_dir, dirs.checkpoint_dir);
  fill(options.tensorboard_dir, dirs.tensorboard_log_dir);
  if (auto it = env.find(replica_contract::kCloudMlJobId); it != env.end()) {
    options.job_id = it->second;
  }
  if (auto it = env.find(replica_contract::kCloudMlTrialId); it != env.end()) {
    options.trial_id = it->second;
  }
  if (auto it = env.find("TRAINYARD_CHECK_REPLICAS"); it != env.end() && it->second == "1") {
    options.check_replicas = true;
  }
}

std::string CheckpointRunName(const TrainOptions& options) {
  if (options.job_id.empty()) return "";
  return options.trial_id.empty() ? options.job_id : options.job_id + "-" + options.trial_id;
}

namespace {

// Job and trial ids name a directory: one path component, nothing a shell or a path would read.
Status CheckRunId(const char* name, const std::string& id) {
  const bool ok = id.size() <= 128 && id != "." && id != ".." &&
                  std::all_of(id.begin(), id.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
                  });
  if (ok) return Status::Ok();
  return InvalidArgumentError(std::string(name) + " '" + id +
                              "' cannot name a checkpoint directory: use at most 128 letters, "
                              "digits, '-', '_' or '.'");
}

}  // namespace

Status ValidateOptions(const TrainOptions& o) {
  TY_RETURN_IF_ERROR(CheckRunId(replica_contract::kCloudMlJobId, o.job_id));
  TY_RETURN_IF_ERROR(CheckRunId(replica_contract::kCloudMlTrialId, o.trial_id));
  auto bad = [](const std::string& m) { return InvalidArgumentError(m); };
  if (o.training_file.empty())
    return bad("--training-file is required (a CSV with the text and class-id columns)");
  if (o.validation_file.empty())
    return bad("--validation-file is required (a CSV like the training file)");
  if (o.epochs < 1) return bad("--epochs: must be >= 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 1)
    return bad("--batch-size: must be >= 1, got " + std::to_string(o.batch_size));
  if (!(o.learning_rate > 0) || o.learning_rate > 10) {
    return bad("--learning-rate: must be in (0, 10], got " + std::to_string(o.learning_rate));
  }
  if (o.max_length < 2) {
    return bad("--max-length: must be >= 2 ([CLS] and [SEP]), got " + std::to_string(o.max_length));
  }
  if (!(o.collective_timeout_s >= 0) || o.collective_timeout_s > 7 * 86400) {
    return bad(
        "--collective-timeout: seconds in [0, 604800] (0 = TRAINYARD_COLLECTIVE_TIMEOUT_S or "
        "300), got " +
        std::to_string(o.collective_timeout_s));
  }
  if (o.threads < 0)
    return bad("--threads: must be >= 0 (0 = automatic), got " + std::to_string(o.threads));
  if (o.warmup_steps < 0)
    return bad("--warmup-steps: must be >= 0, got " + std::to_string(o.warmup_steps));
  if (!(o.weight_decay >= 0))
    return bad("--weight-decay: must be >= 0, got " + std::to_string(o.weight_decay));
  if (o.checkpoint_every_steps < 0) {
    return bad("--checkpoint-every-steps: must be >= 0 (0 = at each epoch end only), got " +
               std::to_string(o.checkpoint_every_steps));
  }
  if (o.trainable_layers < -1) {
    return bad("--trainable-layers: must be -1 (all) or >= 0, got " +
               std::to_string(o.trainable_layers));
  }
  if (o.freeze_encoder && o.trainable_layers > 0) {
    return bad("--freeze-encoder and --trainable-layers " + std::to_string(o.trainable_layers) +
               " conflict; --freeze-encoder means --trainable-layers 0");
  }
  if (o.eval_batch_size < 0) return bad("--eval-batch-size: must be >= 0");
  if (o.hypertune_metric.empty() || o.hypertune_metric == "global_step" ||
      o.hypertune_metric == "timestamp" || o.hypertune_metric == "trial") {
    return bad(
        "--hypertune-metric: must be a metric name other than global_step, timestamp, trial; got "
        "'" +
        o.hypertune_metric + "'");
  }
  return Status::Ok();
}

}  // namespace trainyard::train
