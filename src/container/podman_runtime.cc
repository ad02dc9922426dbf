#include "container/podman_runtime.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;

constexpr int kCapSysResource = 24;

std::vector<std::string> Podman(const PodmanOptions& options, std::vector<std::string> args) {
  std::vector<std::string> argv{options.podman};
  argv.insert(argv.end(), options.global_args.begin(), options.global_args.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

struct PodmanInfo {
  std::string oci_runtime;
  std::string cgroup_version;
  bool rootless = false;
};

StatusOr<PodmanInfo> ReadInfo(CommandRunner& runner, const PodmanOptions& options) {
  auto r = runner.Run(Podman(options, {"info", "--format", "json"}), options.command_timeout);
  std::string why;
  if (!r.ok()) {
    why = r.status().message();
  } else if (r->exit_code != 0) {
    why = "`podman info` exited with " + std::to_string(r->exit_code) + ": " +
          LastNonEmptyLine(r->err);
  }
  if (!why.empty()) {
    return FailedPreconditionError(
        "podman is not usable: " + why +
        "; install it with `apt-get install podman runc` (scripts/install-deps.sh --test), or run "
        "jobs with imageUri: local (host commands) on this server");
  }
  try {
    auto info = nlohmann::json::parse(r->out);
    const auto& host = info.at("host");
    PodmanInfo out;
    out.oci_runtime = host.at("ociRuntime").value("name", "");
    out.cgroup_version = host.value("cgroupVersion", "");
    out.rootless = host.at("security").value("rootless", false);
    return out;
  } catch (const nlohmann::json::exception& e) {
    return FailedPreconditionError(std::string("cannot read `podman info --format json`: ") +
                                   e.what());
  }
}

}  // namespace

HostLimits HostLimits::Current() {
  HostLimits limits;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) limits.nofile_hard = rl.rlim_max;
  if (::getrlimit(RLIMIT_NPROC, &rl) == 0) limits.nproc_hard = rl.rlim_max;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("CapEff:")) {
      uint64_t caps = std::stoull(line.substr(7), nullptr, 16);
      limits.cap_sys_resource = (caps >> kCapSysResource) & 1;
    }
  }
  return limits;
}

std::vector<std::string> FittingUlimits(const HostLimits& limits) {
  if (limits.cap_sys_resource) return {};
  uint64_t nofile = std::min<uint64_t>(limits.nofile_hard, 1048576);
  uint64_t nproc = std::min<uint64_t>(limits.nproc_hard, 32768);
  return {"nofile=" + std::to_string(nofile) + ":" + std::to_string(nofile),
          "nproc=" + std::to_string(nproc) + ":" + std::to_string(nproc)};
}

Status MakeProbeRootfs(CommandRunner& runner, const fs::path& dir) {
  auto ldd = runner.Run({"ldd", "/bin/true"}, std::chrono::seconds(10));
  if (!ldd.ok()) return ldd.status();
  std::vector<fs::path> files{"/bin/true"};
  std::istringstream in(ldd->out);
  for (std::string token; in >> token;) {
    if (token.starts_with("/")) files.push_back(token);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const fs::path& file : files) {
    fs::path target = file == "/bin/true" ? dir / "true" : dir / file.relative_path();
    fs::create_directories(target.parent_path(), ec);
    fs::copy_file(file, target, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return UnavailableError("cannot build the podman probe root filesystem: copying " +
                              file.string() + " to " + target.string() + ": " + ec.message());
    }
  }
  return Status::Ok();
}

StatusOr<PodmanRuntime> DetectPodmanRuntime(CommandRunner& runner, const PodmanOptions& options,
                                            const HostLimits& limits,
                                            const fs::path& probe_rootfs) {
  TY_ASSIGN_OR_RETURN(PodmanInfo info, ReadInfo(runner, options));
  std::vector<std::string> ulimits = FittingUlimits(limits);
  std::vector<std::string> candidates{""};
  if (info.oci_runtime != "runc") candidates.push_back("runc");
  std::string tried;
  for (const std::string& runtime : candidates) {
    std::vector<std::string> args{"run", "--rm", "--network", "none"};
    if (!runtime.empty()) args.insert(args.end(), {"--runtime", runtime});
    for (const auto& u : ulimits) args.insert(args.end(), {"--ulimit", u});
    args.insert(args.end(), {"--rootfs", probe_rootfs.string(), "/true"});
    auto r = runner.Run(Podman(options, args), options.command_timeout);
    std::string name = runtime.empty() ? info.oci_runtime + " (podman's default)" : runtime;
    if (r.ok() && r->exit_code == 0) {
      PodmanRuntime out{runtime, ulimits, info.rootless, ""};
      out.summary = "podman runtime " + (runtime.empty() ? info.oci_runtime : runtime) +
                    ", cgroups " + info.cgroup_version +
                    (info.rootless ? ", rootless" : ", rootful");
      for (const auto& u : ulimits) out.summary += ", --ulimit " + u;
      return out;
    }
    tried += "\n  " + name + ": " +
             (r.ok() ? "exit " + std::to_string(r->exit_code) + ": " + LastNonEmptyLine(r->err)
                     : r.status().message());
  }
  std::string nofile = std::to_string(std::min<uint64_t>(limits.nofile_hard, 1048576));
  std::string nproc = std::to_string(std::min<uint64_t>(limits.nproc_hard, 32768));
  return FailedPreconditionError(
      "podman cannot start containers on this host (cgroups " + info.cgroup_version + ", " +
      (info.rootless ? "rootless" : "rootful") + "); tried:" + tried +
      "\nConfigure: install runc (`apt-get install runc`; crun does not support hybrid cgroup "
      "v1/v2 hosts) and keep container rlimits at or below this process's hard limits (nofile " +
      nofile + ", nproc " + nproc +
      "): in /etc/containers/containers.conf set [engine] runtime = " +
      "\"runc\" and [containers] default_ulimits = [\"nofile=" + nofile + ":" + nofile +
      "\", \"nproc=" + nproc + ":" + nproc + "\"], or give the server CAP_SYS_RESOURCE");
}

StatusOr<PodmanRuntime> DetectPodmanRuntime(CommandRunner& runner, const PodmanOptions& options) {
  char tmpl[] = "/tmp/trainyard-podman-probe-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return UnavailableError("mkdtemp for the podman probe failed");
  fs::path dir(tmpl);
  Status made = MakeProbeRootfs(runner, dir);
  StatusOr<PodmanRuntime> out =
      made.ok() ? DetectPodmanRuntime(runner, options, HostLimits::Current(), dir)
                : StatusOr<PodmanRuntime>(made);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

}  // namespace trainyard::container
