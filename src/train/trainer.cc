#include "train/trainer.h"

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <thread>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "model/bert.h"
#include "model/hf_checkpoint.h"
#include "text/bert_tokenizer.h"
#include "train/adamw.h"
#include "train/autocast.h"
#include "train/batch_builder.h"
#include "train/batch_plan.h"
#include "train/checkpoint.h"
#include "train/hypertune_reporter.h"
#include "train/label_map.h"
#include "train/labeled_dataset.h"
#include "train/progress.h"
#include "train/tensorboard_writer.h"

namespace trainyard::train {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Files the export writes; a job dir holding anything else is refused (the export replaces the
// whole directory).
const std::vector<std::string>& ExportFiles() {
  static const std::vector<std::string> files = {"model.safetensors", "config.json", "vocab.txt",
                                                 "labels.json", "metrics.json"};
  return files;
}

// Per-epoch counters, saved in checkpoints so a resumed epoch reports the same numbers.
struct EpochCounters {
  double loss_sum = 0;  // sum of batch mean loss * batch size
  int64_t correct = 0, count = 0;
  int64_t window_correct = 0, window_count = 0;  // since the last progress line
  double last_loss = 0;
  double seconds = 0;  // training + evaluation time spent in this epoch before a resume

  nlohmann::json ToJson() const {
    return {{"loss_sum", loss_sum},         {"correct", correct},
            {"count", count},               {"window_correct", window_correct},
            {"window_count", window_count}, {"last_loss", last_loss},
            {"seconds", seconds}};
  }
  static EpochCounters FromJson(const nlohmann::json& j) {
    EpochCounters c;
    c.loss_sum = j.value("loss_sum", 0.0);
    c.correct = j.value("correct", int64_t{0});
    c.count = j.value("count", int64_t{0});
    c.window_correct = j.value("window_correct", int64_t{0});
    c.window_count = j.value("window_count", int64_t{0});
    c.last_loss = j.value("last_loss", 0.0);
    c.seconds = j.value("seconds", 0.0);
    return c;
  }
};

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
    TY_RETURN_IF_ERROR(ResolvePaths());
    TY_RETURN_IF_ERROR(SetUpRuntime());
    TY_RETURN_IF_ERROR(LoadData());
    TY_RETURN_IF_ERROR(BuildModel());
    TY_RETURN_IF_ERROR(MaybeResume());
    TY_RETURN_IF_ERROR(TrainEpochs());
    if (result_.outcome == TrainOutcome::kPreempted) return result_;
    TY_RETURN_IF_ERROR(Finish());
    return result_;
  }

 private:
  // ---- setup ---------------------------------------------------------------------------------

  StatusOr<fs::path> Resolve(const std::string& flag, const std::string& value) {
    auto path = ResolveStoragePath(value);
    if (!path.ok()) return path.status().WithPrefix(flag);
    return *path;
  }

  Status ResolvePaths() {
    TY_ASSIGN_OR_RETURN(train_path_, Resolve("--training-file", o_.training_file));
    TY_ASSIGN_OR_RETURN(valid_path_, Resolve("--validation-file", o_.validation_file));
    if (!o_.testing_file.empty()) {
      TY_ASSIGN_OR_RETURN(test_path_, Resolve("--testing-file", o_.testing_file));
    }
    if (!o_.model_dir.empty()) {
      TY_ASSIGN_OR_RETURN(model_dir_, Resolve("--model-dir", o_.model_dir));
    }
    if (!o_.job_dir.empty()) {
      TY_ASSIGN_OR_RETURN(job_dir_, Resolve("--job-dir", o_.job_dir));
      const std::string ext = job_dir_.extension().string();
      if (ext == ".pt" || ext == ".pth" || ext == ".bin") {
        // The article's job.sh passes --job-dir=gs://BUCKET/model/model.pt (a file).
        console_.Warning("--job-dir " + o_.job_dir +
                         " names a file; exporting to its directory " +
                         job_dir_.parent_path().string() + " (model.safetensors, config.json, ...)");
        job_dir_ = job_dir_.parent_path();
      }
    }
    if (!o_.checkpoint_dir.empty() && !o_.dry_run) {
      TY_ASSIGN_OR_RETURN(checkpoint_dir_, Resolve("--checkpoint-dir", o_.checkpoint_dir));
    }
    if (!o_.tensorboard_dir.empty() && !o_.dry_run) {
      TY_ASSIGN_OR_RETURN(tensorboard_dir_, Resolve("--tensorboard-dir", o_.tensorboard_dir));
    }
    if (!o_.vocab.empty()) {
      TY_ASSIGN_OR_RETURN(vocab_path_, Resolve("--vocab", o_.vocab));
    } else if (!model_dir_.empty() && fs::exists(model_dir_ / "vocab.txt")) {
      vocab_path_ = model_dir_ / "vocab.txt";
    } else {
      return InvalidArgumentError(
          "--vocab is required: pass the WordPiece vocab.txt the model uses (e.g. "
          "data/sample/vocab.txt, BERT's uncased 30522-token vocabulary)" +
          std::string(model_dir_.empty() ? "" : ", or a --model-dir that contains vocab.txt (" +
                                                    model_dir_.string() + " has none)"));
    }
    if (!job_dir_.empty() && !o_.dry_run) {
      std::error_code ec;
      if (fs::exists(job_dir_, ec) && !fs::is_directory(job_dir_, ec)) {
        return InvalidArgumentError("--job-dir " + job_dir_.string() +
                                    " is a file; pass a directory to export the model to");
      }
      if (fs::is_directory(job_dir_, ec)) {
        for (const auto& entry : fs::directory_iterator(job_dir_, ec)) {
          const std::string name = entry.path().filename().string();
          if (std::find(ExportFiles().begin(), ExportFiles().end(), name) == ExportFiles().end()) {
            return InvalidArgumentError(
                "--job-dir " + job_dir_.string() + " contains '" + name +
                "', which the export would delete (it replaces the whole directory); use an empty "
                "or new directory, or one holding only a previous export");
          }
        }
      }
      if (!checkpoint_dir_.empty()) {
        const fs::path job = fs::weakly_canonical(job_dir_);
        const fs::path ckpt = fs::weakly_canonical(checkpoint_dir_);
        auto [a, b] = std::mismatch(job.begin(), job.end(), ckpt.begin(), ckpt.end());
        if (a == job.end()) {
          return InvalidArgumentError("--checkpoint-dir " + checkpoint_dir_.string() +
                                      " is inside --job-dir " + job_dir_.string() +
                                      ", which the export replaces; put checkpoints elsewhere");
        }
      }
    }
    return Status::Ok();
  }

  Status SetUpRuntime() {
    int threads = o_.threads;
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(threads);
    threads_ = threads;
    if (device_.is_cuda()) {
      console_.Info("GPU: CUDA device 0 is available (" + std::to_string(torch::cuda::device_count()) +
                    " visible).");
    } else {
      console_.Info("No GPU available. Training will run on CPU (" + std::to_string(threads) +
                    " threads).");
    }
    TY_RETURN_IF_ERROR(CheckAutocastSupported(o_.bf16, device_));
    return Status::Ok();
  }

  Status LoadData() {
    auto tokenizer = text::BertTokenizer::FromFile(vocab_path_);
    if (!tokenizer.ok()) return tokenizer.status().WithPrefix("--vocab");
    tokenizer_.emplace(std::move(tokenizer).value());

    const auto t0 = Clock::now();
    TY_ASSIGN_OR_RETURN(train_.raw, ReadLabeledCsv(train_path_, o_.text_column, o_.label_column));
    TY_ASSIGN_OR_RETURN(valid_.raw, ReadLabeledCsv(valid_path_, o_.text_column, o_.label_column));
    if (!test_path_.empty()) {
      TY_ASSIGN_OR_RETURN(test_.raw, ReadLabeledCsv(test_path_, o_.text_column, o_.label_column));
    }

    // Class names: labels.json next to the training file (written by make-splits), else the
    // pretrained model's labels are replaced by the ids found in the data.
    const fs::path labels_file = train_path_.parent_path() / "labels.json";
    std::string hint;
    if (fs::exists(labels_file)) {
      TY_ASSIGN_OR_RETURN(labels_, LabelMap::FromFile(labels_file));
      hint = " (" + labels_file.string() + " names " + std::to_string(labels_.size()) +
             " classes); fix the data or labels.json";
    } else {
      int64_t max_id = 0;
      for (const auto* split : {&train_, &valid_, &test_}) {
        for (int64_t id : split->raw.labels) max_id = std::max(max_id, id);
      }
      if (max_id + 1 > 10000) {
        return InvalidArgumentError(train_path_.string() + ": class id " + std::to_string(max_id) +
                                    " implies more than 10000 classes; " + o_.label_column +
                                    " must hold class ids 0..K-1");
      }
      labels_ = LabelMap::FromIds(static_cast<int>(std::max<int64_t>(2, max_id + 1)));
      console_.Info("No labels.json next to " + train_path_.string() + "; using class ids 0.." +
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
                               std::max<size_t>(1, train_.tokens.size()), 1) +
                  " tokens, max_length " + std::to_string(o_.max_length) + ")");
    return Status::Ok();
  }

  Status BuildModel() {
    torch::manual_seed(o_.seed);
    try {
      if (!model_dir_.empty()) {
        model::LoadOptions load_options;
        load_options.labels = labels_.names();
        load_options.allow_missing_head = true;
        model::LoadReport report;
        auto loaded = model::LoadPretrained(model_dir_, load_options, &report);
        if (!loaded.ok()) return loaded.status().WithPrefix("--model-dir " + model_dir_.string());
        model_ = std::move(loaded).value();
        for (const auto& w : report.warnings) console_.Warning(w);
        console_.Info("Loaded pretrained weights from " + model_dir_.string());
      } else {
        model::BertConfig config = model::BertConfig::Tiny(labels_.names());
        config.vocab_size = static_cast<int64_t>(tokenizer_->vocab_size());
        TY_RETURN_IF_ERROR(config.Validate());
        model_ = model::BertForSequenceClassification(config);
        console_.Info("No --model-dir: training BERT-Tiny (2 layers, hidden 128, 2 heads) from a "
                      "random initialization");
      }
      const auto& config = model_->config();
      if (static_cast<int64_t>(tokenizer_->vocab_size()) > config.vocab_size) {
        return InvalidArgumentError("--vocab " + vocab_path_.string() + " has " +
                                    std::to_string(tokenizer_->vocab_size()) +
                                    " tokens but the model's vocab_size is " +
                                    std::to_string(config.vocab_size) +
                                    "; use the vocab.txt the model was trained with");
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
      console_.Info("Total params : " + std::to_string(total) + " - Trainable : " +
                    std::to_string(trainable_count) + " (" +
                    FormatDouble(100.0 * trainable_count / std::max<int64_t>(1, total), 2) +
                    "% of total)");
    } catch (const std::exception& e) {
      return InternalError(std::string("building the model: ") + FirstLine(e.what()));
    }

    BatchPlanOptions plan_options = TrainPlanOptions();
    steps_per_epoch_ = static_cast<int64_t>(PlanBatches(train_lengths_, plan_options, o_.seed, 1).size());
    total_steps_ = o_.dry_run ? 1 : steps_per_epoch_ * o_.epochs;
    const int64_t builder_batch = std::max(o_.batch_size, EvalBatchSize());
    builder_.emplace(builder_batch, o_.max_length, tokenizer_->pad_id(), device_);
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
    if (checkpoint_dir_.empty()) return Status::Ok();
    const auto t0 = Clock::now();
    TrainingState state;
    state.epoch = epoch;
    state.next_batch = next_batch;
    state.global_step = global_step_;
    state.plan = plan;
    state.fingerprint = Fingerprint();
    EpochCounters counters = counters_;
    counters.seconds += SecondsSince(epoch_start_);
    state.progress = {{"counters", counters.ToJson()}, {"history", history_}};
    for (const auto& item : model_->named_parameters()) {
      state.tensors["model." + item.key()] = item.value();
    }
    for (const auto& [name, tensor] : optimizer_->StateTensors()) state.tensors["optim." + name] = tensor;
    state.tensors["rng.cpu"] = at::globalContext().defaultGenerator(at::kCPU).get_state();
    if (device_.is_cuda()) {
      state.tensors["rng.cuda"] = at::globalContext().defaultGenerator(device_).get_state();
    }
    Status s = CheckpointManager(checkpoint_dir_).Save(state);
    if (s.ok()) {
      console_.Info("Checkpoint written: " + checkpoint_dir_.string() + " (epoch " +
                    std::to_string(epoch) + ", batch " + std::to_string(next_batch) +
                    ", global step " + std::to_string(global_step_) + ", " +
                    FormatSeconds(SecondsSince(t0)) + ")");
    }
    return s;
  }

  Status MaybeResume() {
    if (checkpoint_dir_.empty()) {
      if (!o_.dry_run) {
        console_.Info("No --checkpoint-dir (or AIP_CHECKPOINT_DIR): a preempted run restarts "
                      "from scratch");
      }
      return Status::Ok();
    }
    fs::path from;
    TY_ASSIGN_OR_RETURN(auto state, CheckpointManager(checkpoint_dir_).LoadLatest(&from));
    if (!state) {
      console_.Info("No checkpoint in " + checkpoint_dir_.string() + "; starting a new run");
      return Status::Ok();
    }
    const nlohmann::json expected = Fingerprint();
    std::string diffs;
    for (const auto& [key, value] : expected.items()) {
      if (!state->fingerprint.contains(key) || state->fingerprint[key] != value) {
        std::string theirs = state->fingerprint.contains(key) ? state->fingerprint[key].dump() : "none";
        if (theirs.size() > 80) theirs = theirs.substr(0, 77) + "...";
        std::string ours = value.dump();
        if (ours.size() > 80) ours = ours.substr(0, 77) + "...";
        diffs += (diffs.empty() ? "" : "; ") + key + ": checkpoint " + theirs + ", this run " + ours;
      }
    }
    if (!diffs.empty()) {
      return FailedPreconditionError(
          "checkpoint " + from.string() + " does not match this run (" + diffs +
          "); rerun with the flags and data it was written with, or use a new --checkpoint-dir");
    }
    torch::NoGradGuard no_grad;
    for (auto& item : model_->named_parameters()) {
      auto it = state->tensors.find("model." + item.key());
      if (it == state->tensors.end() || !it->second.sizes().equals(item.value().sizes())) {
        return FailedPreconditionError("checkpoint " + from.string() + " lacks parameter '" +
                                       item.key() + "' of the right shape; use a new --checkpoint-dir");
      }
      item.value().copy_(it->second);
    }
    std::map<std::string, torch::Tensor> optim;
    for (const auto& [name, tensor] : state->tensors) {
      if (name.rfind("optim.", 0) == 0) optim[name.substr(6)] = tensor;
    }
    TY_RETURN_IF_ERROR(optimizer_->LoadState(optim, state->global_step)
                           .WithPrefix("checkpoint " + from.string()));
    auto rng = state->tensors.find("rng.cpu");
    if (rng != state->tensors.end()) {
      auto gen = at::globalContext().defaultGenerator(at::kCPU);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng->second);
    }
    rng = state->tensors.find("rng.cuda");
    if (rng != state->tensors.end() && device_.is_cuda()) {
      auto gen = at::globalContext().defaultGenerator(device_);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng->second);
    }
    start_epoch_ = state->epoch;
    start_batch_ = state->next_batch;
    resumed_plan_ = std::move(state->plan);
    global_step_ = state->global_step;
    counters_ = EpochCounters::FromJson(state->progress.value("counters", nlohmann::json::object()));
    history_ = state->progress.value("history", nlohmann::json::array());
    result_.resumed = true;
    console_.Info("Resuming from checkpoint " + from.string() + " (epoch " +
                  std::to_string(start_epoch_) + ", batch " + std::to_string(start_batch_) + "/" +
                  std::to_string(steps_per_epoch_) + ", global step " +
                  std::to_string(global_step_) + ")");
    return Status::Ok();
  }

  // ---- training ------------------------------------------------------------------------------

  BatchPlanOptions TrainPlanOptions() const {
    BatchPlanOptions options;
    options.batch_size = o_.batch_size;
    options.shuffle = true;
    options.length_grouping = o_.length_grouping;
    return options;
  }

  int EvalBatchSize() const { return o_.eval_batch_size > 0 ? o_.eval_batch_size : 2 * o_.batch_size; }

  bool StopRequested() const {
    return io_.stop_requested && io_.stop_requested->load(std::memory_order_relaxed);
  }

  Status TrainEpochs() {
    const int epochs = o_.dry_run ? 1 : o_.epochs;
    if (o_.dry_run) console_.Info("Dry run mode: one step of one epoch, no test, no export");
    hypertune_.emplace(HypertuneReporter::FromEnvironment(o_.hypertune_metric, result_.resumed));
    if (!tensorboard_dir_.empty()) {
      TY_ASSIGN_OR_RETURN(auto writer, TensorBoardWriter::Create(tensorboard_dir_));
      tensorboard_.emplace(std::move(writer));
    }
    const int64_t pad_to = o_.length_grouping ? 0 : o_.max_length;
    constexpr int64_t kLogInterval = 50;
    try {
      for (int64_t epoch = start_epoch_; epoch <= epochs; ++epoch) {
        BatchPlan plan = (epoch == start_epoch_ && !resumed_plan_.empty())
                             ? std::move(resumed_plan_)
                             : PlanBatches(train_lengths_, TrainPlanOptions(), o_.seed, epoch);
        const int64_t batches = static_cast<int64_t>(plan.size());
        const int64_t steps = o_.dry_run ? std::min<int64_t>(1, batches) : batches;
        const int64_t first = epoch == start_epoch_ ? start_batch_ : 0;
        if (epoch != start_epoch_) counters_ = EpochCounters();
        epoch_start_ = Clock::now();
        auto window_start = Clock::now();
        model_->train();
        for (int64_t b = first; b < steps; ++b) {
          const auto step_start = Clock::now();
          const double step_cpu_start = ThreadCpuSeconds();
          Batch batch = builder_->Build(train_.tokens, plan[b], pad_to);
          torch::Tensor logits;  // (B, C)
          {
            AutocastScope autocast(o_.bf16);
            logits = model_->forward(batch.input_ids, batch.attention_mask, batch.token_type_ids);
          }
          logits = logits.to(torch::kFloat);
          torch::Tensor loss = torch::nn::functional::cross_entropy(logits, batch.labels);  // ()
          optimizer_->ZeroGrad();
          loss.backward();
          const double lr =
              o_.learning_rate * LinearWarmupDecay(global_step_, o_.warmup_steps, total_steps_);
          optimizer_->Step(lr);
          ++global_step_;
          const double loss_value = loss.item<double>();
          const int64_t correct = logits.argmax(1).eq(batch.labels).sum().item<int64_t>();
          counters_.loss_sum += loss_value * static_cast<double>(batch.size);
          counters_.correct += correct;
          counters_.count += batch.size;
          counters_.window_correct += correct;
          counters_.window_count += batch.size;
          counters_.last_loss = loss_value;
          const double step_seconds = SecondsSince(step_start);
          result_.train_seconds += step_seconds;
          result_.train_thread_cpu_seconds += ThreadCpuSeconds() - step_cpu_start;
          result_.train_samples += batch.size;
          if (b % kLogInterval == 0) {
            console_.Print(FormatBatchLine(
                static_cast<int>(epoch), b, batches,
                static_cast<double>(counters_.window_correct) / std::max<int64_t>(1, counters_.window_count),
                loss_value, SecondsSince(window_start)));
            counters_.window_correct = counters_.window_count = 0;
            window_start = Clock::now();
          }
          const double rate = result_.train_samples / std::max(1e-9, result_.train_seconds);
          console_.Progress(static_cast<int>(epoch), b + 1, steps, rate,
                            (steps - b - 1) * static_cast<double>(o_.batch_size) / std::max(1e-9, rate));
          if (tensorboard_ && global_step_ % 10 == 0) {
            tensorboard_->AddScalar("train/loss", loss_value, global_step_);
            tensorboard_->AddScalar("train/learning_rate", lr, global_step_);
          }
          if (io_.after_step) io_.after_step(global_step_);
          if (StopRequested()) return Preempt(epoch, b + 1, plan);
          if (o_.checkpoint_every_steps > 0 && global_step_ % o_.checkpoint_every_steps == 0 &&
              b + 1 < steps && !o_.dry_run) {
            TY_RETURN_IF_ERROR(SaveCheckpoint(epoch, b + 1, plan));
          }
        }
        console_.ClearProgress();
        EvalMetrics valid = Evaluate(valid_);
        const double epoch_seconds = counters_.seconds + SecondsSince(epoch_start_);
        result_.train_loss = counters_.loss_sum / std::max<int64_t>(1, counters_.count);
        result_.train_accuracy = static_cast<double>(counters_.correct) / std::max<int64_t>(1, counters_.count);
        console_.Print(std::string(59, '-'));
        console_.Print(FormatEpochLine(static_cast<int>(epoch), epoch_seconds, result_.train_loss,
                                       result_.train_accuracy, valid.loss, valid.accuracy));
        console_.Print(std::string(59, '-'));
        history_.push_back({{"epoch", epoch},
                            {"train_loss", result_.train_loss},
                            {"train_accuracy", result_.train_accuracy},
                            {"valid_loss", valid.loss},
                            {"valid_accuracy", valid.accuracy},
                            {"valid_macro_f1", valid.macro_f1},
                            {"seconds", epoch_seconds}});
        Status hs = hypertune_->Report(valid.accuracy, epoch);
        if (!hs.ok()) console_.Warning(hs.message());
        if (tensorboard_) {
          tensorboard_->AddScalar("epoch/train_loss", result_.train_loss, epoch);
          tensorboard_->AddScalar("epoch/train_accuracy", result_.train_accuracy, epoch);
          tensorboard_->AddScalar("epoch/valid_loss", valid.loss, epoch);
          tensorboard_->AddScalar("epoch/valid_accuracy", valid.accuracy, epoch);
          tensorboard_->AddScalar("epoch/valid_macro_f1", valid.macro_f1, epoch);
          Status ts = tensorboard_->Flush();
          if (!ts.ok()) console_.Warning(ts.message());
        }
        result_.validation = std::move(valid);
        counters_ = EpochCounters();
        epoch_start_ = Clock::now();
        if (!o_.dry_run) TY_RETURN_IF_ERROR(SaveCheckpoint(epoch + 1, 0, {}));
        if (StopRequested() && epoch < epochs) return Preempt(epoch + 1, 0, {});
      }
    } catch (const std::exception& e) {
      return InternalError(std::string("training step failed: ") + FirstLine(e.what()));
    }
    result_.global_step = global_step_;
    return Status::Ok();
  }

  Status Preempt(int64_t epoch, int64_t next_batch, const BatchPlan& plan) {
    console_.ClearProgress();
    result_.outcome = TrainOutcome::kPreempted;
    result_.global_step = global_step_;
    if (checkpoint_dir_.empty()) {
      console_.Warning("Stop requested (SIGTERM) after global step " + std::to_string(global_step_) +
                       "; no --checkpoint-dir, so this run's progress is lost");
      return Status::Ok();
    }
    TY_RETURN_IF_ERROR(SaveCheckpoint(epoch, next_batch, plan));
    console_.Info("Stop requested (SIGTERM): checkpoint written after global step " +
                  std::to_string(global_step_) + "; rerun the same command to resume");
    return Status::Ok();
  }

  EvalMetrics Evaluate(Split& split) {
    torch::NoGradGuard no_grad;
    model_->eval();
    ConfusionMatrix confusion(labels_.size());
    double loss_sum = 0;
    for (const auto& indices : split.eval_plan) {
      Batch batch = builder_->Build(split.tokens, indices, 0);
      torch::Tensor logits;
      {
        AutocastScope autocast(o_.bf16);
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
      for (int64_t i = 0; i < batch.size; ++i) confusion.Add(t[i], p[i]);
    }
    model_->train();
    return ComputeMetrics(confusion, loss_sum, labels_.names());
  }

  // ---- end of training -----------------------------------------------------------------------

  Status Finish() {
    if (!result_.validation) result_.validation = Evaluate(valid_);  // resumed after the last epoch
    if (o_.dry_run) {
      console_.Info("Dry run done: no test evaluation, nothing exported");
      return Status::Ok();
    }
    try {
      if (!test_path_.empty()) result_.test = Evaluate(test_);
    } catch (const std::exception& e) {
      return InternalError(std::string("test evaluation failed: ") + FirstLine(e.what()));
    }
    console_.Print(FormatMetrics("validation", *result_.validation));
    if (result_.test) console_.Print(FormatMetrics("test", *result_.test));
    console_.Info("Trained " + std::to_string(result_.train_samples) + " samples in " +
                  FormatSeconds(result_.train_seconds) + " (" +
                  FormatDouble(result_.train_samples / std::max(1e-9, result_.train_seconds), 1) +
                  " samples/s)");
    if (job_dir_.empty()) {
      console_.Warning("No job dir provided, model will not be saved");
      return Status::Ok();
    }
    return Export();
  }

  nlohmann::json MetricsJson() const {
    nlohmann::json j = {{"train", {{"loss", result_.train_loss}, {"accuracy", result_.train_accuracy}}},
                        {"validation", MetricsToJson(*result_.validation)},
                        {"history", history_},
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
    console_.Info("Saving model to " + job_dir_.string());
    TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(job_dir_));
    auto fail = [&](Status s) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      return s.WithPrefix("exporting to --job-dir " + job_dir_.string());
    };
    try {
      model_->to(torch::kCPU);
      Status s = model::SaveModelFiles(model_, staging);
      model_->to(device_);
      if (!s.ok()) return fail(s);
    } catch (const std::exception& e) {
      return fail(InternalError(FirstLine(e.what())));
    }
    auto vocab = ReadFile(vocab_path_);
    if (!vocab.ok()) return fail(vocab.status());
    for (const auto& [name, content] :
         std::vector<std::pair<std::string, std::string>>{{"vocab.txt", *vocab},
                                                          {"labels.json", labels_.ToJson()},
                                                          {"metrics.json", MetricsJson().dump(2) + "\n"}}) {
      Status s = WriteFileAtomic(staging / name, content);
      if (!s.ok()) return fail(s);
    }
    Status s = CommitDirectory(staging, job_dir_);
    if (!s.ok()) return fail(s);
    result_.exported_to = job_dir_;
    console_.Info("Exported model.safetensors, config.json, vocab.txt, labels.json, metrics.json to " +
                  job_dir_.string());
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

  fs::path train_path_, valid_path_, test_path_, model_dir_, job_dir_, checkpoint_dir_,
      tensorboard_dir_, vocab_path_;
  std::optional<text::BertTokenizer> tokenizer_;
  LabelMap labels_;
  Split train_, valid_, test_;
  std::vector<int32_t> train_lengths_;

  model::BertForSequenceClassification model_{nullptr};
  std::optional<AdamW> optimizer_;
  std::optional<BatchBuilder> builder_;
  std::optional<HypertuneReporter> hypertune_;
  std::optional<TensorBoardWriter> tensorboard_;
  int64_t steps_per_epoch_ = 0, total_steps_ = 0;

  int64_t start_epoch_ = 1, start_batch_ = 0, global_step_ = 0;
  BatchPlan resumed_plan_;
  EpochCounters counters_;
  Clock::time_point epoch_start_ = Clock::now();
  nlohmann::json history_ = nlohmann::json::array();
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
