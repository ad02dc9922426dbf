#include "executor/package_index.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "executor/run_as.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;

// pip's settings as one config file states them: key (dashes, lower case) -> values. A value
// continued on indented lines (find-links often is) adds one value per line.
std::multimap<std::string, std::string> ReadPipConfig(const fs::path& file) {
  std::multimap<std::string, std::string> out;
  std::ifstream in(file);
  std::string line, key;
  while (std::getline(in, line)) {
    const bool continued = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#' || line[start] == ';') continue;
    std::string text = line.substr(start, line.find_last_not_of(" \t\r") - start + 1);
    if (text.front() == '[') {
      key.clear();
      continue;
    }
    if (continued && !key.empty()) {
      out.emplace(key, text);
      continue;
    }
    const size_t eq = text.find_first_of("=:");
    if (eq == std::string::npos) continue;
    key = text.substr(0, eq);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return c == '_' ? '-' : std::tolower(c); });
    std::string value = text.substr(eq + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (!value.empty()) out.emplace(key, value);
  }
  return out;
}

bool IsPassedVariable(const std::string& name) {
  static const std::set<std::string> kNotPassed = {"PIP_CACHE_DIR",  "PIP_CONSTRAINT", "PIP_TARGET",
                                                   "PIP_PREFIX",     "PIP_USER",       "PIP_SRC",
                                                   "PIP_CONFIG_FILE"};
  static const std::set<std::string> kOthers = {"REQUESTS_CA_BUNDLE", "SSL_CERT_FILE",
                                                "SSL_CERT_DIR"};
  if (name.starts_with("PIP_")) return kNotPassed.count(name) == 0;
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  return kOthers.count(name) > 0 || lower == "http_proxy" || lower == "https_proxy" ||
         lower == "no_proxy" || lower == "all_proxy";
}

// Local paths among find-links values: absolute paths and file: URLs, split on whitespace.
std::vector<fs::path> LocalLinks(const std::string& value) {
  std::vector<fs::path> out;
  std::istringstream words(value);
  std::string w;
  while (words >> w) {
    if (w.starts_with("file://")) w = w.substr(7);
    if (w.starts_with("/")) out.emplace_back(w);
  }
  return out;
}

class Collector {
 public:
  explicit Collector(fs::path root) : root_(std::move(root)) {}

  // A host path the container needs at the same path, when it exists here.
  void Mount(const fs::path& path) {
    std::error_code ec;
    const fs::path host = root_ / path.relative_path();
    if (path.is_absolute() && fs::exists(host, ec) && seen_.insert(path).second) {
      access_.read_only.push_back(path);
    }
  }

  // Paths named by a setting: certificates and wheelhouses.
  void MountNamedBy(const std::string& key, const std::string& value) {
    if (key == "cert" || key == "client-cert") Mount(value);
    if (key == "find-links") {
      for (const auto& p : LocalLinks(value)) Mount(p);
    }
  }

  // A config file: mounted, and what it names mounted. False when it is not there.
  bool ConfigFile(const fs::path& path) {
    std::error_code ec;
    const fs::path host = root_ / path.relative_path();
    if (!fs::is_regular_file(host, ec)) return false;
    Mount(path);
    for (const auto& [key, value] : ReadPipConfig(host)) MountNamedBy(key, value);
    return true;
  }

  PackageIndexAccess& access() { return access_; }

 private:
  fs::path root_;
  std::set<fs::path> seen_;
  PackageIndexAccess access_;
};

std::string Get(const EnvMap& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

}  // namespace

PackageIndexAccess HostPackageIndexAccess(const EnvMap& server_env, const fs::path& root) {
  Collector c(root);
  c.ConfigFile("/etc/xdg/pip/pip.conf");
  c.ConfigFile("/etc/pip.conf");
  // The user-level file is the server user's: the container's HOME is not, so it is handed over
  // as PIP_CONFIG_FILE (pip reads that last), unless the server names one itself.
  std::string own = Get(server_env, "PIP_CONFIG_FILE");
  if (own.empty()) {
    const std::string home = Get(server_env, "HOME");
    const std::string xdg = Get(server_env, "XDG_CONFIG_HOME");
    for (const std::string& candidate :
         {xdg.empty() ? (home.empty() ? "" : home + "/.config/pip/pip.conf")
                      : xdg + "/pip/pip.conf",
          home.empty() ? std::string() : home + "/.pip/pip.conf"}) {
      if (!candidate.empty() && c.ConfigFile(candidate)) {
        own = candidate;
        break;
      }
    }
  } else if (!c.ConfigFile(own)) {
    own.clear();
  }
  if (!own.empty()) c.access().env["PIP_CONFIG_FILE"] = own;
  for (const auto& [name, value] : server_env) {
    if (!IsPassedVariable(name)) continue;
    c.access().env[name] = value;
    if (name == "PIP_CERT" || name == "PIP_CLIENT_CERT" || name == "REQUESTS_CA_BUNDLE" ||
        name == "SSL_CERT_FILE" || name == "SSL_CERT_DIR") {
      c.Mount(value);
    }
    if (name == "PIP_FIND_LINKS") c.MountNamedBy("find-links", value);
  }
  return std::move(c.access());
}

StatusOr<fs::path> ProjectPipCache(const fs::path& cache_root, const std::string& job_name,
                                   const std::optional<RunAs>& run_as) {
  std::string project = "default";
  if (job_name.starts_with("projects/")) {
    project = job_name.substr(9, job_name.find('/', 9) - 9);
    for (char& ch : project) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
    }
    if (project.empty()) project = "default";
  }
  const fs::path dir = cache_root / project;
  TY_RETURN_IF_ERROR(MakeReplicaDir(dir, run_as));
  return dir;
}

}  // namespace trainyard::executor
