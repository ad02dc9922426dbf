#include "container/podman_probe_cache.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;

// "path:size:mtime" of `program` (a path, or a name looked up in $PATH); "path:-" when missing.
std::string BinaryStamp(const std::string& program) {
  std::string path = program;
  if (program.find('/') == std::string::npos) {
    const char* env = std::getenv("PATH");
    std::string dirs = env ? env : "";
    path.clear();
    for (size_t at = 0; at <= dirs.size();) {
      const size_t end = std::min(dirs.find(':', at), dirs.size());
      const std::string candidate = dirs.substr(at, end - at) + "/" + program;
      if (end > at && ::access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      at = end + 1;
    }
  }
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return program + ":-";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

fs::path PodmanProbeCacheFile() {
  if (const char* set = std::getenv("TRAINYARD_PODMAN_PROBE_CACHE")) return set;
  if (::geteuid() == 0) return "/var/cache/trainyard/podman-runtime.json";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return fs::path(xdg) / "trainyard/podman-runtime.json";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache/trainyard/podman-runtime.json";
  }
  return {};
}

std::string PodmanProbeKey(const PodmanOptions& options, const HostLimits& limits) {
  utsname u{};
  ::uname(&u);
  std::string key = "uid " + std::to_string(::geteuid()) + "; kernel " + u.release + "; nofile " +
                    std::to_string(limits.nofile_hard) + "; nproc " +
                    std::to_string(limits.nproc_hard) + "; podman " + BinaryStamp(options.podman);
  for (const char* runtime : {"runc", "crun", "conmon"}) key += "; " + BinaryStamp(runtime);
  return key;
}

std::optional<PodmanRuntime> LoadPodmanProbe(const fs::path& file, const std::string& key) {
  if (file.empty()) return std::nullopt;
  StatusOr<std::string> text = ReadFile(file);
  if (!text.ok()) return std::nullopt;
  StatusOr<nlohmann::json> j = ParseJson(*text);
  if (!j.ok() || !j->is_object() || (*j)["key"] != key) return std::nullopt;
  try {
    PodmanRuntime r;
    r.runtime = j->at("runtime").get<std::string>();
    r.ulimits = j->at("ulimits").get<std::vector<std::string>>();
    r.rootless = j->at("rootless").get<bool>();
    r.summary = j->at("summary").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void SavePodmanProbe(const fs::path& file, const std::string& key, const PodmanRuntime& runtime) {
  if (file.empty()) return;
  const nlohmann::json j = {{"key", key},
                            {"runtime", runtime.runtime},
                            {"ulimits", runtime.ulimits},
                            {"rootless", runtime.rootless},
                            {"summary", runtime.summary}};
  (void)ReplaceFile(file, j.dump(1) + "\n");
}

}  // namespace trainyard::container
