// Data-parallel benchmark on one machine (processes talk over 127.0.0.1 with Gloo):
//   1. all-reduce of BERT-Tiny-sized gradients (4.39M floats, 17.5 MB) between 2 processes:
//      one flat tensor (what one 25 MB bucket costs) and through GradientSynchronizer with the
//      real BERT-Tiny parameter list (copy into buckets, all-reduce, average, copy back);
//   2. samples/s of full BERT-Tiny training steps (forward, backward, sync, AdamW) with 1 worker
//      (all threads) vs 2 workers (threads split between them) at the same global batch;
//   3. the real `trainyard-bert train` on the UCI sample (2400 rows, length grouping): 1 process
//      vs 2 data-parallel processes at the same global batch, as the platform would start them
//      (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK), with samples/s from the trainer's own log.
//
//   build/bench/distributed_bench [--iters 20] [--steps 8] [--batch 128] [--seq 64] [--threads N]
//                                 [--trainer-epochs 1] [--csv data/sample/uci_sentiment.csv]
//
// Prints a table and one JSON line. Not a test: no thresholds. Each configuration runs in fresh
// forked processes (the parent never touches torch, so nothing OpenMP-related crosses a fork).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "distributed/communicator.h"
#include "distributed/gradient_synchronizer.h"
#include "model/bert.h"
#include "model/bert_config.h"
#include "model/cpu_runtime.h"

namespace fs = std::filesystem;
using namespace trainyard;
using namespace trainyard::distributed;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

Json Summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return Json{{"median_ms", v[v.size() / 2] * 1e3},
              {"mean_ms", sum / v.size() * 1e3},
              {"min_ms", v.front() * 1e3}};
}

std::unique_ptr<Communicator> Connect(int rank, int world, int port) {
  DistributedConfig config;
  config.rank = rank;
  config.world_size = world;
  config.master_addr = "127.0.0.1";
  config.master_port = port;
  auto comm = Communicator::Connect(config, CommunicatorOptions{});
  if (!comm.ok()) {
    std::cerr << comm.status() << "\n";
    _exit(2);
  }
  return std::move(*comm);
}

model::BertForSequenceClassification TinyBert() {
  return model::BertForSequenceClassification(
      model::BertConfig::Tiny({"negative", "neutral", "positive"}));
}

// Phase 1 on one rank: all-reduce timings.
Json AllReduceRank(int rank, int world, int port, int iters) {
  model::ConfigureCpuRuntime(1);
  auto comm = Connect(rank, world, port);
  auto bert = TinyBert();
  int64_t numel = 0;
  for (const auto& p : bert->parameters()) numel += p.numel();
  torch::Tensor flat = torch::ones({numel});
  std::vector<double> flat_times, sync_times;
  for (int i = 0; i < iters + 3; ++i) {
    (void)comm->Barrier();
    auto t0 = Clock::now();
    Status s = comm->AllReduce(flat, ReduceOp::kSum);
    if (!s.ok()) std::cerr << s << "\n";
    if (i >= 3) flat_times.push_back(Seconds(t0));
  }
  SynchronizerOptions options;
  options.overlap_with_backward = false;  // time the communication path alone
  auto sync = GradientSynchronizer::Create(*comm, bert->named_parameters(), options);
  for (auto& p : bert->parameters()) p.mutable_grad() = torch::randn_like(p);
  for (int i = 0; i < iters + 3; ++i) {
    (void)comm->Barrier();
    auto t0 = Clock::now();
    (*sync)->BeginStep();
    Status s = (*sync)->FinishStep();
    if (!s.ok()) std::cerr << s << "\n";
    if (i >= 3) sync_times.push_back(Seconds(t0));
  }
  return Json{{"numel", numel},
              {"megabytes", numel * 4 / 1e6},
              {"buckets", (*sync)->bucket_count()},
              {"flat", Summary(flat_times)},
              {"synchronizer", Summary(sync_times)}};
}

// Phase 2 on one rank: training steps at global batch `batch`.
Json TrainRank(int rank, int world, int port, int steps, int batch, int seq, int threads) {
  model::ConfigureCpuRuntime(std::max(1, threads / world));  // as the trainer does
  auto comm = Connect(rank, world, port);
  torch::manual_seed(42);
  auto bert = TinyBert();
  bert->train();
  (void)BroadcastFromRankZero(*comm, bert->named_parameters(), bert->named_buffers());
  auto sync = GradientSynchronizer::Create(*comm, bert->named_parameters());
  torch::optim::AdamW adamw(bert->parameters(), torch::optim::AdamWOptions(5e-5));
  const int local = batch / world;
  torch::manual_seed(7 + rank);
  std::vector<double> step_times;
  double comm_wait = 0;
  int overlapped = 0;
  for (int step = 0; step < steps + 2; ++step) {
    torch::Tensor ids = torch::randint(1000, 30000, {local, seq}, torch::kLong);
    torch::Tensor mask = torch::ones({local, seq}, torch::kLong);
    torch::Tensor labels = torch::randint(0, 3, {local}, torch::kLong);
    (void)comm->Barrier();
    auto t0 = Clock::now();
    adamw.zero_grad();
    (*sync)->BeginStep();
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(bert->forward(ids, mask, torch::Tensor()), labels);
    loss.backward();
    auto t1 = Clock::now();
    Status s = (*sync)->FinishStep();
    if (!s.ok()) std::cerr << s << "\n";
    double wait = Seconds(t1);
    adamw.step();
    if (step >= 2) {
      step_times.push_back(Seconds(t0));
      comm_wait += wait;
      overlapped += (*sync)->buckets_launched_during_backward();
    }
  }
  Json out = Summary(step_times);
  out["samples_per_s"] = batch / (out["median_ms"].get<double>() / 1e3);
  out["sync_wait_ms"] = comm_wait / steps * 1e3;
  out["buckets_overlapped_per_step"] = static_cast<double>(overlapped) / steps;
  out["threads_per_worker"] = std::max(1, threads / world);
  return out;
}

// Forks `world` ranks running `body`; returns rank 0's JSON (empty on failure).
Json RunRanks(int world, const std::function<Json(int, int, int)>& body) {
  const int port = FreePort();
  fs::path dir = fs::temp_directory_path() / ("distributed_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      Json j = body(rank, world, port);
      std::ofstream(dir / ("rank" + std::to_string(rank))) << j.dump();
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
  }
  Json result;
  std::ifstream in(dir / "rank0");
  if (in) in >> result;
  fs::remove_all(dir);
  return result;
}

// Runs `trainyard-bert train` on `csv` as `world` processes (global batch `batch`, `threads` CPU
// threads in total); returns {"samples_per_s", "seconds"} from rank 0's "Trained N samples in T"
// line, or null when a rank failed.
Json TrainerRun(const fs::path& bert, const fs::path& csv, const fs::path& vocab, int world,
                int batch, int threads, int epochs) {
  const fs::path dir =
      fs::temp_directory_path() / ("distributed_bench_trainer." + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const int port = FreePort();
  std::vector<pid_t> pids;
  std::fflush(stdout);  // the children's freopen would print our buffered table again
  for (int rank = 0; rank < world; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      if (world > 1) {
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
        setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
        setenv("RANK", std::to_string(rank).c_str(), 1);
      }
      setenv("CLOUD_ML_HP_METRIC_FILE", (dir / "hp").c_str(), 1);
      const std::string log = (dir / ("rank" + std::to_string(rank) + ".log")).string();
      freopen(log.c_str(), "w", stderr);
      freopen("/dev/null", "w", stdout);
      const std::string b = std::to_string(batch / world),
                        t = std::to_string(std::max(1, threads / world));
      const std::string e = std::to_string(epochs);
      execl(bert.c_str(), bert.c_str(), "train", "--training-file", csv.c_str(),
            "--validation-file", csv.c_str(), "--text-column", "text", "--label-column", "label",
            "--vocab", vocab.c_str(), "--epochs", e.c_str(), "--batch-size", b.c_str(), "--threads",
            t.c_str(), "--eval-batch-size", "512", nullptr);
      _exit(127);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::ifstream in(dir / "rank0.log");
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.find("]: Trained ") != std::string::npos) found = line;
  }
  fs::remove_all(dir);
  double samples = 0, seconds = 0, rate = 0;
  const size_t at = found.find("Trained ");
  if (!ok || at == std::string::npos ||
      std::sscanf(found.c_str() + at, "Trained %lf samples in %lfs (%lf", &samples, &seconds,
                  &rate) != 3) {
    std::cerr << "trainyard-bert with " << world << " process(es) failed\n";
    return Json();
  }
  return {{"samples", samples},
          {"seconds", seconds},
          {"samples_per_s", rate},
          {"processes", world},
          {"threads_per_process", std::max(1, threads / world)}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"data-parallel benchmark: all-reduce time and 1 vs 2 worker samples/s"};
  int iters = 20, steps = 8, batch = 128, seq = 64;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  app.add_option("--iters", iters, "Timed all-reduces");
  app.add_option("--steps", steps, "Timed training steps per configuration");
  app.add_option("--batch", batch, "Global batch (split across workers)");
  app.add_option("--seq", seq, "Tokens per example");
  app.add_option("--threads", threads, "CPU threads in total (split across workers)");
  int trainer_epochs = 1;
  std::string csv = TRAINYARD_SOURCE_DIR "/data/sample/uci_sentiment.csv";
  std::string vocab = TRAINYARD_SOURCE_DIR "/data/sample/vocab.txt";
  std::string bert = TRAINYARD_BINARY_DIR "/tools/trainyard-bert";
  app.add_option("--trainer-epochs", trainer_epochs, "Epochs of trainyard-bert (0 = skip part 3)");
  app.add_option("--csv", csv, "UCI sample CSV (columns text,label)");
  app.add_option("--vocab", vocab);
  app.add_option("--trainyard-bert", bert);
  CLI11_PARSE(app, argc, argv);

  Json allreduce = RunRanks(2, [&](int r, int w, int p) { return AllReduceRank(r, w, p, iters); });
  Json one = RunRanks(
      1, [&](int r, int w, int p) { return TrainRank(r, w, p, steps, batch, seq, threads); });
  Json two = RunRanks(
      2, [&](int r, int w, int p) { return TrainRank(r, w, p, steps, batch, seq, threads); });
  if (allreduce.is_null() || one.is_null() || two.is_null()) {
    std::cerr << "a configuration failed (see messages above)\n";
    return 1;
  }
  std::printf("BERT-Tiny gradients: %lld floats (%.1f MB), %d bucket(s) of <= 25 MB\n",
              static_cast<long long>(allreduce["numel"].get<int64_t>()),
              allreduce["megabytes"].get<double>(), allreduce["buckets"].get<int>());
  std::printf("%-44s %10s %10s %10s\n", "2 processes, gloo over 127.0.0.1", "median ms", "mean ms",
              "min ms");
  for (const char* key : {"flat", "synchronizer"}) {
    const Json& j = allreduce[key];
    std::printf("%-44s %10.1f %10.1f %10.1f\n",
                std::string(key) == "flat" ? "all-reduce, one 17.5 MB tensor"
                                           : "GradientSynchronizer step (copy+reduce+avg)",
                j["median_ms"].get<double>(), j["mean_ms"].get<double>(),
                j["min_ms"].get<double>());
  }
  std::printf("\nBERT-Tiny training step, global batch %d x %d tokens, %d CPU threads in total\n",
              batch, seq, threads);
  std::printf("%-28s %12s %12s %14s %14s\n", "workers", "step ms", "samples/s", "sync wait ms",
              "threads/worker");
  for (auto [name, j] : {std::pair{"1 (batch 128)", &one}, std::pair{"2 (batch 64 each)", &two}}) {
    std::printf("%-28s %12.1f %12.1f %14.1f %14d\n", name, (*j)["median_ms"].get<double>(),
                (*j)["samples_per_s"].get<double>(), (*j)["sync_wait_ms"].get<double>(),
                (*j)["threads_per_worker"].get<int>());
  }
  Json trainer_one, trainer_one_half, trainer_two;
  if (trainer_epochs > 0) {
    trainer_one = TrainerRun(bert, csv, vocab, 1, batch, threads, trainer_epochs);
    // One process with the threads of one of the two workers: tells oversubscription artefacts
    // (OpenMP threads pre-empted on a busy machine) from real data-parallel gains.
    trainer_one_half =
        TrainerRun(bert, csv, vocab, 1, batch, std::max(1, threads / 2), trainer_epochs);
    trainer_two = TrainerRun(bert, csv, vocab, 2, batch, threads, trainer_epochs);
    if (!trainer_one.is_null() && !trainer_one_half.is_null() && !trainer_two.is_null()) {
      std::printf(
          "\ntrainyard-bert train on %s, %d epoch(s), global batch %d, %d threads in total\n",
          fs::path(csv).filename().c_str(), trainer_epochs, batch, threads);
      std::printf("%-28s %12s %12s %14s\n", "processes", "train s", "samples/s", "threads/proc");
      for (const Json* j : {&trainer_one, &trainer_one_half, &trainer_two}) {
        std::printf("%-28d %12.2f %12.1f %14d\n", (*j)["processes"].get<int>(),
                    (*j)["seconds"].get<double>(), (*j)["samples_per_s"].get<double>(),
                    (*j)["threads_per_process"].get<int>());
      }
    }
  }
  Json row{
      {"bench", "distributed"},
      {"trainer_1_process", trainer_one},
      {"trainer_1_process_half_threads", trainer_one_half},
      {"trainer_2_processes", trainer_two},
      {"machine_threads", threads},
      {"allreduce", allreduce},
      {"train_1_worker", one},
      {"train_2_workers", two},
      {"speedup_2_vs_1", two["samples_per_s"].get<double>() / one["samples_per_s"].get<double>()}};
  std::printf("%s\n", row.dump().c_str());
  return 0;
}
