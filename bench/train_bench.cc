// Trainer throughput benchmark: training samples/s of `trainyard-bert train` (the library call
// behind it) at batch 128 on the UCI sample, with the article's fixed padding to 100 and with
// length grouping (dynamic padding), against a Python/PyTorch re-implementation of the article's
// main.py pipeline (bench/train_article_pipeline.py) run in the same process tree.
//
//   build/bench/train_bench [--csv data/sample/uci_sentiment.csv] [--vocab data/sample/vocab.txt]
//                           [--threads 2] [--epochs 2] [--python-steps 12] [--python
//                           /usr/bin/python3]
//                           [--configs fixed,grouping]
//
// The Python pipeline runs twice: as users run it (Debian's torch on OpenBLAS, whose own thread
// pool then competes with torch's OpenMP threads) and with OPENBLAS_NUM_THREADS=1, its faster
// setting on this hardware; the ratios are against the faster of the two, so they never flatter
// trainyard-bert (which sets OpenBLAS to one thread itself: model/cpu_runtime.h).
//
// Prints a table and one JSON line. Not a test: no thresholds.
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "data/csv.h"
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
  app.add_option("--csv", csv, "UCI sample CSV (columns text,label)");
  app.add_option("--vocab", vocab);
  app.add_option("--threads", threads, "CPU threads for both pipelines");
  app.add_option("--epochs", epochs, "Epochs per trainyard configuration");
  app.add_option("--python-steps", python_steps, "Timed steps of the Python pipeline (0 = skip)");
  app.add_option("--python", python);
  app.add_option(
      "--configs", configs,
      "Comma-separated trainyard configurations to run: fixed (padding to 100), grouping");
  CLI11_PARSE(app, argc, argv);

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
  if (!data::WriteCsvAtomic(dir / "train.csv", out).ok()) return 1;
  data::CsvTable small = out;
  small.rows.resize(std::min<size_t>(64, small.rows.size()));
  if (!data::WriteCsvAtomic(dir / "eval.csv", small).ok()) return 1;

  struct Row {
    std::string name;
    double samples_per_second;
    int64_t samples;
    double seconds;
    // Per second of CPU time of all the process's threads (BLAS and pool workers included); for
    // trainyard over the whole RunTraining call (tokenization, model init, evaluation: a
    // pessimistic bound). On a loaded machine this is the fairer comparison.
    double cpu_samples_per_second;
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
    std::ostringstream sink_out, sink_log;
    train::TrainIo io;
    io.out = &sink_out;
    io.log = &sink_log;
    io.env = {{"CLOUD_ML_HP_METRIC_FILE", (dir / "hp").string()}};
    const double cpu_start = ProcessCpuSeconds();
    auto result = train::RunTraining(o, io);
    const double process_cpu = ProcessCpuSeconds() - cpu_start;
    if (!result.ok()) {
      std::cerr << "train_bench: " << result.status() << "\n";
      return 1;
    }
    rows.push_back({grouping ? "trainyard, length grouping" : "trainyard, fixed padding to 100",
                    result->train_samples / result->train_seconds, result->train_samples,
                    result->train_seconds, result->train_samples / std::max(1e-9, process_cpu)});
    (grouping ? grouping_row : fixed_row) = rows.back();
  }
  Row best_python{};
  nlohmann::json python_runs = nlohmann::json::array();
  for (const std::string env : {"", "OPENBLAS_NUM_THREADS=1 "}) {
    if (python_steps <= 0) break;
    const std::string cmd =
        env + python + " " + Quote(script) + " --csv " + Quote((dir / "train.csv").string()) +
        " --vocab " + Quote(vocab) + " --batch-size " + std::to_string(batch) + " --steps " +
        std::to_string(python_steps) + " --threads " + std::to_string(threads) + " 2>&1";
    const std::string output = Shell(cmd);
    const size_t brace = output.rfind("{\"pipeline\"");
    if (brace == std::string::npos) {
      std::cerr << "train_bench: the Python pipeline failed:\n" << output << "\n";
      continue;
    }
    auto pj = nlohmann::json::parse(output.substr(brace, output.find('\n', brace) - brace));
    pj["env"] = env.empty() ? "default" : env.substr(0, env.size() - 1);
    python_runs.push_back(pj);
    Row row{env.empty() ? "python article pipeline (pad 100)" : "  same, OPENBLAS_NUM_THREADS=1",
            pj["samples_per_second"].get<double>(), pj["samples"].get<int64_t>(),
            pj["seconds"].get<double>(), pj.value("process_cpu_samples_per_second", 0.0)};
    rows.push_back(row);
    if (row.samples_per_second > best_python.samples_per_second) best_python = row;
  }
  fs::remove_all(dir);

  const double python_sps = best_python.samples_per_second;
  const double python_cpu_sps = best_python.cpu_samples_per_second;
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf("%-36s %11s %9s %9s %10s %13s %10s\n", "pipeline (batch 128, BERT-Tiny)", "samples/s",
              "samples", "seconds", "vs python", "samples/cpu-s", "vs python");
  for (const auto& r : rows) {
    std::printf("%-36s %11.1f %9lld %9.2f %9.2fx %13.1f %9.2fx\n", r.name.c_str(),
                r.samples_per_second, static_cast<long long>(r.samples), r.seconds,
                ratio(r.samples_per_second, python_sps), r.cpu_samples_per_second,
                ratio(r.cpu_samples_per_second, python_cpu_sps));
  }
  std::printf("(ratios against the faster Python run%s)\n", python_sps > 0 ? "" : ": none ran");
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
      {"hardware_concurrency", std::thread::hardware_concurrency()}};
  std::cout << j.dump() << "\n";
  return 0;
}
