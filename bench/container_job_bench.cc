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
// For each: submit->RUNNING (startTime - createTime as the server records them; RUNNING means
// every replica's supervisor was started) and submit->first output (the log line's capture time -
// createTime: the entrypoint really ran). Needs podman, runc, docker-registry, busybox-static and
// root. Prints a table and one JSON line.
#include <httplib.h>
#include <signal.h>
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
  std::vector<double> running_ms, output_ms;
};

bool RunJob(httplib::Client& client, const fs::path& data_dir, const std::string& pool,
            Sample* sample) {
  std::string body = R"({"displayName":"b","jobSpec":{"workerPoolSpecs":[)" + pool + "]}}";
  auto r = client.Post(kJobs, body, "application/json");
  if (!r || r->status != 200) {
    std::cerr << "create failed: " << (r ? r->body : "no response") << "\n";
    return false;
  }
  std::string name = json::parse(r->body)["name"];
  for (int poll = 0; poll < 60000; ++poll) {
    json job = json::parse(client.Get("/v1/" + name)->body);
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
    if (state == "JOB_STATE_FAILED" || state == "JOB_STATE_CANCELLED") {
      std::cerr << "job failed: " << job.dump() << "\n";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
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
      {"host", {}}, {"warm", {}}, {"latest", {}}};
  if (rc == 0) {
    server = trainyard::bench::StartServer({tool, "server", "--port", "0", "--data-dir",
                                            (root / "data").string(), "--podman-storage",
                                            (root / "server").string()});
    httplib::Client client("127.0.0.1", server.port);
    client.set_read_timeout(120);
    const std::vector<std::string> pools = {Pool("local"), Pool("trainyard/busybox:bench"),
                                            Pool("trainyard/busybox:latest")};
    for (int i = 0; i < jobs && rc == 0; ++i) {
      for (size_t k = 0; k < pools.size() && rc == 0; ++k) {
        if (!RunJob(client, root / "data", pools[k], &results[k].second)) rc = 1;
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

  std::printf("%d jobs of each kind, one at a time, `sh -c 'echo first'`\n", jobs);
  std::printf("%-8s %22s %22s %24s\n", "kind", "submit->RUNNING p50 ms", "p90 ms",
              "submit->first output p50");
  json row = {{"bench", "container_job_bench"}, {"jobs", jobs}};
  for (const auto& [kind, s] : results) {
    std::printf("%-8s %22.1f %22.1f %24.1f\n", kind.c_str(), Percentile(s.running_ms, 0.5),
                Percentile(s.running_ms, 0.9), Percentile(s.output_ms, 0.5));
    row[kind] = {{"submit_to_running_p50_ms", Percentile(s.running_ms, 0.5)},
                 {"submit_to_running_p90_ms", Percentile(s.running_ms, 0.9)},
                 {"submit_to_first_output_p50_ms", Percentile(s.output_ms, 0.5)},
                 {"submit_to_first_output_p90_ms", Percentile(s.output_ms, 0.9)}};
  }
  std::printf("%s\n", row.dump().c_str());
  return 0;
}
