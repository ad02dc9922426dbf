// Trainer throughput benchmark: training samples/s of `trainyard-bert train` (the library call
// behind it) at batch 128 on the UCI sample, with the article's fixed padding to 100 and with
// length grouping (dynamic padding), against a Python/PyTorch re-implementation of the article's
// main.py pipeline (bench/train_article_pipeline.py) run in the same process tree. Runs on CUDA
// when the LibTorch (and the Python torch) has a GPU, else on the CPU.
//
//   build/bench/train_bench [--csv data/sample/uci_sentiment.csv] [--vocab data/sample/vocab.txt]
//                           [--threads 2] [--epochs 2] [--python-steps 12] [--python
//                           /usr/bin/python3] [--configs fixed,grouping] [--rows 164000]
//                           [--max-steps 200] [--model tiny|base] [--no-openblas-variant]
//                           [--python-pretokenized] [--batch-size 128]
//
// The Python pipeline runs twice: as users run it (Debian's torch on OpenBLAS, whose own thread
// pool then competes with torch's OpenMP threads) and with OPENBLAS_NUM_THREADS=1, its faster
// setting on this hardware; the ratios are against the faster of the two, so they never flatter
// trainyard-bert (which sets OpenBLAS to one thread itself: model/cpu_runtime.h).
//
// The article's scale (164 k samples, an epoch of 1282 steps): --rows replicates the sample's
// rows, --max-steps stops each trainyard configuration after that many steps of epoch 1, and the
// per-epoch figures are extrapolated from the steady-state step rate (steps after the first
// kWarmupSteps). "loop s/epoch" is the training loop alone (data tokenized in memory first);
// "e2e s/epoch" adds what a run does before its first step (CSV reading, tokenization, model
// set-up). --model base trains a random BERT-Base shape (12 layers, hidden 768, 12 heads) in
// both pipelines. --python-pretokenized adds a Python run whose batches are tokenized before the
// timed loop (its loop alone, as trainyard's).
//
// Prints a table and one JSON line. Not a test: no thresholds.
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "data/csv.h"
#include "model/bert.h"
#include "model/hf_checkpoint.h"
#include "model/torch_compat.h"
#include "train/trainer.h"

namespace fs = std::filesystem;
using namespace trainyard;

namespace {

std::string Shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  pclose(pipe);
  return out;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

using Clock = std::chrono::steady_clock;
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Steps timed from the end of this step on (CUDA context, cuBLAS handles and the allocator's
// first blocks are set up in the first steps).
constexpr int kWarmupSteps = 3;

// A random BERT-Base-shaped classifier (12 layers, hidden 768, 12 heads, intermediate 3072) with
// `labels` classes, written as an HF model directory (config.json, model.safetensors, vocab.txt)
// for TrainOptions::model_dir. Returns false with a message on stderr.
bool WriteRandomBertBase(const fs::path& dir, const fs::path& vocab, int labels) {
  model::BertConfig config = model::BertConfig::Tiny(model::BertConfig::DefaultLabels(labels));
  config.hidden_size = 768;
  config.num_hidden_layers = 12;
  config.num_attention_heads = 12;
  config.intermediate_size = 3072;
  torch::manual_seed(0);
  model::BertForSequenceClassification bert(config);
  fs::create_directories(dir);
  Status s = model::SaveModelFiles(bert, dir);
  if (!s.ok()) {
    std::cerr << "train_bench: writing the BERT-Base model: " << s << "\n";
    return false;
  }
  fs::copy_file(vocab, dir / "vocab.txt", fs::copy_options::overwrite_existing);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainer throughput: trainyard-bert vs the article's Python pipeline"};
  std::string csv = TRAINYARD_SOURCE_DIR "/data/sample/uci_sentiment.csv";
  std::string vocab = TRAINYARD_SOURCE_DIR "/data/sample/vocab.txt";
  std::string python = "/usr/bin/python3";
  std::string script = TRAINYARD_SOURCE_DIR "/bench/train_article_pipeline.py";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int epochs = 2, python_steps = 12, batch = 128;
  std::string configs = "fixed,grouping";
  int64_t rows_wanted = 0;
  int max_steps = 0;
  std::string model_size = "tiny";
  bool openblas_variant = true, python_pretokenized = false;
  app.add_option("--csv", csv, "UCI sample CSV (columns text,label)");
  app.add_option("--vocab", vocab);
  app.add_option("--threads", threads, "CPU threads for both pipelines");
  app.add_option("--batch-size", batch, "Examples per training step (the article's: 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--epochs", epochs, "Epochs per trainyard configuration");
  app.add_option("--python-steps", python_steps, "Timed steps of the Python pipeline (0 = skip)");
  app.add_option("--python", python);
  app.add_option(
      "--configs", configs,
      "Comma-separated trainyard configurations to run: fixed (padding to 100), grouping");
  app.add_option("--rows", rows_wanted,
                 "Replicate the CSV's rows to this many training samples (0 = as they are; the "
                 "article's scale is 164000)");
  app.add_option("--max-steps", max_steps,
                 "Stop each trainyard configuration after this many steps and extrapolate the "
                 "epoch (0 = run --epochs in full)");
  app.add_option("--model", model_size, "tiny (BERT-Tiny) or base (random BERT-Base shape)")
      ->check(CLI::IsMember({"tiny", "base"}));
  app.add_flag("--openblas-variant,!--no-openblas-variant", openblas_variant,
               "Also run the Python pipeline with OPENBLAS_NUM_THREADS=1 (default on)");
  app.add_flag("--python-pretokenized", python_pretokenized,
               "Also run the Python pipeline with its batches tokenized before the timed loop");
  CLI11_PARSE(app, argc, argv);
  if (max_steps != 0 && max_steps <= kWarmupSteps) {
    std::cerr << "train_bench: --max-steps must be 0 or more than " << kWarmupSteps << "\n";
    return 2;
  }

  auto table = data::ReadCsv(csv);
  if (!table.ok()) {
    std::cerr << "train_bench: " << table.status() << " (run scripts/fetch-sample-data.sh)\n";
    return 1;
  }
  const int text = table->ColumnIndex("text"), label = table->ColumnIndex("label");
  if (text < 0 || label < 0) {
    std::cerr << "train_bench: " << csv << " needs columns text,label\n";
    return 1;
  }
  const fs::path dir =
      fs::temp_directory_path() / ("trainyard_train_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  data::CsvTable out;
  out.header = {"bodyText", "Target"};
  for (const auto& row : table->rows) out.rows.push_back({row[text], row[label]});
  const size_t unique_rows = out.rows.size();
  for (size_t i = 0; static_cast<int64_t>(out.rows.size()) < rows_wanted; ++i) {
    out.rows.push_back(out.rows[i % unique_rows]);
  }
  int labels = 2;
  for (const auto& row : out.rows) labels = std::max(labels, std::stoi(row[1]) + 1);
  if (!data::WriteCsvAtomic(dir / "train.csv", out).ok()) return 1;
  data::CsvTable small = out;
  small.rows.resize(std::min<size_t>(64, small.rows.size()));
  if (!data::WriteCsvAtomic(dir / "eval.csv", small).ok()) return 1;

  fs::path model_dir;
  if (model_size == "base") {
    model_dir = dir / "bert-base";
    if (!WriteRandomBertBase(model_dir, vocab, labels)) return 1;
  }
  const int64_t steps_per_epoch =
      (static_cast<int64_t>(out.rows.size()) + batch - 1) / static_cast<int64_t>(batch);

  struct Row {
    std::string name;
    double samples_per_second;
    int64_t samples;
    double seconds;
    // Per second of CPU time of all the process's threads (BLAS and pool workers included); for
    // trainyard over the whole RunTraining call (tokenization, model init, evaluation: a
    // pessimistic bound). On a loaded machine this is the fairer comparison.
    double cpu_samples_per_second;
    double loop_seconds_per_epoch = 0;  // steps_per_epoch / steady-state steps per second
    double e2e_seconds_per_epoch = 0;   // + set-up before the first step
  };
  std::vector<Row> rows;
  Row fixed_row{}, grouping_row{};
  for (bool grouping : {false, true}) {
    if (configs.find(grouping ? "grouping" : "fixed") == std::string::npos) continue;
    train::TrainOptions o;
    o.training_file = dir / "train.csv";
    o.validation_file = dir / "eval.csv";
    o.vocab = vocab;
    o.epochs = epochs;
    o.batch_size = batch;
    o.learning_rate = 1e-4;
    o.max_length = 100;
    o.threads = threads;
    o.length_grouping = grouping;
    o.model_dir = model_dir;
    std::ostringstream sink_out, sink_log;
    train::TrainIo io;
    io.out = &sink_out;
    io.log = &sink_log;
    io.env = {{"CLOUD_ML_HP_METRIC_FILE", (dir / "hp").string()}};
    // Step k's end time; with --max-steps the run stops after that step (the trainer's
    // preemption path: no checkpoint dir, so it just returns).
    std::vector<Clock::time_point> step_end;
    std::atomic<bool> stop{false};
    io.stop_requested = &stop;
    io.after_step = [&](int64_t step) {
      step_end.push_back(Clock::now());
      if (max_steps > 0 && step >= max_steps) stop = true;
    };
    const double cpu_start = ProcessCpuSeconds();
    const auto start = Clock::now();
    auto result = train::RunTraining(o, io);
    const double process_cpu = ProcessCpuSeconds() - cpu_start;
    if (!result.ok()) {
      std::cerr << "train_bench: " << result.status() << "\n";
      return 1;
    }
    Row row{grouping ? "trainyard, length grouping" : "trainyard, fixed padding to 100",
            result->train_samples / result->train_seconds, result->train_samples,
            result->train_seconds, result->train_samples / std::max(1e-9, process_cpu)};
    const int64_t steps = static_cast<int64_t>(step_end.size());
    if (steps > kWarmupSteps + 1) {
      const double steady =  // seconds per step after the warm-up steps
          Seconds(step_end.back() - step_end[kWarmupSteps - 1]) /
          static_cast<double>(steps - kWarmupSteps);
      // Before the first step: CSV, tokenization, model set-up (less the first step's own time).
      const double setup = Seconds(step_end.front() - start) - steady;
      row.loop_seconds_per_epoch = steady * static_cast<double>(steps_per_epoch);
      row.e2e_seconds_per_epoch = setup + row.loop_seconds_per_epoch;
      if (max_steps > 0) {
        row.samples_per_second = static_cast<double>(batch) / steady;
        row.seconds = Seconds(step_end.back() - step_end[kWarmupSteps - 1]);
        row.samples = (steps - kWarmupSteps) * batch;
      }
    }
    rows.push_back(row);
    (grouping ? grouping_row : fixed_row) = rows.back();
  }
  Row best_python{};
  nlohmann::json python_runs = nlohmann::json::array();
  std::vector<std::pair<std::string, std::string>> python_variants = {{"", ""}};
  if (openblas_variant) python_variants.push_back({"OPENBLAS_NUM_THREADS=1 ", ""});
  if (python_pretokenized) python_variants.push_back({"", " --pretokenized"});
  for (const auto& [env, flags] : python_variants) {
    if (python_steps <= 0) break;
    const std::string cmd = env + python + " " + Quote(script) + " --csv " +
                            Quote((dir / "train.csv").string()) + " --vocab " + Quote(vocab) +
                            " --batch-size " + std::to_string(batch) + " --steps " +
                            std::to_string(python_steps) + " --threads " + std::to_string(threads) +
                            " --model-size " + model_size + flags + " 2>&1";
    const std::string output = Shell(cmd);
    const size_t brace = output.rfind("{\"pipeline\"");
    if (brace == std::string::npos) {
      std::cerr << "train_bench: the Python pipeline failed:\n" << output << "\n";
      continue;
    }
    auto pj = nlohmann::json::parse(output.substr(brace, output.find('\n', brace) - brace));
    pj["env"] = env.empty() ? "default" : env.substr(0, env.size() - 1);
    python_runs.push_back(pj);
    Row row{!flags.empty() ? "  same, tokenized before the loop"
            : env.empty()  ? "python article pipeline (pad 100)"
                           : "  same, OPENBLAS_NUM_THREADS=1",
            pj["samples_per_second"].get<double>(), pj["samples"].get<int64_t>(),
            pj["seconds"].get<double>(), pj.value("process_cpu_samples_per_second", 0.0)};
    // The article's loop tokenizes inside it: its loop time is its end-to-end time (plus its
    // start-up); the pretokenized variant's loop excludes tokenization, which its e2e adds back.
    row.loop_seconds_per_epoch =
        static_cast<double>(steps_per_epoch) * batch / row.samples_per_second;
    row.e2e_seconds_per_epoch =
        row.loop_seconds_per_epoch + pj.value("setup_seconds", 0.0) +
        pj.value("tokenize_seconds_per_sample", 0.0) * static_cast<double>(out.rows.size());
    rows.push_back(row);
    // The ratios compare against the article's pipeline as it runs (tokenizing in the loop).
    if (flags.empty() && row.samples_per_second > best_python.samples_per_second) {
      best_python = row;
    }
  }
  fs::remove_all(dir);

  const double python_sps = best_python.samples_per_second;
  const double python_cpu_sps = best_python.cpu_samples_per_second;
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const std::string title = "pipeline (batch " + std::to_string(batch) + ", " +
                            (model_size == "base" ? "BERT-Base" : "BERT-Tiny") + ")";
  std::printf("%-36s %11s %9s %9s %10s %13s %10s %12s %11s\n", title.c_str(), "samples/s",
              "samples", "seconds", "vs python", "samples/cpu-s", "vs python", "loop s/epoch",
              "e2e s/epoch");
  for (const auto& r : rows) {
    std::printf("%-36s %11.1f %9lld %9.2f %9.2fx %13.1f %9.2fx %12.2f %11.2f\n", r.name.c_str(),
                r.samples_per_second, static_cast<long long>(r.samples), r.seconds,
                ratio(r.samples_per_second, python_sps), r.cpu_samples_per_second,
                ratio(r.cpu_samples_per_second, python_cpu_sps), r.loop_seconds_per_epoch,
                r.e2e_seconds_per_epoch);
  }
  std::printf("(ratios against the faster Python run%s; an epoch = %lld samples, %lld steps%s)\n",
              python_sps > 0 ? "" : ": none ran", static_cast<long long>(out.rows.size()),
              static_cast<long long>(steps_per_epoch),
              max_steps > 0 ? ", extrapolated from the timed steps" : "");
  nlohmann::json j = {
      {"bench", "train"},
      {"batch_size", batch},
      {"threads", threads},
      {"examples", out.rows.size()},
      {"fixed_padding_samples_per_second", fixed_row.samples_per_second},
      {"length_grouping_samples_per_second", grouping_row.samples_per_second},
      {"python_samples_per_second", python_sps},
      {"fixed_padding_cpu_samples_per_second", fixed_row.cpu_samples_per_second},
      {"length_grouping_cpu_samples_per_second", grouping_row.cpu_samples_per_second},
      {"python_cpu_samples_per_second", python_cpu_sps},
      {"python_runs", python_runs},
      {"cpu_ratio_fixed_padding", ratio(fixed_row.cpu_samples_per_second, python_cpu_sps)},
      {"cpu_ratio_length_grouping", ratio(grouping_row.cpu_samples_per_second, python_cpu_sps)},
      {"ratio_fixed_padding", ratio(fixed_row.samples_per_second, python_sps)},
      {"ratio_length_grouping", ratio(grouping_row.samples_per_second, python_sps)},
      {"hardware_concurrency", std::thread::hardware_concurrency()},
      {"libtorch", model::compat::TorchVersion()},
      {"device", torch::cuda::is_available() ? "cuda" : "cpu"},
      {"model", model_size},
      {"unique_rows", unique_rows},
      {"steps_per_epoch", steps_per_epoch},
      {"max_steps", max_steps},
      {"fixed_padding_loop_seconds_per_epoch", fixed_row.loop_seconds_per_epoch},
      {"fixed_padding_e2e_seconds_per_epoch", fixed_row.e2e_seconds_per_epoch},
      {"length_grouping_loop_seconds_per_epoch", grouping_row.loop_seconds_per_epoch},
      {"length_grouping_e2e_seconds_per_epoch", grouping_row.e2e_seconds_per_epoch},
      {"python_loop_seconds_per_epoch", best_python.loop_seconds_per_epoch},
      {"python_e2e_seconds_per_epoch", best_python.e2e_seconds_per_epoch}};
  std::cout << j.dump() << "\n";
  return 0;
}
