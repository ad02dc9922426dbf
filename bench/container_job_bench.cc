// container_job_bench: what a container costs a job, through the real server.
//
//   build/bench/container_job_bench [--jobs 15] [--trainyard PATH]
//
// Starts its own loopback registry (scripts/registry-local.sh), builds and pushes the busybox
// image (scripts/build-images.sh, private podman storage), and a `trainyard server` with its own
// podman storage. Then, one job at a time, `--jobs` jobs of each kind run `sh -c 'echo first'`:
//   host      imageUri local (a host process under trainyard-exec-wrapper);
//   warm      trainyard/busybox:bench, a pinned tag already in the server's storage (no pull);
//   latest    trainyard/busybox:latest, pulled on every start (Vertex's behaviour; registry
//             round trip, layers cached).
//   podman    `podman run --rm` of the warm image in the server's storage, in the same rounds.
// For each: submit->RUNNING (startTime - createTime as the server records them; RUNNING means
// every replica's supervisor was started) and submit->first output (the log line's capture time -
// createTime: the entrypoint really ran); and what a client sees, from sending the create request
// and polling the job and its logs API every 5 ms: the create's answer, RUNNING, the first line,
// SUCCEEDED (podman: its first output line and its exit). Needs podman, runc, docker-registry,
// busybox-static and root. Prints a table, the warm/podman ratios and one JSON line.
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_server.h"
#include "common/time.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kJobs[] = "/v1/projects/p/locations/us-central1/customJobs";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using trainyard::bench::Percentile;

// The capture time of the job's first stdout line (job_log.h: "TIME POOL REPLICA O|E TEXT").
std::optional<std::chrono::system_clock::time_point> FirstOutput(const fs::path& logs) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(logs, ec)) {
    std::istringstream in(Slurp(e.path()));
    for (std::string l; std::getline(in, l);) {
      std::istringstream f(l);
      std::string time, pool, replica, stream;
      f >> time >> pool >> replica >> stream;
      if (stream == "O") {
        auto t = trainyard::ParseTimestamp(time);
        if (t.ok()) return *t;
      }
    }
  }
  return std::nullopt;
}

struct Sample {
  // As the server records them (createTime -> startTime, -> the first line's capture time).
  std::vector<double> running_ms, output_ms;
  // As a client sees them, from sending the create request: its answer, the first GET showing
  // RUNNING, the first line through the logs API, the first GET showing SUCCEEDED (polls every
  // 5 ms).
  std::vector<double> client_created_ms, client_running_ms, client_output_ms, client_done_ms;
};

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Polls the job and its logs every 5 ms until it ends, recording when the client first sees
// RUNNING, a stdout line and SUCCEEDED. Returns the last job.
json Watch(httplib::Client& client, const std::string& name, Clock::time_point t0, Sample* sample) {
  double running = -1, output = -1;
  for (int poll = 0; poll < 60000; ++poll) {
    json job = json::parse(client.Get("/v1/" + name)->body);
    const std::string state = job.value("state", "");
    if (running < 0 && (state == "JOB_STATE_RUNNING" || state == "JOB_STATE_SUCCEEDED")) {
      running = MsSince(t0);
    }
    if (output < 0) {
      auto logs = client.Get("/v1/" + name + ":logs");
      if (logs && logs->status == 200 && logs->body.find("\"stdout\"") != std::string::npos) {
        output = MsSince(t0);
      }
    }
    if (state == "JOB_STATE_SUCCEEDED") {
      const double done = MsSince(t0);
      if (output < 0) output = done;  // the line came with the end (read after it)
      sample->client_running_ms.push_back(running);
      sample->client_output_ms.push_back(output);
      sample->client_done_ms.push_back(done);
      return job;
    }
    if (state == "JOB_STATE_FAILED" || state == "JOB_STATE_CANCELLED") return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return json::object();
}

bool RunJob(httplib::Client& client, const fs::path& data_dir, const std::string& pool,
            Sample* sample) {
  std::string body = R"({"displayName":"b","jobSpec":{"workerPoolSpecs":[)" + pool + "]}}";
  const Clock::time_point t0 = Clock::now();
  auto r = client.Post(kJobs, body, "application/json");
  if (!r || r->status != 200) {
    std::cerr << "create failed: " << (r ? r->body : "no response") << "\n";
    return false;
  }
  sample->client_created_ms.push_back(MsSince(t0));
  std::string name = json::parse(r->body)["name"];
  {
    json job = Watch(client, name, t0, sample);
    std::string state = job.value("state", "");
    if (state == "JOB_STATE_SUCCEEDED") {
      auto created = trainyard::ParseTimestamp(job["createTime"].get<std::string>());
      auto started = trainyard::ParseTimestamp(job["startTime"].get<std::string>());
      auto output = FirstOutput(data_dir / "jobs" / name.substr(name.rfind('/') + 1) / "logs");
      if (!created.ok() || !started.ok() || !output) return false;
      using ms = std::chrono::duration<double, std::milli>;
      sample->running_ms.push_back(ms(*started - *created).count());
      sample->output_ms.push_back(ms(*output - *created).count());
      return true;
    }
    std::cerr << "job did not succeed: " << job.dump() << "\n";
    return false;
  }
}

// Waits until the storage holds no container (a job's supervisor removes its container after the
// job has ended, in the background) and 100 ms more, so that no measured start shares podman with
// the previous one's clean-up (5 s at most).
void Settle(const std::string& podman) {
  for (int i = 0; i < 100; ++i) {
    FILE* p = ::popen((podman + " ps --all --quiet 2>/dev/null").c_str(), "r");
    char line[128];
    const bool any = p != nullptr && std::fgets(line, sizeof line, p) != nullptr;
    if (p != nullptr) ::pclose(p);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// `podman run --rm` of the image, as a user would start it: to its first output line and to its
// exit (popen: the line arrives as the container writes it).
bool RunPodman(const std::string& podman, const std::string& image, Sample* sample) {
  // What starting a container takes on this host: its hard open-files and processes limits
  // (podman's defaults are above them, so a plain `podman run` fails here, as Trainyard's own
  // runtime knows: container/podman_runtime.h FittingUlimits) and the host network replicas use.
  rlimit files{}, procs{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  ::getrlimit(RLIMIT_NPROC, &procs);
  const std::string nofile = std::to_string(files.rlim_max);
  const std::string nproc = std::to_string(std::min<rlim_t>(procs.rlim_max, 32768));
  const std::string command = podman + " run --rm --pull=never --runtime runc --network host" +
                              " --ulimit nofile=" + nofile + ":" + nofile +
                              " --ulimit nproc=" + nproc + ":" + nproc + " " + image +
                              " sh -c 'echo first' 2>/dev/null";
  const Clock::time_point t0 = Clock::now();
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return false;
  char line[256];
  double first = -1;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    if (first < 0) first = MsSince(t0);
  }
  const int rc = ::pclose(out);
  if (rc != 0 || first < 0) return false;
  sample->client_output_ms.push_back(first);
  sample->client_done_ms.push_back(MsSince(t0));
  return true;
}

std::string Pool(const std::string& image) {
  std::string command = R"(["sh","-c","echo first"])";
  return R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":)"
         R"({"imageUri":")" +
         image + R"(","command":)" + command + "}}";
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 15;
  std::string tool = TRAINYARD_TOOL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--jobs")) jobs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--trainyard")) tool = argv[i + 1];
  }
  const fs::path src = TRAINYARD_SOURCE_DIR;
  const fs::path root =
      fs::temp_directory_path() / ("container_job_bench_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string reg_env = "REGISTRY_LOCAL_DIR=" + (root / "registry").string() +
                              " REGISTRIES_CONF_D=" + (root / "conf.d").string() + " ";
  if (std::system((reg_env + "bash " + (src / "scripts/registry-local.sh").string() +
                   " start >/dev/null 2>&1")
                      .c_str()) != 0) {
    std::cerr << "cannot start the registry (needs docker-registry)\n";
    return 1;
  }
  std::string registry = "127.0.0.1:" + Slurp(root / "registry" / "port");
  registry.erase(registry.find_last_not_of('\n') + 1);
  std::ofstream(root / "registries.conf")
      << "[[registry]]\nlocation = \"" << registry << "\"\ninsecure = true\n";
  ::setenv("CONTAINERS_REGISTRIES_CONF", (root / "registries.conf").c_str(), 1);
  ::setenv("TRAINYARD_REGISTRY", registry.c_str(), 1);
  ::setenv("TRAINYARD_BUCKET_ROOT", (root / "buckets").c_str(), 1);
  const std::string build_podman = "podman --root " + (root / "build/storage").string() +
                                   " --runroot " + (root / "build/run").string();
  const std::string server_podman = "podman --root " + (root / "server/storage").string() +
                                    " --runroot " + (root / "server/run").string();
  std::string build = "PODMAN='" + build_podman + "' bash " +
                      (src / "scripts/build-images.sh").string() + " busybox >/dev/null 2>&1 && " +
                      build_podman + " tag localhost/trainyard/busybox:latest " + registry +
                      "/trainyard/busybox:bench && " + build_podman + " push " + registry +
                      "/trainyard/busybox:bench >/dev/null 2>&1 && " + server_podman + " pull " +
                      registry + "/trainyard/busybox:bench >/dev/null 2>&1";
  int rc = std::system(build.c_str());
  trainyard::bench::ServerProcess server;
  std::vector<std::pair<std::string, Sample>> results = {
      {"host", {}}, {"warm", {}}, {"latest", {}}, {"podman", {}}};
  if (rc == 0) {
    server = trainyard::bench::StartServer({tool, "server", "--port", "0", "--data-dir",
                                            (root / "data").string(), "--podman-storage",
                                            (root / "server").string()});
    httplib::Client client("127.0.0.1", server.port);
    client.set_read_timeout(120);
    const std::vector<std::string> pools = {Pool("local"), Pool("trainyard/busybox:bench"),
                                            Pool("trainyard/busybox:latest")};
    const std::string warm_image = registry + "/trainyard/busybox:bench";
    for (int i = 0; i < jobs && rc == 0; ++i) {
      for (size_t k = 0; k < pools.size() && rc == 0; ++k) {
        Settle(server_podman);
        if (!RunJob(client, root / "data", pools[k], &results[k].second)) rc = 1;
      }
      // The same image, the same storage, started by podman itself, in the same round.
      Settle(server_podman);
      if (rc == 0 && !RunPodman(server_podman, warm_image, &results[3].second)) {
        std::cerr << "podman run --rm " << warm_image << " failed\n";
        rc = 1;
      }
    }
  } else {
    std::cerr << "cannot build/push/pull the busybox image (podman, runc, busybox-static, root)\n";
  }
  trainyard::bench::StopServer(server);
  std::system(
      (reg_env + "bash " + (src / "scripts/registry-local.sh").string() + " stop >/dev/null 2>&1")
          .c_str());
  std::system((server_podman + " rmi --all --force >/dev/null 2>&1; " + build_podman +
               " rmi --all --force >/dev/null 2>&1")
                  .c_str());
  fs::remove_all(root);
  if (rc != 0) return 1;

  std::printf(
      "%d jobs of each kind, one at a time, `sh -c 'echo first'`; ms from the create\n"
      "request (podman: from `podman run --rm --pull=never`); server = as recorded\n",
      jobs);
  std::printf("%-7s %9s %9s | %8s %9s %9s %9s %9s %9s %9s\n", "kind", "srv run", "srv out",
              "created", "RUN p50", "RUN p99", "line p50", "line p99", "done p50", "done p99");
  json row = {{"bench", "container_job_bench"}, {"jobs", jobs}};
  for (const auto& [kind, s] : results) {
    auto p = [](const std::vector<double>& v, double q) {
      return v.empty() ? -1.0 : Percentile(v, q);
    };
    std::printf("%-7s %9.1f %9.1f | %8.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", kind.c_str(),
                p(s.running_ms, 0.5), p(s.output_ms, 0.5), p(s.client_created_ms, 0.5),
                p(s.client_running_ms, 0.5), p(s.client_running_ms, 0.99),
                p(s.client_output_ms, 0.5), p(s.client_output_ms, 0.99), p(s.client_done_ms, 0.5),
                p(s.client_done_ms, 0.99));
    row[kind] = {{"submit_to_running_p50_ms", p(s.running_ms, 0.5)},
                 {"submit_to_first_output_p50_ms", p(s.output_ms, 0.5)},
                 {"client_created_p50_ms", p(s.client_created_ms, 0.5)},
                 {"client_running_p50_ms", p(s.client_running_ms, 0.5)},
                 {"client_running_p99_ms", p(s.client_running_ms, 0.99)},
                 {"client_first_line_p50_ms", p(s.client_output_ms, 0.5)},
                 {"client_first_line_p99_ms", p(s.client_output_ms, 0.99)},
                 {"client_succeeded_p50_ms", p(s.client_done_ms, 0.5)},
                 {"client_succeeded_p99_ms", p(s.client_done_ms, 0.99)}};
  }
  const Sample& warm = results[1].second;
  const Sample& podman = results[3].second;
  for (const auto& [what, a, b] :
       {std::tuple{"first line", &warm.client_output_ms, &podman.client_output_ms},
        std::tuple{"exit/SUCCEEDED", &warm.client_done_ms, &podman.client_done_ms}}) {
    std::printf("warm / podman run --rm, %s: p50 %.2fx, p99 %.2fx\n", what,
                Percentile(*a, 0.5) / Percentile(*b, 0.5),
                Percentile(*a, 0.99) / Percentile(*b, 0.99));
  }
  std::printf("%s\n", row.dump().c_str());
  return 0;
}
