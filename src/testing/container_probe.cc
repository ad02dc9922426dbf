#include "testing/container_probe.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>

#include "container/podman_runtime.h"
#include "testing/test_util.h"

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;

bool OnPath(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// The last non-empty line of podman's stderr: the error itself, without its progress lines.
std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

std::string Probe() {
  for (const char* program : {"podman", "runc"}) {
    if (!OnPath(program)) return std::string(program) + " is not installed";
  }
  if (!fs::exists("/bin/busybox")) return "busybox-static is not installed";
  char tmpl[] = "/tmp/trainyard-container-probe-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return "cannot create a temporary directory";
  const fs::path dir = tmpl;
  fs::create_directories(dir / "rootfs" / "bin");
  fs::copy_file("/bin/busybox", dir / "rootfs" / "bin" / "busybox");
  const std::vector<std::string> podman = {"podman", "--root", (dir / "storage").string(),
                                           "--runroot", (dir / "run").string()};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), podman.begin(), podman.end());
    return RunProcess(args);
  };
  std::string problem;
  ProcessResult tar = RunProcess(
      {"tar", "-C", (dir / "rootfs").string(), "-cf", (dir / "rootfs.tar").string(), "."});
  if (tar.exit_code != 0) problem = "tar: " + LastLine(tar.err);
  if (problem.empty()) {
    ProcessResult import = run({"import", (dir / "rootfs.tar").string(), "localhost/probe:1"});
    if (import.exit_code != 0) problem = "podman import: " + LastLine(import.err);
  }
  if (problem.empty()) {
    // The rlimits the product's containers get (container::FittingUlimits): podman's defaults
    // exceed the hard limits of a server without CAP_SYS_RESOURCE, and runc then refuses them.
    std::vector<std::string> args{"run", "--rm"};
    for (const std::string& u : container::FittingUlimits(container::HostLimits::Current())) {
      args.insert(args.end(), {"--ulimit", u});
    }
    args.insert(args.end(), {"localhost/probe:1", "/bin/busybox", "true"});
    ProcessResult start = run(args);
    if (start.exit_code != 0) {
      problem = "podman run of a trivial container exits " + std::to_string(start.exit_code) +
                ": " + LastLine(start.err);
    }
  }
  run({"rmi", "--all", "--force"});
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return problem;
}

}  // namespace

std::string ContainerHostProblem() {
  static const std::string problem = Probe();
  return problem;
}

bool ContainersRequired() {
  const char* v = std::getenv("TRAINYARD_REQUIRE_CONTAINERS");
  return v != nullptr && std::string(v) == "1";
}

std::string ContainersRequiredFailure(const std::string& problem) {
  return "TRAINYARD_REQUIRE_CONTAINERS=1, but this host cannot start a container: " + problem;
}

}  // namespace trainyard::testing
