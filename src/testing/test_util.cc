#include "testing/test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace trainyard::testing {
namespace fs = std::filesystem;
namespace {

// argv and the inherited environment plus `extra_env`, as the NULL-terminated arrays execvpe
// takes (built before fork: the child must not allocate).
struct ExecArgs {
  ExecArgs(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env)
      : argv_strings(argv) {
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    for (const auto& kv : extra_env) env_strings.push_back(kv);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    for (auto& s : argv_strings) args.push_back(s.data());
    args.push_back(nullptr);
  }
  std::vector<std::string> argv_strings, env_strings;
  std::vector<char*> args, envp;
};

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& stdin_data,
                         const std::vector<std::string>& extra_env) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  ExecArgs exec(argv, extra_env);

  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execvpe(exec.args[0], exec.args.data(), exec.envp.data());
    std::fprintf(stderr, "exec %s: %s\n", exec.args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::signal(SIGPIPE, SIG_IGN);

  ProcessResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  // Non-blocking so a child that fills its stdout pipe before reading all of stdin cannot
  // deadlock us inside write(); poll() tells when each side can move.
  ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  if (stdin_data.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out_pipe[0], POLLIN, 0});
    if (err_open) fds.push_back({err_pipe[0], POLLIN, 0});
    if (in_fd >= 0) fds.push_back({in_fd, POLLOUT, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (const auto& p : fds) {
      if (!p.revents) continue;
      if (p.fd == in_fd) {
        ssize_t n = ::write(in_fd, stdin_data.data() + written, stdin_data.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        if (p.fd == out_pipe[0])
          out_open = false;
        else
          err_open = false;
        continue;
      }
      (p.fd == out_pipe[0] ? result.out : result.err).append(buf, static_cast<size_t>(n));
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

BackgroundProcess StartProcess(const std::vector<std::string>& argv,
                               const std::vector<std::string>& extra_env, const fs::path& out,
                               const fs::path& err) {
  ExecArgs exec(argv, extra_env);
  BackgroundProcess process{-1, out, err};
  process.pid = ::fork();
  if (process.pid == 0) {
    int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0) ::_exit(126);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execvpe(exec.args[0], exec.args.data(), exec.envp.data());
    std::fprintf(stderr, "exec %s: %s\n", exec.args[0], std::strerror(errno));
    ::_exit(127);
  }
  return process;
}

int WaitProcess(const BackgroundProcess& process, double timeout_s) {
  if (process.pid <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(process.pid, &status, WNOHANG);
    if (r == process.pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(process.pid, SIGKILL);
      ::waitpid(process.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool WaitForText(const BackgroundProcess& process, const fs::path& path, const std::string& needle,
                 double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    if (content.str().find(needle) != std::string::npos) return true;
    // Ended without printing it? (kill 0 only probes; a zombie still counts as alive, so also
    // look at /proc's state.)
    std::ifstream stat("/proc/" + std::to_string(process.pid) + "/stat");
    std::string stat_line;
    std::getline(stat, stat_line);
    const size_t paren = stat_line.rfind(')');
    if (stat_line.empty() || (paren != std::string::npos && paren + 2 < stat_line.size() &&
                              stat_line[paren + 2] == 'Z')) {
      std::ifstream again(path, std::ios::binary);
      std::stringstream last;
      last << again.rdbuf();
      return last.str().find(needle) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int FreeTcpPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

namespace {

// Removes the per-process roots that processes no longer running left behind (a crashed or
// killed test binary never cleans up after itself).
void PruneDeadProcessRoots(const fs::path& user_root) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(user_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // still running
    fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

fs::path MakeTestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  // Each process gets its own root: ctest may run the same test binary twice at once (one
  // test per CTest entry, or two checkouts on one machine), and a shared <Suite.Test> dir would
  // be deleted by one run while the other's replicas write into it.
  const fs::path user_root =
      fs::temp_directory_path() / ("trainyard_test_" + std::to_string(::getuid()));
  static const bool pruned = [&] {
    PruneDeadProcessRoots(user_root);
    return true;
  }();
  (void)pruned;
  fs::path dir = user_root / std::to_string(::getpid()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path ToolPath(const std::string& name) {
  const char* bin = std::getenv("TRAINYARD_BINARY_DIR");
  fs::path root = bin ? fs::path(bin) : fs::path(TRAINYARD_BINARY_DIR);
  return root / "tools" / name;
}

ProcessResult RunVenvPython(const std::vector<std::string>& args, const std::string& stdin_data,
                            const std::vector<std::string>& extra_env) {
  std::vector<std::string> argv = {"bash", SourcePath("scripts/venv-python.sh").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, stdin_data, extra_env);
}

fs::path SourcePath(const std::string& relative) {
  const char* src = std::getenv("TRAINYARD_SOURCE_DIR");
  fs::path root = src ? fs::path(src) : fs::path(TRAINYARD_SOURCE_DIR);
  return root / relative;
}

std::string ReadFileOrDie(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileOrDie(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace trainyard::testing
