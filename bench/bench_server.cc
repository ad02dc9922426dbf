#include "bench_server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace trainyard::bench {

ServerProcess StartServer(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env) {
  int out[2];
  if (::pipe(out) != 0) {
    std::cerr << "pipe failed\n";
    std::exit(1);
  }
  std::vector<std::string> args_copy = argv, env_copy = env;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    for (auto& e : env_copy) ::putenv(e.data());
    std::vector<char*> args;
    for (auto& a : args_copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(out[1]);
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  const size_t colon = line.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "server did not start (" << argv[0] << "): " << line << "\n";
    std::exit(1);
  }
  return {pid, std::atoi(line.c_str() + colon + 1)};
}

void StopServer(ServerProcess& server) {
  if (server.pid <= 0) return;
  ::kill(server.pid, SIGTERM);
  ::waitpid(server.pid, nullptr, 0);
  server.pid = -1;
}

double ProcStatusMib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + field.size()) / 1024.0;
  }
  return -1;
}

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return -1;
  std::sort(samples.begin(), samples.end());
  const size_t i = static_cast<size_t>(p * static_cast<double>(samples.size() - 1) + 0.5);
  return samples[std::min(i, samples.size() - 1)];
}

}  // namespace trainyard::bench
