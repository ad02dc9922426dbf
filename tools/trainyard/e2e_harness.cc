#include "e2e_harness.h"

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace trainyard::e2e {

bool HaveLocalExecutor() {
#ifdef TRAINYARD_HAVE_LOCAL_EXECUTOR
  return true;
#else
  return false;
#endif
}

std::string DefaultExecutor() { return HaveLocalExecutor() ? "local" : "fake"; }

std::string SlurmSkipReason() {
  auto sinfo = testing::RunProcess({"sinfo", "-h", "-o", "%T"});
  if (sinfo.exit_code == 0 && sinfo.out.find("idle") != std::string::npos) return "";
  return "no Slurm cluster with an idle node; start one with: bash scripts/slurm-local.sh start "
         "--nodes 2";
}

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::filesystem::path& data_dir,
                                                    const std::vector<std::string>& extra_args,
                                                    std::string* error,
                                                    const std::vector<std::string>& extra_env,
                                                    bool allow_root_replicas) {
  auto server = std::unique_ptr<ServerProcess>(new ServerProcess());
  std::filesystem::create_directories(data_dir);
  server->stderr_path_ = data_dir.parent_path() / (data_dir.filename().string() + ".server.err");
  std::vector<std::string> argv = {testing::ToolPath("trainyard").string(),
                                   "server",
                                   "--port",
                                   "0",
                                   "--data-dir",
                                   data_dir.string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  if (allow_root_replicas && ::geteuid() == 0) argv.push_back("--allow-root-replicas");
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return nullptr;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    int err = ::open(server->stderr_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err >= 0) ::dup2(err, 2);
    for (const auto& kv : extra_env) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(out[1]);
  server->pid_ = pid;
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);  // the server's later stdout writes fail harmlessly (SIGPIPE ignored)
  line = line.substr(0, line.find('\n'));
  size_t colon = line.rfind(':');
  if (line.find("listening on") == std::string::npos || colon == std::string::npos) {
    *error = "server did not start: stdout '" + line + "', stderr '" + server->Stderr() + "'";
    server->Kill(SIGKILL);
    return nullptr;
  }
  server->port_ = std::atoi(line.c_str() + colon + 1);
  return server;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill(SIGTERM);
}

void ServerProcess::Kill(int sig) {
  if (pid_ <= 0) return;
  ::kill(pid_, sig);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void ServerProcess::Signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::string ServerProcess::Stderr() const {
  try {
    return testing::ReadFileOrDie(stderr_path_);
  } catch (...) {
    return "";
  }
}

HttpResult Http(int port, const std::string& method, const std::string& path,
                const std::string& body) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  client.set_tcp_nodelay(true);
  httplib::Result r = method == "POST"     ? client.Post(path, body, "application/json")
                      : method == "PATCH"  ? client.Patch(path, body, "application/json")
                      : method == "DELETE" ? client.Delete(path)
                                           : client.Get(path);
  HttpResult out;
  if (!r) return out;
  out.status = r->status;
  out.body = nlohmann::json::parse(r->body, nullptr, false);
  return out;
}

testing::ProcessResult Cli(const std::string& endpoint, const std::vector<std::string>& args,
                           const std::vector<std::string>& extra_env) {
  std::vector<std::string> argv = {testing::ToolPath("trainyard").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"TRAINYARD_ENDPOINT=" + endpoint};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return testing::RunProcess(argv, "", env);
}

namespace {

// Removes the (empty) cgroups the local executor made for `job_ids` (named trainyard-<job>-...,
// local_executor/cgroup_limits.h): a replica killed with its supervisor leaves them behind.
void RemoveReplicaCgroups(const std::vector<std::string>& job_ids) {
  namespace fs = std::filesystem;
  if (job_ids.empty()) return;
  std::error_code ec;
  std::vector<fs::path> found;
  for (auto it = fs::recursive_directory_iterator("/sys/fs/cgroup", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 4 || !it->is_directory(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string name = it->path().filename().string();
    if (!name.starts_with("trainyard-")) continue;
    it.disable_recursion_pending();
    for (const std::string& id : job_ids) {
      if (name.starts_with("trainyard-" + id + "-")) found.push_back(it->path());
    }
  }
  // The killed processes leave their cgroups a moment after SIGKILL.
  for (int attempt = 0; attempt < 20 && !found.empty(); ++attempt) {
    std::erase_if(found,
                  [](const fs::path& p) { return ::rmdir(p.c_str()) == 0 || errno == ENOENT; });
    if (!found.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

void EndReplicas(const std::filesystem::path& data_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> job_ids;
  for (const auto& job : fs::directory_iterator(data_dir / "jobs", ec)) {
    job_ids.push_back(job.path().filename().string());
    for (const auto& task : fs::directory_iterator(job.path() / "replicas", ec)) {
      for (const auto& file : fs::directory_iterator(task.path(), ec)) {
        const fs::path pid_file = file.path();
        if (pid_file.extension() != ".pid") continue;
        if (fs::exists(fs::path(pid_file).replace_extension(".status"))) continue;
        nlohmann::json replica = nlohmann::json::parse(testing::ReadFileOrDie(pid_file), nullptr,
                                                       /*allow_exceptions=*/false);
        if (!replica.is_object() || !replica["pid"].is_number_integer()) continue;
        const pid_t pid = replica["pid"].get<pid_t>();
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), {});
        const size_t paren = text.rfind(')');
        if (paren == std::string::npos) continue;
        std::istringstream fields(text.substr(paren + 1));
        std::string field;
        for (int i = 0; i < 20 && fields >> field; ++i) {
        }
        if (field == std::to_string(replica.value("start_ticks", int64_t{-1}))) {
          ::kill(-pid, SIGKILL);
        }
      }
    }
  }
  RemoveReplicaCgroups(job_ids);
}

nlohmann::json WaitForJob(int port, const std::string& name, std::vector<std::string> states,
                          int timeout_s) {
  if (states.empty()) {
    states = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"};
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  nlohmann::json job;
  while (std::chrono::steady_clock::now() < deadline) {
    HttpResult r = Http(port, "GET", "/v1/" + name);
    if (r.status == 200) {
      job = r.body;
      for (const auto& s : states) {
        if (job.value("state", "") == s) return job;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return job;
}

}  // namespace trainyard::e2e
