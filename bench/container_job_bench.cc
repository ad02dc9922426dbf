// container_job_bench: what a container costs a job, through the real server, against podman.
//
//   build/bench/container_job_bench [--jobs 15] [--cold-jobs N] [--images busybox,pytorch]
//                                   [--trainyard PATH]
//
// Starts its own loopback registry (scripts/registry-local.sh), builds and pushes the images
// (busybox: scripts/build-images.sh into a private storage; pytorch: the host's
// localhost/trainyard/pytorch:latest, built by scripts/build-images.sh --no-push pytorch when
// missing, pushed from there), and a `trainyard server` with its own podman storage. Then, one
// run at a time, `--jobs` runs of each kind execute `sh -c 'echo first'`:
//   host          imageUri local (a host process under trainyard-exec-wrapper; busybox only);
//   IMG warm      trainyard/IMG:bench, a pinned tag already in the server's storage (no pull);
//   IMG cold      the same tag removed from the server's storage before each job: pulled from the
//                 registry (layers downloaded and unpacked), then run (`--cold-jobs` of them);
//   IMG latest    trainyard/IMG:latest, pulled on every start (Vertex's behaviour; registry round
//                 trip, layers cached; busybox only);
//   podman IMG    `podman run --rm --pull=never` of the warm image in the server's storage;
//   podman IMG cold  `podman run --rm` after the same removal (it pulls).
// Measured from the client's side: it sends the create request and polls the job and its logs
// API every 5 ms; the create's answer, RUNNING, the first line and SUCCEEDED (podman: its first
// output line, read as it comes, and its exit). Per step, from the create request: the server's
// recorded startTime (every supervisor started) and endTime, the first line's capture time in
// the job log, and podman's own events for the container (image resolved or pulled, created,
// init, started, died, removed). Needs podman, runc, docker-registry, busybox-static and root.
// Prints the table, the breakdown, the image/podman ratios and one JSON line.
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
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
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
using Clock = std::chrono::steady_clock;
using trainyard::TimePoint;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
double MsBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// The capture time of the job's first stdout line (job_log.h: "TIME POOL REPLICA O|E TEXT").
std::optional<TimePoint> FirstOutput(const fs::path& logs) {
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

// The steps of the breakdown, in the order they happen; podman's events by their Status.
const std::vector<std::string> kSteps = {
    "answered", "RUNNING recorded",   "pull",        "create", "init", "start", "first line",
    "died",     "SUCCEEDED recorded", "client done", "remove"};

// What one kind of run sampled: ms from the create request (podman: from its start).
struct Sample {
  std::vector<double> client_created_ms, client_running_ms, client_output_ms, client_done_ms;
  std::map<std::string, std::vector<double>> steps;
};

// One row: how its runs start.
struct Kind {
  std::string label;
  bool podman = false;   // `podman run --rm` instead of a job
  std::string image;     // the job's imageUri ("local": a host process) or podman's reference
  std::string cold_ref;  // non-empty: removed from the server's storage before each run
  int runs = 0;
  Sample sample;
};

// Records, for each podman event Status, its first time at or after `since` (the storage's
// events log; runs are one at a time, so the window holds only this run's container).
void AddPodmanEvents(const std::string& podman, TimePoint since, Sample* sample) {
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since.time_since_epoch());
  const std::string command = podman + " events --stream=false --format json --since " +
                              std::to_string(secs.count() - 1) + " 2>/dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return;
  std::map<std::string, double> first;
  std::string line;
  for (char buf[4096]; std::fgets(buf, sizeof buf, p) != nullptr;) {
    line += buf;
    if (line.back() != '\n') continue;
    json e = json::parse(line, nullptr, /*allow_exceptions=*/false);
    line.clear();
    if (!e.is_object()) continue;
    auto t = trainyard::ParseTimestamp(e.value("Time", ""));
    const std::string status = e.value("Status", "");
    if (!t.ok() || *t < since || first.count(status)) continue;
    first[status] = MsBetween(since, *t);
  }
  ::pclose(p);
  for (const auto& [status, ms] : first) {
    if (std::find(kSteps.begin(), kSteps.end(), status) != kSteps.end()) {
      sample->steps[status].push_back(ms);
    }
  }
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
      sample->steps["client done"].push_back(done);
      return job;
    }
    if (state == "JOB_STATE_FAILED" || state == "JOB_STATE_CANCELLED") return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return json::object();
}

// The server's own times of a finished job, from the create request sent at `sent`.
bool AddServerTimes(const json& job, const fs::path& data_dir, TimePoint sent, Sample* sample) {
  const std::string name = job.value("name", "");
  auto started = trainyard::ParseTimestamp(job.value("startTime", ""));
  auto ended = trainyard::ParseTimestamp(job.value("endTime", ""));
  auto output = FirstOutput(data_dir / "jobs" / name.substr(name.rfind('/') + 1) / "logs");
  if (!started.ok() || !ended.ok() || !output) return false;
  sample->steps["RUNNING recorded"].push_back(MsBetween(sent, *started));
  sample->steps["first line"].push_back(MsBetween(sent, *output));
  sample->steps["SUCCEEDED recorded"].push_back(MsBetween(sent, *ended));
  return true;
}

std::string Pool(const std::string& image) {
  std::string command = R"(["sh","-c","echo first"])";
  return R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":)"
         R"({"imageUri":")" +
         image + R"(","command":)" + command + "}}";
}

// Waits until the storage holds no container (a job's supervisor removes its container after the
// job has ended, in the background), writes back what a pull or removal left dirty (else the
// server's SQLite commits wait behind gigabytes of writeback) and waits 100 ms more, so that no
// measured start shares podman or the disk with the previous one's clean-up.
void Settle(const std::string& podman) {
  for (int i = 0; i < 100; ++i) {
    FILE* p = ::popen((podman + " ps --all --quiet 2>/dev/null").c_str(), "r");
    char line[128];
    const bool any = p != nullptr && std::fgets(line, sizeof line, p) != nullptr;
    if (p != nullptr) ::pclose(p);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::sync();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Creates a job of `image`, watches it to its end and settles (Settle). Returns false with a
// message when it did not succeed.
bool RunJob(httplib::Client& client, const fs::path& data_dir, const std::string& podman,
            const std::string& image, Sample* sample) {
  std::string body = R"({"displayName":"b","jobSpec":{"workerPoolSpecs":[)" + Pool(image) + "]}}";
  const TimePoint sent = std::chrono::system_clock::now();
  const Clock::time_point t0 = Clock::now();
  auto r = client.Post(kJobs, body, "application/json");
  if (!r || r->status != 200) {
    std::cerr << "create failed: " << (r ? r->body : "no response") << "\n";
    return false;
  }
  sample->client_created_ms.push_back(MsSince(t0));
  sample->steps["answered"].push_back(sample->client_created_ms.back());
  const json job = Watch(client, json::parse(r->body)["name"], t0, sample);
  if (job.value("state", "") != "JOB_STATE_SUCCEEDED" ||
      !AddServerTimes(job, data_dir, sent, sample)) {
    std::cerr << "job did not succeed: " << job.dump() << "\n";
    return false;
  }
  Settle(podman);
  if (image != "local") AddPodmanEvents(podman, sent, sample);
  return true;
}

// `podman run --rm` of the image, as a user would start it: to its first output line and to its
// exit (popen: the line arrives as the container writes it). `pull`: podman's --pull value.
bool RunPodman(const std::string& podman, const std::string& image, const std::string& pull,
               Sample* sample) {
  // What starting a container takes on this host: its hard open-files and processes limits
  // (podman's defaults are above them, so a plain `podman run` fails here, as Trainyard's own
  // runtime knows: container/podman_runtime.h FittingUlimits) and the host network replicas use.
  rlimit files{}, procs{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  ::getrlimit(RLIMIT_NPROC, &procs);
  const std::string nofile = std::to_string(files.rlim_max);
  const std::string nproc = std::to_string(std::min<rlim_t>(procs.rlim_max, 32768));
  const std::string command = podman + " run --rm --pull=" + pull +
                              " --runtime runc --network host --ulimit nofile=" + nofile + ":" +
                              nofile + " --ulimit nproc=" + nproc + ":" + nproc + " " + image +
                              " sh -c 'echo first' 2>/dev/null";
  const TimePoint sent = std::chrono::system_clock::now();
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
  sample->steps["first line"].push_back(first);
  sample->steps["client done"].push_back(sample->client_done_ms.back());
  Settle(podman);
  AddPodmanEvents(podman, sent, sample);
  return true;
}

struct Options {
  int jobs = 15;
  int cold_jobs = -1;  // -1: --jobs
  std::vector<std::string> images = {"busybox"};
  std::string tool = TRAINYARD_TOOL;
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--jobs") o.jobs = std::atoi(value.c_str());
    if (flag == "--cold-jobs") o.cold_jobs = std::atoi(value.c_str());
    if (flag == "--trainyard") o.tool = value;
    if (flag == "--images") {
      o.images.clear();
      std::istringstream in(value);
      for (std::string image; std::getline(in, image, ',');) {
        if (image != "busybox" && image != "pytorch") {
          std::cerr << "--images: '" << image << "' is not busybox or pytorch\n";
          std::exit(2);
        }
        o.images.push_back(image);
      }
    }
  }
  if (o.cold_jobs < 0) o.cold_jobs = o.jobs;
  return o;
}

// The rows for `images`, in the order each round runs them.
std::vector<Kind> Kinds(const Options& o, const std::string& registry) {
  std::vector<Kind> kinds;
  for (const std::string& image : o.images) {
    const std::string bench_tag = "trainyard/" + image + ":bench";
    const std::string ref = registry + "/" + bench_tag;
    if (image == "busybox") kinds.push_back({"host", false, "local", "", o.jobs, {}});
    kinds.push_back({image + " warm", false, bench_tag, "", o.jobs, {}});
    kinds.push_back({image + " cold", false, bench_tag, ref, o.cold_jobs, {}});
    if (image == "busybox") {
      kinds.push_back({"busybox latest", false, "trainyard/busybox:latest", "", o.jobs, {}});
    }
    kinds.push_back({"podman " + image, true, ref, "", o.jobs, {}});
    kinds.push_back({"podman " + image + " cold", true, ref, ref, o.cold_jobs, {}});
  }
  return kinds;
}

// Builds (or reuses) the images and puts them in the registry as :bench (busybox also as
// :latest), and the :bench tags in the server's storage. Returns false with a message.
bool PrepareImages(const Options& o, const fs::path& src, const std::string& registry,
                   const std::string& build_podman, const std::string& server_podman) {
  for (const std::string& image : o.images) {
    const std::string bench_ref = registry + "/trainyard/" + image + ":bench";
    std::string steps;
    if (image == "busybox") {
      steps = "PODMAN='" + build_podman + "' bash " + (src / "scripts/build-images.sh").string() +
              " busybox && " + build_podman + " tag localhost/trainyard/busybox:latest " +
              bench_ref + " && " + build_podman + " push " + bench_ref;
    } else {
      // 1.2 GB made with debootstrap: the host's image when there is one (the script reuses a
      // recent one), pushed from the host's storage.
      steps = "bash " + (src / "scripts/build-images.sh").string() +
              " --no-push pytorch && podman push localhost/trainyard/pytorch:latest " + bench_ref;
    }
    steps += " && " + server_podman + " pull " + bench_ref;
    if (std::system(("(" + steps + ") >/dev/null 2>&1").c_str()) != 0) {
      std::cerr << "cannot build/push/pull the " << image
                << " image (podman, runc, busybox-static, debootstrap, root): " << steps << "\n";
      return false;
    }
  }
  return true;
}

// Runs every kind once per round, `jobs` rounds (a kind with fewer runs stops early).
bool RunRounds(std::vector<Kind>& kinds, httplib::Client& client, const fs::path& data_dir,
               const std::string& server_podman) {
  int rounds = 0;
  for (const Kind& k : kinds) rounds = std::max(rounds, k.runs);
  for (int i = 0; i < rounds; ++i) {
    for (Kind& k : kinds) {
      if (i >= k.runs) continue;
      if (!k.cold_ref.empty()) {
        std::system((server_podman + " rmi --force " + k.cold_ref + " >/dev/null 2>&1").c_str());
      }
      Settle(server_podman);
      const bool ok = k.podman ? RunPodman(server_podman, k.image,
                                           k.cold_ref.empty() ? "never" : "missing", &k.sample)
                               : RunJob(client, data_dir, server_podman, k.image, &k.sample);
      if (!ok) {
        std::cerr << k.label << ": run " << i + 1 << " failed\n";
        return false;
      }
    }
  }
  return true;
}

double P(const std::vector<double>& v, double q) { return v.empty() ? -1.0 : Percentile(v, q); }

void PrintTables(const Options& o, const std::vector<Kind>& kinds) {
  std::printf(
      "%d runs of each kind (cold: %d), one at a time, `sh -c 'echo first'`; ms from the create\n"
      "request (podman: from starting `podman run --rm`)\n",
      o.jobs, o.cold_jobs);
  std::printf("%-20s %8s %9s %9s %9s %9s %9s %9s\n", "kind", "created", "RUN p50", "RUN p99",
              "line p50", "line p99", "done p50", "done p99");
  for (const Kind& k : kinds) {
    const Sample& s = k.sample;
    std::printf("%-20s %8.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", k.label.c_str(),
                P(s.client_created_ms, 0.5), P(s.client_running_ms, 0.5),
                P(s.client_running_ms, 0.99), P(s.client_output_ms, 0.5),
                P(s.client_output_ms, 0.99), P(s.client_done_ms, 0.5), P(s.client_done_ms, 0.99));
  }
  std::printf("\nbreakdown, p50 ms from the create request (podman: from its start):\n%-20s", "");
  for (const std::string& step : kSteps) std::printf(" %9.9s", step.c_str());
  std::printf("\n");
  for (const Kind& k : kinds) {
    std::printf("%-20s", k.label.c_str());
    for (const std::string& step : kSteps) {
      auto it = k.sample.steps.find(step);
      if (it == k.sample.steps.end()) {
        std::printf(" %9s", "-");
      } else {
        std::printf(" %9.1f", P(it->second, 0.5));
      }
    }
    std::printf("\n");
  }
  std::printf("\n");
  for (const Kind& k : kinds) {
    if (k.podman) continue;
    auto twin = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& p) {
      return p.podman && p.image.ends_with("/" + k.image) &&
             p.cold_ref.empty() == k.cold_ref.empty();
    });
    if (twin == kinds.end()) continue;
    for (const auto& [what, a, b] :
         {std::tuple{"first line", &k.sample.client_output_ms, &twin->sample.client_output_ms},
          std::tuple{"exit/SUCCEEDED", &k.sample.client_done_ms, &twin->sample.client_done_ms}}) {
      std::printf("%s / %s, %s: p50 %.2fx, p99 %.2fx\n", k.label.c_str(), twin->label.c_str(), what,
                  P(*a, 0.5) / P(*b, 0.5), P(*a, 0.99) / P(*b, 0.99));
    }
  }
}

json ResultRow(const Options& o, const std::vector<Kind>& kinds) {
  json row = {{"bench", "container_job_bench"}, {"jobs", o.jobs}, {"cold_jobs", o.cold_jobs}};
  for (const Kind& k : kinds) {
    const Sample& s = k.sample;
    json steps = json::object();
    for (const auto& [step, v] : s.steps) steps[step] = P(v, 0.5);
    row[k.label] = {{"client_created_p50_ms", P(s.client_created_ms, 0.5)},
                    {"client_running_p50_ms", P(s.client_running_ms, 0.5)},
                    {"client_running_p99_ms", P(s.client_running_ms, 0.99)},
                    {"client_first_line_p50_ms", P(s.client_output_ms, 0.5)},
                    {"client_first_line_p99_ms", P(s.client_output_ms, 0.99)},
                    {"client_succeeded_p50_ms", P(s.client_done_ms, 0.5)},
                    {"client_succeeded_p99_ms", P(s.client_done_ms, 0.99)},
                    {"steps_p50_ms", steps}};
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
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
  std::vector<Kind> kinds = Kinds(o, registry);
  bool ok = PrepareImages(o, src, registry, build_podman, server_podman);
  trainyard::bench::ServerProcess server;
  if (ok) {
    server = trainyard::bench::StartServer({o.tool, "server", "--port", "0", "--data-dir",
                                            (root / "data").string(), "--podman-storage",
                                            (root / "server").string()});
    httplib::Client client("127.0.0.1", server.port);
    client.set_read_timeout(120);
    ok = RunRounds(kinds, client, root / "data", server_podman);
  }
  trainyard::bench::StopServer(server);
  std::system(
      (reg_env + "bash " + (src / "scripts/registry-local.sh").string() + " stop >/dev/null 2>&1")
          .c_str());
  std::system((server_podman + " rmi --all --force >/dev/null 2>&1; " + build_podman +
               " rmi --all --force >/dev/null 2>&1")
                  .c_str());
  fs::remove_all(root);
  if (!ok) return 1;
  PrintTables(o, kinds);
  std::printf("%s\n", ResultRow(o, kinds).dump().c_str());
  return 0;
}
