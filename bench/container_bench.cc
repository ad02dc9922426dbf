// container_bench: how long a replica takes from "start" to its first line of output, as a host
// process and as a podman container of a warm (already local) image.
//
//   host process     posix_spawn(/bin/busybox echo ready) -> first stdout byte
//   podman run       `podman run --rm IMAGE echo ready` (attached) -> first stdout byte
//   engine detached  PodmanEngine::Run (podman run --detach) + FollowLogs -> first byte in the
//                    replica's log file: the path an executor takes
//
// The image is busybox-static imported FROM scratch into private storage under /tmp, so the
// numbers include no pull. Prints a table and one JSON row.
//   container_bench [--iterations N]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "container/podman_engine.h"

namespace fs = std::filesystem;
using trainyard::CommandRunner;
using trainyard::container::ContainerSpec;
using trainyard::container::PodmanEngine;
using trainyard::container::PodmanOptions;
using trainyard::container::PodmanRuntime;
using Clock = std::chrono::steady_clock;

extern char** environ;

namespace {

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// Spawns argv with stdout on a pipe; returns ms until its first byte, then waits for the exit.
double FirstOutputMs(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  auto t0 = Clock::now();
  int rc = ::posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return -1;
  }
  char c;
  ssize_t got = ::read(fds[0], &c, 1);
  double ms = Ms(t0, Clock::now());
  while (::read(fds[0], &c, 1) > 0) {
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return got == 1 ? ms : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 20;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--iterations") iterations = std::max(1, std::atoi(argv[i + 1]));
  }
  if (std::system("command -v podman >/dev/null && command -v runc >/dev/null") != 0 ||
      !fs::exists("/bin/busybox")) {
    std::cerr << "container_bench needs podman, runc and busybox-static\n";
    return 2;
  }
  char tmpl[] = "/tmp/trainyard-container-bench-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  PodmanOptions options;
  options.global_args = {"--root", (dir / "storage").string(), "--runroot", (dir / "run").string()};
  auto runtime = trainyard::container::DetectPodmanRuntime(CommandRunner::Real(), options);
  if (!runtime.ok()) {
    std::cerr << runtime.status() << "\n";
    return 1;
  }
  std::string podman =
      "podman --root " + (dir / "storage").string() + " --runroot " + (dir / "run").string();
  const std::string image = "localhost/trainyard-bench-busybox:1";
  std::string setup = "mkdir -p " + (dir / "rootfs/bin").string() + " && cp /bin/busybox " +
                      (dir / "rootfs/bin").string() + " && ln -s busybox " +
                      (dir / "rootfs/bin/echo").string() + " && ln -s busybox " +
                      (dir / "rootfs/bin/sh").string() + " && tar -C " + (dir / "rootfs").string() +
                      " -cf " + (dir / "rootfs.tar").string() + " . && " + podman +
                      " import --change 'ENV PATH=/bin' " + (dir / "rootfs.tar").string() + " " +
                      image + " >/dev/null";
  if (std::system(setup.c_str()) != 0) {
    std::cerr << "cannot build the bench image\n";
    return 1;
  }
  std::vector<std::string> run_argv{"podman",
                                    "--root",
                                    (dir / "storage").string(),
                                    "--runroot",
                                    (dir / "run").string(),
                                    "run",
                                    "--rm",
                                    "--network",
                                    "host"};
  if (!runtime->runtime.empty()) run_argv.insert(run_argv.end(), {"--runtime", runtime->runtime});
  for (const auto& u : runtime->ulimits) run_argv.insert(run_argv.end(), {"--ulimit", u});
  run_argv.insert(run_argv.end(), {image, "echo", "ready"});

  PodmanEngine engine(CommandRunner::Real(), options, *runtime);
  std::vector<double> host, attached, detached, run_returned;
  FirstOutputMs(run_argv);  // warm podman's own caches once
  for (int i = 0; i < iterations; ++i) {
    host.push_back(FirstOutputMs({"/bin/busybox", "echo", "ready"}));
    attached.push_back(FirstOutputMs(run_argv));
    ContainerSpec spec;
    spec.name = trainyard::container::ContainerName("bench", 0, i);
    spec.job_id = "bench";
    spec.image = image;
    spec.command = std::vector<std::string>{"echo", "ready"};
    fs::path log = dir / (spec.name + ".log");
    auto t0 = Clock::now();
    if (!engine.Run(spec).ok()) return 1;
    run_returned.push_back(Ms(t0, Clock::now()));
    auto follower = engine.FollowLogs(spec.name, log, "");
    if (!follower.ok()) return 1;
    while (!fs::exists(log) || fs::file_size(log) == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    detached.push_back(Ms(t0, Clock::now()));
    (*follower)->Wait(std::chrono::seconds(30));
    (void)engine.Remove(spec.name);
  }
  std::system((podman + " rm --all --force --time 0 >/dev/null 2>&1; " + podman +
               " rmi --all --force >/dev/null 2>&1")
                  .c_str());
  fs::remove_all(dir);

  std::printf("container_bench: %d iterations, %s\n", iterations, runtime->summary.c_str());
  std::printf("  %-36s %9s %9s\n", "start -> first output", "p50 ms", "p90 ms");
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-36s %9.1f %9.1f\n", name, Percentile(v, 0.5), Percentile(v, 0.9));
  };
  row("host process (posix_spawn)", host);
  row("podman run (attached)", attached);
  row("engine: podman run --detach returns", run_returned);
  row("engine: first byte in replica log", detached);
  char hostname[256] = "";
  ::gethostname(hostname, sizeof hostname);
  nlohmann::json out = {{"bench", "container"},
                        {"machine", hostname},
                        {"cores", std::thread::hardware_concurrency()},
                        {"iterations", iterations},
                        {"runtime", runtime->summary},
                        {"host_first_output_p50_ms", Percentile(host, 0.5)},
                        {"podman_run_first_output_p50_ms", Percentile(attached, 0.5)},
                        {"podman_run_first_output_p90_ms", Percentile(attached, 0.9)},
                        {"engine_run_returned_p50_ms", Percentile(run_returned, 0.5)},
                        {"engine_first_log_byte_p50_ms", Percentile(detached, 0.5)},
                        {"engine_first_log_byte_p90_ms", Percentile(detached, 0.9)}};
  std::cout << out.dump() << "\n";
  return 0;
}
