// platform_bench: measures the Trainyard control plane through the real server binary.
//
//   build/bench/platform_bench [--executor local|fake] [--jobs 1000] [--creates 2000]
//                              [--clients 8] [--list-jobs 100000] [--trainyard PATH]
//                              [--executor-poll-ms N]  (passed to the server)
//
// 1. idle RSS of a freshly started server (VmRSS, after 1 s);
// 2. submit->RUNNING latency: `--jobs` trivial jobs (imageUri local, command `true`) submitted one
//    at a time; latency = startTime - createTime of each job as recorded by the server;
// 3. create throughput: `--creates` POSTs from `--clients` keep-alive connections;
// 4. list latency: a second server over a database pre-filled with `--list-jobs` finished jobs
//    (inserted directly through SqliteJobStore): first page, deep pages, state and label filters.
// Prints a table and one JSON line.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/time.h"
#include "store/sqlite_job_store.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Server {
  pid_t pid = -1;
  int port = 0;
};

Server StartServer(const std::string& tool, const fs::path& data_dir,
                   const std::vector<std::string>& extra) {
  int out[2];
  if (::pipe(out) != 0) std::exit(1);
  std::vector<std::string> argv = {tool, "server", "--port", "0", "--data-dir", data_dir.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  size_t colon = line.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "server did not start: " << line << "\n";
    std::exit(1);
  }
  return {pid, std::atoi(line.c_str() + colon + 1)};
}

void StopServer(Server& s) {
  ::kill(s.pid, SIGTERM);
  ::waitpid(s.pid, nullptr, 0);
}

double RssMib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

const char* kTrivialJob = R"({"displayName":"bench","jobSpec":{"workerPoolSpecs":[
  {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
   "containerSpec":{"imageUri":"local","command":["true"]}}]}})";
const char* kJobs = "/v1/projects/bench/locations/local/customJobs";

std::string Arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  const std::string tool = Arg(argc, argv, "--trainyard", TRAINYARD_TOOL);
  const std::string executor = Arg(argc, argv, "--executor", "local");
  const int jobs = std::stoi(Arg(argc, argv, "--jobs", "1000"));
  const int creates = std::stoi(Arg(argc, argv, "--creates", "2000"));
  const int clients = std::stoi(Arg(argc, argv, "--clients", "8"));
  const int list_jobs = std::stoi(Arg(argc, argv, "--list-jobs", "100000"));
  const std::string poll_ms = Arg(argc, argv, "--executor-poll-ms", "");
  std::vector<std::string> server_args = {"--executor", executor};
  if (!poll_ms.empty()) server_args.insert(server_args.end(), {"--executor-poll-ms", poll_ms});
  const fs::path root =
      fs::temp_directory_path() / ("platform_bench_" + std::to_string(::getpid()));
  fs::remove_all(root);

  // 1 + 2: idle RSS, then submit->RUNNING latency one job at a time.
  Server s = StartServer(tool, root / "run", server_args);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double idle_rss = RssMib(s.pid);
  httplib::Client client("127.0.0.1", s.port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  std::vector<double> latency_ms, create_ms;
  for (int i = 0; i < jobs; ++i) {
    auto t0 = Clock::now();
    auto r = client.Post(kJobs, kTrivialJob, "application/json");
    create_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r || r->status != 200) {
      std::cerr << "create failed: " << (r ? r->body : "no response") << "\n";
      return 1;
    }
    std::string name = json::parse(r->body)["name"];
    for (int poll = 0; poll < 20000; ++poll) {
      auto g = client.Get("/v1/" + name);
      json job = json::parse(g->body);
      if (job.contains("startTime")) {
        auto start = trainyard::ParseTimestamp(job["startTime"].get<std::string>());
        auto created = trainyard::ParseTimestamp(job["createTime"].get<std::string>());
        latency_ms.push_back(std::chrono::duration<double, std::milli>(*start - *created).count());
        break;
      }
      std::string state = job.value("state", "");
      if (state == "JOB_STATE_FAILED" || state == "JOB_STATE_CANCELLED") {
        std::cerr << "job failed: " << job.dump() << "\n";
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  // 3: create throughput from several keep-alive clients.
  std::atomic<int> next{0}, failures{0};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      httplib::Client cl("127.0.0.1", s.port);
      cl.set_keep_alive(true);
      cl.set_tcp_nodelay(true);
      while (next.fetch_add(1) < creates) {
        auto r = cl.Post(kJobs, kTrivialJob, "application/json");
        if (!r || r->status != 200) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double create_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double creates_per_s = creates / create_s;
  const double busy_rss = RssMib(s.pid);
  StopServer(s);

  // 4: list latency over a pre-filled database.
  {
    fs::create_directories(root / "list");
    auto store = trainyard::store::SqliteJobStore::Open(root / "list" / "jobs.db");
    if (!store.ok()) {
      std::cerr << store.status() << "\n";
      return 1;
    }
    std::vector<trainyard::spec::CustomJob> batch;
    auto base = std::chrono::system_clock::now() - std::chrono::hours(24 * 30);
    const char* teams[] = {"nlp", "cv", "speech", "ranking"};
    for (int i = 0; i < list_jobs; ++i) {
      trainyard::spec::CustomJob job;
      job.name = "projects/bench/locations/local/customJobs/" + std::to_string(1000000000 + i);
      job.display_name = "job-" + std::to_string(i);
      job.state =
          i % 10 == 0 ? trainyard::spec::JobState::kFailed : trainyard::spec::JobState::kSucceeded;
      job.create_time = base + std::chrono::seconds(i * 20);
      job.update_time = job.create_time;
      job.start_time = job.create_time;
      job.end_time = *job.create_time + std::chrono::seconds(10);
      job.labels = {{"team", teams[i % 4]}};
      trainyard::spec::WorkerPoolSpec pool;
      pool.machine_spec = trainyard::spec::MachineSpec{"n1-standard-4", "", 0};
      pool.replica_count = 1;
      pool.container_spec = trainyard::spec::ContainerSpec{
          "trainyard/bert-sentiment", {}, {"--epochs=3", "--batch-size=32"}, {}};
      job.job_spec.worker_pool_specs.push_back(pool);
      batch.push_back(std::move(job));
      if (batch.size() == 10000 || i + 1 == list_jobs) {
        if (auto st = (*store)->CreateBatch(batch); !st.ok()) {
          std::cerr << st << "\n";
          return 1;
        }
        batch.clear();
      }
    }
  }
  Server ls = StartServer(tool, root / "list", server_args);
  httplib::Client lc("127.0.0.1", ls.port);
  lc.set_keep_alive(true);
  lc.set_tcp_nodelay(true);
  auto time_get = [&](const std::string& path, std::string* token) {
    auto t = Clock::now();
    auto r = lc.Get(path);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    if (!r || r->status != 200) {
      std::cerr << "list failed: " << (r ? r->body : "no response") << "\n";
      std::exit(1);
    }
    if (token) *token = json::parse(r->body).value("nextPageToken", "");
    return ms;
  };
  std::vector<double> first_page, deep_page, state_filter, label_filter;
  for (int i = 0; i < 100; ++i)
    first_page.push_back(time_get(std::string(kJobs) + "?pageSize=100", nullptr));
  std::string token;
  time_get(std::string(kJobs) + "?pageSize=100", &token);
  for (int i = 0; i < 100 && !token.empty(); ++i) {
    deep_page.push_back(time_get(std::string(kJobs) + "?pageSize=100&pageToken=" + token, &token));
  }
  for (int i = 0; i < 50; ++i) {
    state_filter.push_back(
        time_get(std::string(kJobs) + "?pageSize=100&filter=" +
                     httplib::detail::encode_query_param("state=\"JOB_STATE_FAILED\""),
                 nullptr));
    label_filter.push_back(time_get(std::string(kJobs) + "?pageSize=100&filter=" +
                                        httplib::detail::encode_query_param("labels.team=speech"),
                                    nullptr));
  }
  const double list_rss = RssMib(ls.pid);
  StopServer(ls);
  fs::remove_all(root);

  char buf[2048];
  std::snprintf(buf, sizeof buf,
                "platform_bench (executor=%s, %d jobs, %d creates x %d clients, %d listed jobs)\n"
                "  metric                              value      target\n"
                "  submit->RUNNING p50 (ms)            %8.2f   <= 20\n"
                "  submit->RUNNING p99 (ms)            %8.2f\n"
                "  create request p50 (ms)             %8.2f\n"
                "  create throughput (jobs/s)          %8.0f   >= 1000  (%d failed)\n"
                "  list first page p50/p99 (ms)        %8.2f / %.2f   <= 20\n"
                "  list deep page p50 (ms)             %8.2f\n"
                "  list state filter p50 (ms)          %8.2f\n"
                "  list label filter p50 (ms)          %8.2f\n"
                "  idle server RSS (MiB)               %8.1f   <= 30\n"
                "  RSS after creates / list (MiB)      %8.1f / %.1f\n",
                executor.c_str(), jobs, creates, clients, list_jobs, Percentile(latency_ms, 0.5),
                Percentile(latency_ms, 0.99), Percentile(create_ms, 0.5), creates_per_s,
                failures.load(), Percentile(first_page, 0.5), Percentile(first_page, 0.99),
                Percentile(deep_page, 0.5), Percentile(state_filter, 0.5),
                Percentile(label_filter, 0.5), idle_rss, busy_rss, list_rss);
  std::cout << buf;
  char host[256] = "";
  ::gethostname(host, sizeof host);
  json row = {{"bench", "platform"},
              {"machine", host},
              {"cores", std::thread::hardware_concurrency()},
              {"executor", executor},
              {"submit_to_running_p50_ms", Percentile(latency_ms, 0.5)},
              {"submit_to_running_p99_ms", Percentile(latency_ms, 0.99)},
              {"creates_per_s", creates_per_s},
              {"list_page_p50_ms", Percentile(first_page, 0.5)},
              {"list_page_p99_ms", Percentile(first_page, 0.99)},
              {"list_deep_page_p50_ms", Percentile(deep_page, 0.5)},
              {"list_state_filter_p50_ms", Percentile(state_filter, 0.5)},
              {"list_label_filter_p50_ms", Percentile(label_filter, 0.5)},
              {"listed_jobs", list_jobs},
              {"idle_rss_mib", idle_rss}};
  std::cout << row.dump() << "\n";
  return 0;
}
