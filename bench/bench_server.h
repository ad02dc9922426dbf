// What the benchmarks that drive the real `trainyard server` share: starting it on a free port
// (the port is read from its first stdout line, "listening on http://HOST:PORT ..."), stopping
// it, reading its memory from /proc, and summarising samples.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace trainyard::bench {

struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
};

// Runs `argv` (argv[0] = the trainyard binary; add "--port", "0") with `env` ("NAME=VALUE")
// added to the environment. Exits the benchmark with a message if the server does not start.
ServerProcess StartServer(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {});
// SIGTERM, then waits for it to exit.
void StopServer(ServerProcess& server);

// A "VmRSS:"/"VmHWM:" line of /proc/PID/status in MiB; -1 if unreadable.
double ProcStatusMib(pid_t pid, const std::string& field);

// The p-quantile (0..1, nearest rank) of `samples`; -1 when empty.
double Percentile(std::vector<double> samples, double p);

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace trainyard::bench
