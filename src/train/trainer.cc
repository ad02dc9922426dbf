#include "train/trainer.h"

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "common/file_util.h"
#include "data/label_map.h"
#include "model/bert.h"
#include "model/cpu_runtime.h"
#include "model/hf_checkpoint.h"
#include "text/bert_tokenizer.h"
#include "train/adamw.h"
#include "train/autocast.h"
#include "train/batch_builder.h"
#include "train/batch_plan.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/hypertune_reporter.h"
#include "train/labeled_dataset.h"
#include "train/progress.h"
#include "train/tensorboard_writer.h"
#include "train/train_observers.h"
#include "train/train_paths.h"
#include "train/train_step.h"

namespace trainyard::train {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "key: checkpoint X, this run Y; ..." for every fingerprint entry that differs ("" if none).
std::string FingerprintDiffs(const nlohmann::json& expected, const nlohmann::json& saved) {
  auto shorten = [](std::string s) { return s.size() > 80 ? s.substr(0, 77) + "..." : s; };
  std::string diffs;
  for (const auto& [key, value] : expected.items()) {
    if (!saved.contains(key) || saved[key] != value) {
      const std::string theirs = saved.contains(key) ? shorten(saved[key].dump()) : "none";
      diffs += (diffs.empty() ? "" : "; ") + key + ": checkpoint " + theirs + ", this run " +
               shorten(value.dump());
    }
  }
  return diffs;
}

struct Split {
  LabeledTexts raw;
  TokenizedSet tokens;
  BatchPlan eval_plan;
};

class Trainer {
 public:
  Trainer(const TrainOptions& options, const TrainIo& io)
      : o_(options),
        io_(io),
        console_(*io.out, *io.log, io.progress_bar),
        device_(torch::cuda::is_available() ? torch::Device(torch::kCUDA)
                                            : torch::Device(torch::kCPU)) {}

  StatusOr<TrainResult> Run() {
    TY_RETURN_IF_ERROR(ValidateOptions(o_));
    TY_RETURN_IF_ERROR(JoinReplicas());
    TY_RETURN_IF_ERROR(ResolvePaths());
    TY_RETURN_IF_ERROR(SetUpRuntime());
    TY_RETURN_IF_ERROR(LoadData());
    TY_RETURN_IF_ERROR(BuildModel());
    TY_RETURN_IF_ERROR(MaybeResume());
    TY_RETURN_IF_ERROR(dp_->Attach(model_->named_parameters(), model_->named_buffers()));
    TY_RETURN_IF_ERROR(TrainEpochs());
    if (result_.outcome == TrainOutcome::kPreempted) return result_;
    TY_RETURN_IF_ERROR(Finish());
    return result_;
  }

 private:
  // ---- setup ---------------------------------------------------------------------------------

  // Role from MASTER_ADDR/.../RANK, CLUSTER_SPEC or TF_CONFIG (what the platform injects); a
  // single process when none is set. Joins the other ranks before anything else so that every
  // later failure of one rank shows up on the others as a closed connection, not a long wait.
  Status JoinReplicas() {
    DataParallelOptions options;
    options.collective_timeout_s = o_.collective_timeout_s;
    options.check_replicas = o_.check_replicas;
    auto dp = DataParallel::Connect(io_.env, options);
    if (!dp.ok()) return dp.status().WithPrefix("joining the data-parallel job");
    dp_ = std::move(dp).value();
    if (dp_->distributed()) {
      console_.Info("Data-parallel replica: " + dp_->Describe());
      console_.Info("Global batch size: " + std::to_string(o_.batch_size) + " per replica x " +
                    std::to_string(dp_->world_size()) +
                    " replicas = " + std::to_string(GlobalBatchSize()));
      if (!dp_->is_chief()) {
        console_.Info(
            "Not the chief (rank 0): this replica writes no model, metrics, "
            "checkpoints or hypertune lines");
      }
    }
    return Status::Ok();
  }

  int GlobalBatchSize() const { return o_.batch_size * dp_->world_size(); }

  Status ResolvePaths() {
    TY_ASSIGN_OR_RETURN(paths_, ResolveTrainPaths(o_, dp_->is_chief(), console_));
    return Status::Ok();
  }

  Status SetUpRuntime() {
    const int threads = o_.threads > 0 ? o_.threads : dp_->DefaultThreadCount(io_.env);
    // One compute pool, not ATen's OpenMP pool plus OpenBLAS's: see model/cpu_runtime.h.
    const int blas_threads = model::ConfigureCpuRuntime(threads);
    if (blas_threads > 1) {
      console_.Warning("OpenBLAS still runs " + std::to_string(blas_threads) +
                       " threads (openblas_set_num_threads unavailable); set "
                       "OPENBLAS_NUM_THREADS=1 for full speed");
    }
    threads_ = threads;
    if (device_.is_cuda()) {
      console_.Info("GPU: CUDA device 0 is available (" +
                    std::to_string(torch::cuda::device_count()) + " visible).");
    } else {
      console_.Info("No GPU available. Training will run on CPU (" + std::to_string(threads) +
                    " threads).");
    }
    TY_RETURN_IF_ERROR(CheckAutocastSupported(o_.bf16, device_));
    if (o_.bf16 && device_.is_cpu()) {
      const std::string unit = CpuBf16Unit();
      if (unit.empty()) {
        console_.Warning(
            "--bf16 on a CPU without AMX or AVX512-BF16: bf16 is converted in "
            "software here and is slower than float32 (drop --bf16)");
      } else {
        console_.Info("bf16 autocast on CPU: matrix products in bf16 on " + unit);
      }
    }
    return Status::Ok();
  }

  Status LoadData() {
    auto tokenizer = text::BertTokenizer::FromFile(paths_.vocab);
    if (!tokenizer.ok()) return tokenizer.status().WithPrefix("--vocab");
    tokenizer_.emplace(std::move(tokenizer).value());

    const auto t0 = Clock::now();
    TY_ASSIGN_OR_RETURN(train_.raw, ReadLabeledCsv(paths_.train, o_.text_column, o_.label_column));
    TY_ASSIGN_OR_RETURN(valid_.raw, ReadLabeledCsv(paths_.valid, o_.text_column, o_.label_column));
    if (!paths_.test.empty()) {
      TY_ASSIGN_OR_RETURN(test_.raw, ReadLabeledCsv(paths_.test, o_.text_column, o_.label_column));
    }

    // Class names: labels.json next to the training file (written by make-splits), else the
    // pretrained model's labels are replaced by the ids found in the data.
    const fs::path labels_file = paths_.train.parent_path() / data::kLabelsFileName;
    std::string hint;
    if (fs::exists(labels_file)) {
      TY_ASSIGN_OR_RETURN(labels_, data::LabelMap::FromFile(labels_file));
      hint = " (" + labels_file.string() + " names " + std::to_string(labels_.size()) +
             " classes); fix the data or labels.json";
    } else {
      int64_t max_id = 0;
      for (const auto* split : {&train_, &valid_, &test_}) {
        for (int64_t id : split->raw.labels) max_id = std::max(max_id, id);
      }
      if (max_id + 1 > 10000) {
        return InvalidArgumentError(paths_.train.string() + ": class id " + std::to_string(max_id) +
                                    " implies more than 10000 classes; " + o_.label_column +
                                    " must hold class ids 0..K-1");
      }
      labels_ = data::LabelMap::FromIds(static_cast<int>(std::max<int64_t>(2, max_id + 1)));
      console_.Info("No labels.json next to " + paths_.train.string() + "; using class ids 0.." +
                    std::to_string(labels_.size() - 1) + " as label names");
    }
    for (const auto* split : {&train_, &valid_, &test_}) {
      TY_RETURN_IF_ERROR(CheckLabelsInRange(split->raw, labels_.size(), hint));
    }

    for (auto* split : {&train_, &valid_, &test_}) {
      if (split->raw.texts.empty()) continue;
      split->tokens = TokenizedSet::Encode(*tokenizer_, split->raw.texts, split->raw.labels,
                                           o_.max_length, o_.threads);
      BatchPlanOptions eval_options;
      eval_options.batch_size = EvalBatchSize();
      eval_options.shuffle = false;
      split->eval_plan = PlanBatches(split->tokens.Lengths(), eval_options, o_.seed, 0);
    }
    train_lengths_ = train_.tokens.Lengths();
    console_.Info("Read and tokenized " + std::to_string(train_.tokens.size()) + " training, " +
                  std::to_string(valid_.tokens.size()) + " validation, " +
                  std::to_string(test_.tokens.size()) + " test examples in " +
                  FormatSeconds(SecondsSince(t0)) + " (mean length " +
                  FormatDouble(static_cast<double>(train_.tokens.total_tokens()) /
                                   std::max<size_t>(1, train_.tokens.size()),
                               1) +
                  " tokens, max_length " + std::to_string(o_.max_length) + ")");
    return Status::Ok();
  }

  Status BuildModel() {
    torch::manual_seed(o_.seed);
    try {
      if (!paths_.model_dir.empty()) {
        model::LoadOptions load_options;
        load_options.labels = labels_.names();
        load_options.allow_missing_head = true;
        model::LoadReport report;
        auto loaded = model::LoadPretrained(paths_.model_dir, load_options, &report);
        if (!loaded.ok())
          return loaded.status().WithPrefix("--model-dir " + paths_.model_dir.string());
        model_ = std::move(loaded).value();
        for (const auto& w : report.warnings) console_.Warning(w);
        console_.Info("Loaded pretrained weights from " + paths_.model_dir.string());
      } else {
        model::BertConfig config = model::BertConfig::Tiny(labels_.names());
        config.vocab_size = static_cast<int64_t>(tokenizer_->vocab_size());
        TY_RETURN_IF_ERROR(config.Validate());
        model_ = model::BertForSequenceClassification(config);
        console_.Info(
            "No --model-dir: training BERT-Tiny (2 layers, hidden 128, 2 heads) from a "
            "random initialization");
      }
      const auto& config = model_->config();
      if (static_cast<int64_t>(tokenizer_->vocab_size()) > config.vocab_size) {
        return InvalidArgumentError(
            "--vocab " + paths_.vocab.string() + " has " +
            std::to_string(tokenizer_->vocab_size()) + " tokens but the model's vocab_size is " +
            std::to_string(config.vocab_size) + "; use the vocab.txt the model was trained with");
      }
      if (o_.max_length > config.max_position_embeddings) {
        return InvalidArgumentError("--max-length " + std::to_string(o_.max_length) +
                                    " exceeds the model's max_position_embeddings " +
                                    std::to_string(config.max_position_embeddings));
      }
      const int trainable = o_.freeze_encoder ? 0 : o_.trainable_layers;
      TY_RETURN_IF_ERROR(model_->SetTrainableLayers(trainable).WithPrefix(
          o_.freeze_encoder ? "--freeze-encoder" : "--trainable-layers"));
      model_->to(device_);

      std::vector<std::pair<std::string, torch::Tensor>> named;
      int64_t total = 0;
      for (const auto& item : model_->named_parameters()) {
        named.emplace_back(item.key(), item.value());
        total += item.value().numel();
      }
      optimizer_.emplace(named, AdamWOptions{.weight_decay = o_.weight_decay});
      const int64_t trainable_count = optimizer_->num_trainable_elements();
      console_.Info("Total params : " + std::to_string(total) +
                    " - Trainable : " + std::to_string(trainable_count) + " (" +
                    FormatDouble(100.0 * trainable_count / std::max<int64_t>(1, total), 2) +
                    "% of total)");
    } catch (const std::exception& e) {
      return InternalError(std::string("building the model: ") + FirstLine(e.what()));
    }

    BatchPlanOptions plan_options = TrainPlanOptions();
    steps_per_epoch_ =
        static_cast<int64_t>(PlanBatches(train_lengths_, plan_options, o_.seed, 1).size());
    total_steps_ = o_.dry_run ? 1 : steps_per_epoch_ * o_.epochs;
    EnsureBuilderCapacity(std::max(o_.batch_size, EvalBatchSize()));
    return Status::Ok();
  }

  // ---- checkpoints ---------------------------------------------------------------------------

  nlohmann::json Fingerprint() const {
    std::vector<std::string> shapes;
    for (const auto& item : model_->named_parameters()) {
      shapes.push_back(item.key() + c10::str(item.value().sizes()));
    }
    return {{"labels", labels_.names()},
            {"train_examples", train_.tokens.size()},
            {"train_tokens", train_.tokens.total_tokens()},
            {"batch_size", o_.batch_size},
            {"seed", o_.seed},
            {"length_grouping", o_.length_grouping},
            {"max_length", o_.max_length},
            {"epochs", o_.epochs},
            {"learning_rate", o_.learning_rate},
            {"warmup_steps", o_.warmup_steps},
            {"weight_decay", o_.weight_decay},
            {"trainable_layers", o_.freeze_encoder ? 0 : o_.trainable_layers},
            {"parameters", shapes}};
  }

  Status SaveCheckpoint(int64_t epoch, int64_t next_batch, const BatchPlan& plan) {
    if (paths_.checkpoint_dir.empty() || !dp_->is_chief()) return Status::Ok();
    const auto t0 = Clock::now();
    TrainingState state;
    state.epoch = epoch;
    state.next_batch = next_batch;
    state.global_step = global_step_;
    state.plan = plan;
    state.fingerprint = Fingerprint();
    if (!o_.job_id.empty()) state.writer = {{"job", o_.job_id}, {"trial", o_.trial_id}};
    EpochCounters counters = counters_;
    counters.seconds += SecondsSince(epoch_start_);
    state.progress = {{"counters", counters.ToJson()},
                      {"history", history_.history()},
                      {"world_size", dp_->world_size()}};
    for (const auto& item : model_->named_parameters()) {
      state.tensors["model." + item.key()] = item.value();
    }
    for (const auto& [name, tensor] : optimizer_->StateTensors())
      state.tensors["optim." + name] = tensor;
    Status s = CheckpointManager(paths_.checkpoint_dir).Save(state);
    if (s.ok()) {
      console_.Info("Checkpoint written: " + paths_.checkpoint_dir.string() + " (epoch " +
                    std::to_string(epoch) + ", batch " + std::to_string(next_batch) +
                    ", global step " + std::to_string(global_step_) + ", " +
                    FormatSeconds(SecondsSince(t0)) + ")");
    }
    return s;
  }

  // The model's parameters and the optimizer's moments from a checkpoint of this run.
  Status RestoreTensors(const TrainingState& state, const fs::path& from) {
    torch::NoGradGuard no_grad;
    for (auto& item : model_->named_parameters()) {
      auto it = state.tensors.find("model." + item.key());
      if (it == state.tensors.end() || !it->second.sizes().equals(item.value().sizes())) {
        return FailedPreconditionError("checkpoint " + from.string() + " lacks parameter '" +
                                       item.key() +
                                       "' of the right shape; use a new --checkpoint-dir");
      }
      item.value().copy_(it->second);
    }
    std::map<std::string, torch::Tensor> optim;
    for (const auto& [name, tensor] : state.tensors) {
      if (name.rfind("optim.", 0) == 0) optim[name.substr(6)] = tensor;
    }
    TY_RETURN_IF_ERROR(
        optimizer_->LoadState(optim, state.global_step).WithPrefix("checkpoint " + from.string()));
    return Status::Ok();
  }

  // This run's own newest checkpoint (a restart, or the same command run again); else the one
  // --resume-from names; nullopt for a new run.
  StatusOr<std::optional<TrainingState>> LoadResumeState(fs::path* from) {
    if (!paths_.checkpoint_dir.empty()) {
      TY_ASSIGN_OR_RETURN(auto state, CheckpointManager(paths_.checkpoint_dir).LoadLatest(from));
      if (state) {
        TY_RETURN_IF_ERROR(CheckWriter(*state, *from));
        return state;
      }
    }
    if (paths_.resume_from.empty()) return std::optional<TrainingState>();
    TY_ASSIGN_OR_RETURN(*from,
                        CheckpointManager::FindCheckpoint(paths_.resume_from, "--resume-from"));
    TY_ASSIGN_OR_RETURN(TrainingState state, CheckpointManager::Load(*from));
    return std::optional<TrainingState>(std::move(state));
  }

  // A job's checkpoint dir is its own (CheckpointRunName), so another writer there means the
  // directory was copied or named by hand: resuming would continue someone else's run.
  Status CheckWriter(const TrainingState& state, const fs::path& from) const {
    if (o_.job_id.empty()) return Status::Ok();
    const std::string job = state.writer.value("job", "");
    const std::string trial = state.writer.value("trial", "");
    if (job == o_.job_id && trial == o_.trial_id) return Status::Ok();
    return FailedPreconditionError(
        "checkpoint " + from.string() + " was written by " +
        (job.empty() ? std::string("a run outside any job")
                     : "job " + job + (trial.empty() ? "" : " trial " + trial)) +
        ", not by this job (" + o_.job_id + (o_.trial_id.empty() ? "" : " trial " + o_.trial_id) +
        "); pass --resume-from " + from.string() + " to continue it on purpose");
  }

  Status MaybeResume() {
    if (paths_.checkpoint_dir.empty() && paths_.resume_from.empty()) {
      if (!o_.dry_run) {
        console_.Info(
            "No --checkpoint-dir (or AIP_CHECKPOINT_DIR): a preempted run restarts "
            "from scratch");
      }
      return Status::Ok();
    }
    fs::path from;
    TY_ASSIGN_OR_RETURN(auto state, LoadResumeState(&from));
    // Every rank reads the checkpoint itself (the directory must be on storage all replicas
    // share, as AIP_CHECKPOINT_DIR is on Vertex); a rank that sees another one would train on
    // other weights and data positions, so that is an error rather than a silent divergence.
    TY_RETURN_IF_ERROR(dp_->CheckSameOnAllRanks(
        state ? std::vector<int64_t>{1, state->global_step, state->epoch, state->next_batch}
              : std::vector<int64_t>{0, 0, 0, 0},
        "the checkpoint to resume from (" +
            (from.empty() ? paths_.checkpoint_dir.string() : from.string()) +
            "; is it on storage every replica shares?)"));
    if (!state) {
      console_.Info("No checkpoint in " + paths_.checkpoint_dir.string() + "; starting a new run");
      return Status::Ok();
    }
    const std::string diffs = FingerprintDiffs(Fingerprint(), state->fingerprint);
    if (!diffs.empty()) {
      return FailedPreconditionError(
          "checkpoint " + from.string() + " does not match this run (" + diffs +
          "); rerun with the flags and data it was written with, or " +
          (paths_.resume_from.empty() || from.parent_path() == paths_.checkpoint_dir
               ? std::string("use a new --checkpoint-dir")
               : std::string("drop --resume-from")));
    }
    TY_RETURN_IF_ERROR(RestoreTensors(*state, from));
    start_epoch_ = state->epoch;
    start_batch_ = state->next_batch;
    resumed_plan_ = std::move(state->plan);
    global_step_ = state->global_step;
    counters_ =
        EpochCounters::FromJson(state->progress.value("counters", nlohmann::json::object()));
    history_.Restore(state->progress.value("history", nlohmann::json::array()));
    result_.resumed = true;
    const int64_t saved_world = state->progress.value("world_size", int64_t{1});
    // The rest of the interrupted epoch keeps its global batches (each now split over this run's
    // replicas, so the per-replica batch may differ); later epochs plan batch x world size. The
    // learning-rate schedule ends where this run will end.
    const int64_t rest_of_epoch = resumed_plan_.empty()
                                      ? steps_per_epoch_
                                      : static_cast<int64_t>(resumed_plan_.size()) - start_batch_;
    if (!o_.dry_run) {
      total_steps_ = global_step_ + rest_of_epoch + steps_per_epoch_ * (o_.epochs - start_epoch_);
    }
    for (const auto& batch : resumed_plan_) {
      EnsureBuilderCapacity(static_cast<int64_t>(dp_->LocalBatch(batch).size()));
    }
    console_.Info("Resuming from checkpoint " + from.string() + " (epoch " +
                  std::to_string(start_epoch_) + ", batch " + std::to_string(start_batch_) + "/" +
                  std::to_string(resumed_plan_.empty()
                                     ? steps_per_epoch_
                                     : static_cast<int64_t>(resumed_plan_.size())) +
                  ", global step " + std::to_string(global_step_) + ")");
    if (saved_world != dp_->world_size()) {
      console_.Info("The checkpoint was written by " + std::to_string(saved_world) +
                    " replica(s), this run has " + std::to_string(dp_->world_size()) +
                    ": the current epoch's remaining global batches are re-sharded over " +
                    std::to_string(dp_->world_size()) +
                    " replica(s); later epochs use a global "
                    "batch of " +
                    std::to_string(GlobalBatchSize()));
    }
    return Status::Ok();
  }

  void EnsureBuilderCapacity(int64_t batch) {
    if (builder_ && batch <= builder_capacity_) return;
    builder_capacity_ = std::max(builder_capacity_, batch);
    builder_.emplace(builder_capacity_, o_.max_length, tokenizer_->pad_id(), device_);
  }

  // Dropout masks are a pure function of (seed, global step, rank): a resumed run, at any world
  // size, draws exactly what an uninterrupted one would, with no generator state to carry, and
  // replicas draw different masks for their different examples.
  uint64_t DropoutSeed() const {
    SplitMix64 mix(o_.seed ^ (static_cast<uint64_t>(global_step_) * 0x9E3779B97F4A7C15ull) ^
                   (static_cast<uint64_t>(dp_->rank()) * 0xD1B54A32D192ED03ull));
    return mix.Next();
  }

  // ---- training ------------------------------------------------------------------------------

  BatchPlanOptions TrainPlanOptions() const {
    BatchPlanOptions options;
    options.batch_size = GlobalBatchSize();  // each rank trains on its shard of every batch
    options.shuffle = true;
    options.length_grouping = o_.length_grouping;
    return options;
  }

  int EvalBatchSize() const {
    return o_.eval_batch_size > 0 ? o_.eval_batch_size : 2 * o_.batch_size;
  }

  bool StopRequested() const {
    return io_.stop_requested && io_.stop_requested->load(std::memory_order_relaxed);
  }

  // Every rank prints its console lines; only rank 0 writes the shared outputs.
  Status MakeObservers() {
    if (o_.dry_run) console_.Info("Dry run mode: one step of one epoch, no test, no export");
    observers_ = {&console_observer_, &history_};
    if (dp_->is_chief()) {
      hypertune_.emplace(
          HypertuneReporter::FromEnvironment(io_.env, o_.hypertune_metric, result_.resumed),
          console_);
      observers_.push_back(&*hypertune_);
    }
    if (!paths_.tensorboard_dir.empty() && dp_->is_chief()) {
      TY_ASSIGN_OR_RETURN(auto writer, TensorBoardWriter::Create(paths_.tensorboard_dir));
      tensorboard_.emplace(std::move(writer), console_);
      observers_.push_back(&*tensorboard_);
    }
    if (!o_.dry_run) {
      checkpoints_.emplace(
          [this](int64_t epoch, int64_t next_batch, const BatchPlan& plan) {
            return SaveCheckpoint(epoch, next_batch, plan);
          },
          o_.checkpoint_every_steps);
      observers_.push_back(&*checkpoints_);
    }
    return Status::Ok();
  }

  Status TrainEpochs() {
    TY_RETURN_IF_ERROR(MakeObservers());
    const int epochs = o_.dry_run ? 1 : o_.epochs;
    try {
      for (int64_t epoch = start_epoch_; epoch <= epochs; ++epoch) {
        BatchPlan plan = (epoch == start_epoch_ && !resumed_plan_.empty())
                             ? std::move(resumed_plan_)
                             : PlanBatches(train_lengths_, TrainPlanOptions(), o_.seed, epoch);
        const int64_t batches = static_cast<int64_t>(plan.size());
        const int64_t steps = o_.dry_run ? std::min<int64_t>(1, batches) : batches;
        if (epoch != start_epoch_) counters_ = EpochCounters();
        epoch_start_ = Clock::now();
        for (TrainObserver* observer : observers_) observer->OnEpochBegin(epoch);
        model_->train();
        for (int64_t b = epoch == start_epoch_ ? start_batch_ : 0; b < steps; ++b) {
          TY_ASSIGN_OR_RETURN(bool stop, RunStep(epoch, b, steps, plan));
          if (stop) return Preempt(epoch, b + 1, plan);
        }
        TY_RETURN_IF_ERROR(EndEpoch(epoch));
        if (epoch < epochs) {
          TY_ASSIGN_OR_RETURN(bool stop, dp_->AgreeToStop(StopRequested()));
          // The epoch-end checkpoint is already written: stop without another one.
          if (stop) return Preempt(epoch + 1, 0, {}, /*checkpoint_written=*/!o_.dry_run);
        }
      }
    } catch (const std::exception& e) {
      return InternalError(std::string("training step failed: ") + FirstLine(e.what()));
    }
    result_.global_step = global_step_;
    return Status::Ok();
  }

  // Batch `b` of `plan`: this rank's shard through TrainStep, then the global counters to the
  // observers. Returns true when every rank stops after this step.
  StatusOr<bool> RunStep(int64_t epoch, int64_t b, int64_t steps, const BatchPlan& plan) {
    const auto step_start = Clock::now();
    const std::vector<int32_t> local = dp_->LocalBatch(plan[b]);
    EnsureBuilderCapacity(static_cast<int64_t>(local.size()));
    const int64_t pad_to = o_.length_grouping ? 0 : o_.max_length;
    const Batch batch = builder_->Build(train_.tokens, local, pad_to);  // (B, T)
    const double lr =
        o_.learning_rate * LinearWarmupDecay(global_step_, o_.warmup_steps, total_steps_);
    TY_ASSIGN_OR_RETURN(TrainStepOutput out,
                        TrainStep(model_, *optimizer_, *dp_, batch, lr, DropoutSeed(), o_.bf16));
    ++global_step_;
    if (io_.after_step) io_.after_step(global_step_);
    const double local_loss = out.loss.item<double>();
    DataParallel::StepStats stats;
    stats.loss_sum = local_loss * static_cast<double>(batch.size);
    stats.correct = out.logits.argmax(1).eq(batch.labels).sum().item<int64_t>();
    stats.count = batch.size;
    stats.stop = StopRequested();
    // All replicas' counters and stop requests, so every rank logs and stops alike.
    TY_ASSIGN_OR_RETURN(stats, dp_->ReduceStep(stats));
    StepEvent event;
    event.loss =
        dp_->distributed() ? stats.loss_sum / std::max<int64_t>(1, stats.count) : local_loss;
    counters_.loss_sum += stats.loss_sum;
    counters_.correct += stats.correct;
    counters_.count += stats.count;
    counters_.window_correct += stats.correct;
    counters_.window_count += stats.count;
    counters_.last_loss = event.loss;
    global_samples_ += stats.count;
    result_.train_seconds += SecondsSince(step_start);
    result_.train_samples += batch.size;
    event.epoch = epoch;
    event.batch = b;
    event.batches = static_cast<int64_t>(plan.size());
    event.steps = steps;
    event.global_step = global_step_;
    event.learning_rate = lr;
    event.samples_per_second = global_samples_ / std::max(1e-9, result_.train_seconds);
    event.global_batch_size = GlobalBatchSize();
    event.stopping = stats.stop;
    event.counters = &counters_;
    event.plan = &plan;
    for (TrainObserver* observer : observers_) TY_RETURN_IF_ERROR(observer->OnStep(event));
    if (b % kLogInterval == 0) counters_.window_correct = counters_.window_count = 0;
    return stats.stop;
  }

  Status EndEpoch(int64_t epoch) {
    console_.ClearProgress();
    TY_ASSIGN_OR_RETURN(EvalMetrics valid, Evaluate(valid_));
    EpochEvent event;
    event.epoch = epoch;
    event.seconds = counters_.seconds + SecondsSince(epoch_start_);
    event.train_loss = result_.train_loss =
        counters_.loss_sum / std::max<int64_t>(1, counters_.count);
    event.train_accuracy = result_.train_accuracy =
        static_cast<double>(counters_.correct) / std::max<int64_t>(1, counters_.count);
    result_.validation = std::move(valid);
    event.validation = &*result_.validation;
    // The epoch-end checkpoint (an observer) resumes at the next epoch's start.
    counters_ = EpochCounters();
    epoch_start_ = Clock::now();
    for (TrainObserver* observer : observers_) TY_RETURN_IF_ERROR(observer->OnEpochEnd(event));
    return Status::Ok();
  }

  // All ranks stop after the same step (agreed in ReduceStep/AgreeToStop); rank 0 writes the
  // checkpoint and the others wait for it at a barrier, so when every replica has exited the
  // checkpoint is complete and a gang restart resumes from it.
  Status Preempt(int64_t epoch, int64_t next_batch, const BatchPlan& plan,
                 bool checkpoint_written = false) {
    console_.ClearProgress();
    result_.outcome = TrainOutcome::kPreempted;
    result_.global_step = global_step_;
    if (paths_.checkpoint_dir.empty()) {
      console_.Warning("Stop requested (SIGTERM) after global step " +
                       std::to_string(global_step_) +
                       "; no --checkpoint-dir, so this run's progress is lost");
      return Status::Ok();
    }
    if (!checkpoint_written) TY_RETURN_IF_ERROR(SaveCheckpoint(epoch, next_batch, plan));
    TY_RETURN_IF_ERROR(dp_->Barrier().WithPrefix("waiting for rank 0's checkpoint"));
    console_.Info(std::string("Stop requested (SIGTERM): ") +
                  (dp_->is_chief() ? "checkpoint written" : "rank 0 wrote the checkpoint") +
                  " after global step " + std::to_string(global_step_) +
                  (o_.job_id.empty() ? "; rerun the same command to resume"
                                     : "; the job's next restart resumes from it"));
    return Status::Ok();
  }

  // Each rank evaluates every world-size-th batch and the counts are summed, so evaluation
  // takes 1/W of the time and every rank ends with the same metrics.
  StatusOr<EvalMetrics> Evaluate(Split& split) {
    torch::NoGradGuard no_grad;
    model_->eval();
    ConfusionMatrix confusion(labels_.size());
    double loss_sum = 0;
    const int64_t batches = static_cast<int64_t>(split.eval_plan.size());
    for (int64_t i = dp_->rank(); i < batches; i += dp_->world_size()) {
      Batch batch = builder_->Build(split.tokens, split.eval_plan[i], 0);
      torch::Tensor logits;
      {
        AutocastScope autocast(o_.bf16, device_);
        logits = model_->forward(batch.input_ids, batch.attention_mask, batch.token_type_ids);
      }
      logits = logits.to(torch::kFloat);  // (B, C)
      loss_sum += torch::nn::functional::cross_entropy(
                      logits, batch.labels,
                      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                      .item<double>();
      torch::Tensor predicted = logits.argmax(1).to(torch::kCPU);
      torch::Tensor truth = batch.labels.to(torch::kCPU);
      const int64_t* p = predicted.data_ptr<int64_t>();
      const int64_t* t = truth.data_ptr<int64_t>();
      for (int64_t row = 0; row < batch.size; ++row) confusion.Add(t[row], p[row]);
    }
    model_->train();
    if (dp_->distributed()) {
      const int k = labels_.size();
      std::vector<double> sums = {loss_sum};
      for (int t = 0; t < k; ++t) {
        for (int p = 0; p < k; ++p) sums.push_back(static_cast<double>(confusion.at(t, p)));
      }
      TY_RETURN_IF_ERROR(dp_->SumOverRanks(sums).WithPrefix("evaluation counts"));
      loss_sum = sums[0];
      confusion = ConfusionMatrix(k);
      for (int t = 0; t < k; ++t) {
        for (int p = 0; p < k; ++p) {
          confusion.Add(t, p, static_cast<int64_t>(sums[1 + t * k + p] + 0.5));
        }
      }
    }
    return ComputeMetrics(confusion, loss_sum, labels_.names());
  }

  // ---- end of training -----------------------------------------------------------------------

  Status Finish() {
    if (!result_.validation) {  // resumed after the last epoch
      TY_ASSIGN_OR_RETURN(result_.validation, Evaluate(valid_));
    }
    if (o_.dry_run) {
      console_.Info("Dry run done: no test evaluation, nothing exported");
      return Status::Ok();
    }
    try {
      if (!paths_.test.empty()) {
        TY_ASSIGN_OR_RETURN(result_.test, Evaluate(test_));
      }
    } catch (const std::exception& e) {
      return InternalError(std::string("test evaluation failed: ") + FirstLine(e.what()));
    }
    console_.Print(FormatMetrics("validation", *result_.validation));
    if (result_.test) console_.Print(FormatMetrics("test", *result_.test));
    console_.Info("Trained " + std::to_string(global_samples_) + " samples in " +
                  FormatSeconds(result_.train_seconds) + " (" +
                  FormatDouble(global_samples_ / std::max(1e-9, result_.train_seconds), 1) +
                  " samples/s" +
                  (dp_->distributed() ? " over " + std::to_string(dp_->world_size()) + " replicas"
                                      : std::string()) +
                  ")");
    if (!dp_->is_chief()) {
      console_.Info("Rank " + std::to_string(dp_->rank()) + " done; rank 0 exports the model");
      return Status::Ok();
    }
    if (paths_.job_dir.empty()) {
      console_.Warning("No job dir provided, model will not be saved");
      return Status::Ok();
    }
    return Export();
  }

  nlohmann::json MetricsJson() const {
    nlohmann::json j = {
        {"train", {{"loss", result_.train_loss}, {"accuracy", result_.train_accuracy}}},
        {"validation", MetricsToJson(*result_.validation)},
        {"history", history_.history()},
        {"global_step", global_step_},
        {"labels", labels_.names()},
        {"hyperparameters",
         {{"epochs", o_.epochs},
          {"batch_size", o_.batch_size},
          {"learning_rate", o_.learning_rate},
          {"warmup_steps", o_.warmup_steps},
          {"weight_decay", o_.weight_decay},
          {"max_length", o_.max_length},
          {"seed", o_.seed},
          {"length_grouping", o_.length_grouping}}}};
    if (result_.test) j["test"] = MetricsToJson(*result_.test);
    return j;
  }

  Status Export() {
    console_.Info("Saving model to " + paths_.job_dir.string());
    TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(paths_.job_dir));
    auto fail = [&](Status s) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      return s.WithPrefix("exporting to --job-dir " + paths_.job_dir.string());
    };
    try {
      model_->to(torch::kCPU);
      Status s = model::SaveModelFiles(model_, staging);
      model_->to(device_);
      if (!s.ok()) return fail(s);
    } catch (const std::exception& e) {
      return fail(InternalError(FirstLine(e.what())));
    }
    auto vocab = ReadFile(paths_.vocab);
    if (!vocab.ok()) return fail(vocab.status());
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
             {"vocab.txt", *vocab},
             {data::kLabelsFileName, labels_.ToJson()},
             {"metrics.json", MetricsJson().dump(2) + "\n"}}) {
      Status s = WriteFileAtomic(staging / name, content);
      if (!s.ok()) return fail(s);
    }
    // TensorBoard logs inside the job dir (the article's flags) move into the new export, so that
    // replacing the directory keeps them; an open event file follows its inode.
    if (const std::string entry = TensorBoardEntryInJobDir(paths_); !entry.empty()) {
      std::error_code ec;
      if (fs::exists(paths_.job_dir / entry, ec)) {
        fs::rename(paths_.job_dir / entry, staging / entry, ec);
        if (ec) {
          return fail(IoError("cannot carry " + (paths_.job_dir / entry).string() +
                              " over into the export: " + ec.message()));
        }
      }
    }
    Status s = CommitDirectory(staging, paths_.job_dir);
    if (!s.ok()) return fail(s);
    result_.exported_to = paths_.job_dir;
    console_.Info(
        "Exported model.safetensors, config.json, vocab.txt, labels.json, metrics.json to " +
        paths_.job_dir.string());
    return Status::Ok();
  }

  // ---- helpers -------------------------------------------------------------------------------

  static std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }
  static std::string FormatDouble(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
  }
  static std::string FormatSeconds(double s) { return FormatDouble(s, 2) + "s"; }

  const TrainOptions o_;
  const TrainIo io_;
  TrainConsole console_;
  torch::Device device_;
  int threads_ = 1;

  TrainPaths paths_;
  std::optional<text::BertTokenizer> tokenizer_;
  data::LabelMap labels_;
  Split train_, valid_, test_;
  std::vector<int32_t> train_lengths_;

  model::BertForSequenceClassification model_{nullptr};
  std::optional<AdamW> optimizer_;
  std::optional<BatchBuilder> builder_;
  int64_t builder_capacity_ = 0;
  int64_t steps_per_epoch_ = 0, total_steps_ = 0;
  std::unique_ptr<DataParallel> dp_;
  int64_t global_samples_ = 0;  // examples trained on by all replicas (this run)

  int64_t start_epoch_ = 1, start_batch_ = 0, global_step_ = 0;
  BatchPlan resumed_plan_;
  EpochCounters counters_;
  Clock::time_point epoch_start_ = Clock::now();
  ConsoleObserver console_observer_{console_};
  HistoryObserver history_;
  std::optional<HypertuneObserver> hypertune_;
  std::optional<TensorBoardObserver> tensorboard_;
  std::optional<CheckpointObserver> checkpoints_;
  std::vector<TrainObserver*> observers_;  // in notification order
  TrainResult result_;
};

}  // namespace

StatusOr<TrainResult> RunTraining(const TrainOptions& options, const TrainIo& io) {
  try {
    Trainer trainer(options, io);
    return trainer.Run();
  } catch (const std::exception& e) {
    // LibTorch reports shape/dtype/device problems as exceptions; they end the run as a Status.
    const std::string what = e.what();
    return InternalError("training failed: " + what.substr(0, what.find('\n')));
  }
}

}  // namespace trainyard::train
