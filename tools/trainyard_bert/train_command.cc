// trainyard-bert train: fine-tune BERT for text classification (train/trainer.h).
//
// Flags are the article's main.py flags plus the trainer's own; AIP_MODEL_DIR,
// AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR provide defaults as on Vertex. Data parallelism
// needs no flag: the role comes from MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, CLUSTER_SPEC or
// TF_CONFIG, as the platform sets them for every replica. Exit codes: 0 done, 2 bad
// flags/input, 1 other errors (including a dead or hung peer), 78 an output it cannot write
// (checked before any data is read: train/output_check.h; replica_contract::kExitConfig, which
// executors do not restart), 143 stopped by SIGTERM after writing a checkpoint (all replicas stop
// together).
#include "command_registry.h"

#if defined(TRAINYARD_HAVE_TRAINER)

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>

#include "common/exit_code.h"
#include "replica_contract/replica_contract.h"
#include "train/train_paths.h"
#include "train/trainer.h"

namespace trainyard::tools {
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void OnSigterm(int) { g_stop_requested.store(true); }

int RunTrain(train::TrainOptions options) {
  // The one place the trainer's environment is read: AIP_* defaults for the flags here, the rest
  // (role, hypertune file) handed to the trainer.
  const replica_contract::EnvMap env = replica_contract::CurrentEnvironment();
  train::ApplyEnvironmentDefaults(options, env);
  // Outputs first: a run that cannot save must fail now, not after training, and not be retried.
  if (Status outputs = train::CheckTrainOutputs(options, env); !outputs.ok()) {
    std::cerr << "trainyard-bert train: " << outputs.message() << "\n";
    return replica_contract::kExitConfig;
  }
  // SIGTERM (a preemptible VM's notice, `docker stop`, Slurm) finishes the current step, writes
  // a checkpoint and exits 143; SIGINT keeps its default (stop now).
  struct sigaction action {};
  action.sa_handler = OnSigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);

  train::TrainIo io;
  io.out = &std::cout;
  io.log = &std::cerr;
  io.progress_bar = isatty(STDERR_FILENO) == 1;
  io.stop_requested = &g_stop_requested;
  io.env = env;
  auto result = train::RunTraining(options, io);
  if (!result.ok()) {
    return ReportFailure("trainyard-bert train: ", result.status());
  }
  return result->outcome == train::TrainOutcome::kPreempted ? kExitTerminated : kExitOk;
}

// The article's main.py flags: data, export directory and the basic training knobs.
void AddArticleFlags(CLI::App& sub, train::TrainOptions* o) {
  sub.add_option("--training-file", o->training_file,
                 "Training CSV (local path or gs://); text and class-id columns")
      ->required();
  sub.add_option("--validation-file", o->validation_file, "Validation CSV, evaluated each epoch")
      ->required();
  sub.add_option("--testing-file", o->testing_file, "Test CSV, evaluated once at the end");
  sub.add_option("--job-dir", o->job_dir,
                 "Export directory for model.safetensors, config.json, vocab.txt, labels.json, "
                 "metrics.json [env AIP_MODEL_DIR]");
  sub.add_option("--epochs", o->epochs, "Training epochs")->capture_default_str();
  sub.add_option("--batch-size", o->batch_size, "Examples per training step")
      ->capture_default_str();
  sub.add_option("--learning-rate", o->learning_rate, "Peak AdamW learning rate")
      ->capture_default_str();
  sub.add_flag("--dry-run", o->dry_run,
               "One step of one epoch plus validation; no test, no export");
}

// The model to start from and how its input is read.
void AddModelAndInputFlags(CLI::App& sub, train::TrainOptions* o) {
  sub.add_option("--model-dir", o->model_dir,
                 "Pretrained HF model directory (config.json + model.safetensors or "
                 "pytorch_model.bin [+ vocab.txt]); default: BERT-Tiny from scratch");
  sub.add_option("--vocab", o->vocab,
                 "WordPiece vocab.txt; required unless --model-dir contains vocab.txt");
  sub.add_option("--max-length", o->max_length, "Max tokens per text incl. [CLS]/[SEP]")
      ->capture_default_str();
  sub.add_option("--seed", o->seed, "Seed for initialization, dropout and data order")
      ->capture_default_str();
  sub.add_option("--threads", o->threads,
                 "CPU threads (0 = OMP_NUM_THREADS, else the CPUs this process may use, "
                 "divided among the replicas on this host)")
      ->capture_default_str();
  sub.add_option("--text-column", o->text_column, "CSV column with the text")
      ->capture_default_str();
  sub.add_option("--label-column", o->label_column, "CSV column with the class id 0..K-1")
      ->capture_default_str();
}

// Optimiser schedule, what trains, and checkpoints.
void AddScheduleAndCheckpointFlags(CLI::App& sub, train::TrainOptions* o) {
  sub.add_option("--warmup-steps", o->warmup_steps, "Linear warmup steps, then linear decay to 0")
      ->capture_default_str();
  sub.add_option("--weight-decay", o->weight_decay,
                 "AdamW decoupled weight decay (not on biases/LayerNorm)")
      ->capture_default_str();
  sub.add_option("--checkpoint-dir", o->checkpoint_dir,
                 "Where to write checkpoints and resume from [env AIP_CHECKPOINT_DIR]; in a job "
                 "(CLOUD_ML_JOB_ID set) its sub-directory <job>[-<trial>], so a new job never "
                 "resumes another's checkpoints");
  sub.add_option("--resume-from", o->resume_from,
                 "Start from this checkpoint (a checkpoint-NNNNNNNN directory, or a run's "
                 "checkpoint dir for its newest) when --checkpoint-dir has none of this run's "
                 "own; the flags must match the ones it was written with");
  sub.add_option("--checkpoint-every-steps", o->checkpoint_every_steps,
                 "Also checkpoint every N steps (0 = only at epoch ends)")
      ->capture_default_str();
  sub.add_flag("--freeze-encoder", o->freeze_encoder,
               "Train only the classification head (transfer learning)");
  sub.add_option("--trainable-layers", o->trainable_layers,
                 "Train only the last K encoder layers + pooler + head (-1 = all)")
      ->capture_default_str();
  sub.add_flag("--length-grouping,!--no-length-grouping", o->length_grouping,
               "Batch texts of similar length and pad to the batch's longest (default on); "
               "--no-length-grouping pads every batch to --max-length like the article");
}

// Metrics reporting, precision, evaluation batches and data-parallel checks.
void AddReportingAndParallelFlags(CLI::App& sub, train::TrainOptions* o) {
  sub.add_option("--hypertune-metric", o->hypertune_metric,
                 "Tag of the validation accuracy in CLOUD_ML_HP_METRIC_FILE")
      ->capture_default_str();
  sub.add_option("--tensorboard-dir", o->tensorboard_dir,
                 "Write TensorBoard scalars here [env AIP_TENSORBOARD_LOG_DIR]");
  sub.add_flag(
      "--bf16", o->bf16,
      "bfloat16 autocast: matrix products in bf16 (on CPU through oneDNN, fast with AMX or "
      "AVX512-BF16; on CUDA it needs LibTorch >= 2.0)");
  sub.add_option("--eval-batch-size", o->eval_batch_size,
                 "Examples per evaluation batch (0 = 2 x --batch-size)")
      ->capture_default_str();
  sub.add_flag("--check-replicas", o->check_replicas,
               "Data parallel: compare every replica's weights with rank 0's after each step "
               "(debug) [env TRAINYARD_CHECK_REPLICAS=1]");
  sub.add_option("--collective-timeout", o->collective_timeout_s,
                 "Data parallel: seconds before a collective with a dead or hung peer fails "
                 "(0 = env TRAINYARD_COLLECTIVE_TIMEOUT_S or 300)")
      ->capture_default_str();
}

const bool kTrainRegistered = RegisterCommand(
    {.name = "train",
     .description = "Fine-tune BERT on CSV data (the article's main.py flags), with checkpoints, "
                    "resume, hypertune metrics and an HF-loadable export",
     .order = 30,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto o = std::make_shared<train::TrainOptions>();
       AddArticleFlags(sub, o.get());
       AddModelAndInputFlags(sub, o.get());
       AddScheduleAndCheckpointFlags(sub, o.get());
       AddReportingAndParallelFlags(sub, o.get());
       return [o] { return RunTrain(*o); };
     }});

}  // namespace
}  // namespace trainyard::tools

#endif  // TRAINYARD_HAVE_TRAINER
