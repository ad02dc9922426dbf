// http_load_bench: /healthz and create latency while many clients wait or sit idle (issue #46
// item 4). An ApiServer runs in-process (fake executor, memory store: the transport is what is
// measured, not the store); against it:
//   --streams N   clients long-polling GET .../customJobs/{id}:logs?waitSeconds=20 in a loop
//   --idle N      keep-alive connections that made one request and stay idle; one the server
//                 closes (--keep-alive-seconds) is reopened at once, so N are always there
//   --clients N   clients creating jobs (--creates each), on keep-alive connections
//   a prober      GET /healthz on a new connection every 5 ms, as a load balancer would
// Prints p50/p99 of /healthz and of creates, and a JSON row. The server's own limits are flags
// (--http-threads, --max-long-polls, --keep-alive-seconds); `--http-threads 32
// --max-long-polls 24` approximates the server before issue #46 (32 fixed threads).
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/tuning_job_controller.h"
// clang-format off
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <httplib.h>
// clang-format on

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>

#include "bench_server.h"
#include "controller/operation_controller.h"
#include "executor/fake_executor.h"
#include "store/memory_job_store.h"

namespace {

using nlohmann::json;
using trainyard::bench::Percentile;
using Clock = std::chrono::steady_clock;

const char* kTrivialJob = R"({"displayName":"bench","jobSpec":{"workerPoolSpecs":[
  {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
   "containerSpec":{"imageUri":"local","command":["true"]}}]}})";
const char* kJobs = "/v1/projects/bench/locations/local/customJobs";

int Arg(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::stoi(argv[i + 1]);
  }
  return fallback;
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A connection that sends GET /healthz and reads the answer; -1 when it could not.
int OpenIdle(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  char buf[4096];
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0 ||
      ::recv(fd, buf, sizeof(buf), 0) <= 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Keeps `n` idle keep-alive connections open until `stop`, reopening those the server closes.
void HoldIdle(int port, int n, const std::atomic<bool>& stop) {
  std::vector<pollfd> fds(n);
  for (auto& p : fds) p = {OpenIdle(port), POLLIN, 0};
  while (!stop) {
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (auto& p : fds) {
      if (p.revents == 0) continue;
      ::close(p.fd);  // the server closed it (or sent something unasked): reopen
      p = {OpenIdle(port), POLLIN, 0};
    }
  }
  for (auto& p : fds) ::close(p.fd);
}

void Stream(int port, const std::string& path, const std::atomic<bool>& stop) {
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_read_timeout(120, 0);
  while (!stop) {
    if (!client.Get(path)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

struct Load {
  int streams = 200;
  int idle = 200;
  int clients = 8;
  int creates = 500;  // per client
};

struct Figures {
  trainyard::api::HttpLoad settled;  // the server once the streams and idle connections are on
  std::vector<double> healthz_ms;    // -1: failed
  std::vector<double> create_ms;
  double create_seconds = 0;
  int create_failures = 0;
};

// /healthz on a new connection every 5 ms until `stop`.
std::vector<double> Probe(int port, const std::atomic<bool>& stop) {
  std::vector<double> ms;
  while (!stop) {
    httplib::Client probe("127.0.0.1", port);
    probe.set_read_timeout(120, 0);
    const auto start = Clock::now();
    auto r = probe.Get("/healthz");
    ms.push_back(r && r->status == 200 ? MsSince(start) : -1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ms;
}

// `creates` jobs on one keep-alive connection; adds each latency to `ms`, counts failures.
void Create(int port, int creates, std::vector<double>* ms, std::atomic<int>* failures) {
  httplib::Client client("127.0.0.1", port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // else headers and body wait for a delayed ACK (40 ms)
  client.set_read_timeout(120, 0);
  for (int i = 0; i < creates; ++i) {
    const auto t = Clock::now();
    auto r = client.Post(kJobs, kTrivialJob, "application/json");
    if (!r || r->status != 200) ++*failures;
    ms->push_back(MsSince(t));
  }
}

// Puts the streams and idle connections on, then times probes and creates under them;
// `end_streams` (ending the job the streams read) lets them finish at the end.
Figures Measure(trainyard::api::ApiServer& server, int port, const std::string& logs,
                const Load& load, const std::function<void()>& end_streams) {
  Figures f;
  std::atomic<bool> stop{false};
  std::vector<std::thread> background;
  for (int i = 0; i < load.streams; ++i)
    background.emplace_back(Stream, port, logs, std::cref(stop));
  background.emplace_back(HoldIdle, port, load.idle, std::cref(stop));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the load settle
  f.settled = server.load();

  std::atomic<bool> created{false};
  std::thread prober([&] { f.healthz_ms = Probe(port, created); });
  std::vector<std::vector<double>> per_client(load.clients);
  std::atomic<int> failures{0};
  const auto start = Clock::now();
  std::vector<std::thread> creators;
  for (auto& ms : per_client) creators.emplace_back(Create, port, load.creates, &ms, &failures);
  for (auto& t : creators) t.join();
  f.create_seconds = MsSince(start) / 1000;
  created = true;
  prober.join();
  stop = true;
  end_streams();
  for (auto& t : background) t.join();
  for (auto& ms : per_client) f.create_ms.insert(f.create_ms.end(), ms.begin(), ms.end());
  f.create_failures = failures;
  return f;
}

void Report(const trainyard::api::ApiServerOptions& o, const Load& load, const Figures& f) {
  int healthz_failed = 0;
  for (double ms : f.healthz_ms) healthz_failed += ms < 0;
  std::printf(
      "http_load_bench (--http-threads %d --max-long-polls %d --keep-alive-seconds %d; %d log "
      "streams, %d idle keep-alive, %d clients x %d creates)\n"
      "  after 2 s of load: %d threads, %d busy, %d queued, %d long-polls waiting\n"
      "  /healthz p50 / p99 (ms)    %9.2f / %.2f   (%zu probes, %d failed)\n"
      "  create   p50 / p99 (ms)    %9.2f / %.2f   (%.0f creates/s, %d failed)\n",
      o.http_threads, o.max_long_polls, o.keep_alive_seconds, load.streams, load.idle, load.clients,
      load.creates, f.settled.threads, f.settled.busy, f.settled.queued, f.settled.long_polls,
      Percentile(f.healthz_ms, 0.5), Percentile(f.healthz_ms, 0.99), f.healthz_ms.size(),
      healthz_failed, Percentile(f.create_ms, 0.5), Percentile(f.create_ms, 0.99),
      f.create_ms.size() / f.create_seconds, f.create_failures);
  char host[256] = "";
  ::gethostname(host, sizeof host);
  json row = {{"bench", "http_load"},
              {"machine", host},
              {"cores", std::thread::hardware_concurrency()},
              {"http_threads", o.http_threads},
              {"max_long_polls", o.max_long_polls},
              {"keep_alive_seconds", o.keep_alive_seconds},
              {"streams", load.streams},
              {"idle", load.idle},
              {"healthz_p50_ms", Percentile(f.healthz_ms, 0.5)},
              {"healthz_p99_ms", Percentile(f.healthz_ms, 0.99)},
              {"create_p50_ms", Percentile(f.create_ms, 0.5)},
              {"create_p99_ms", Percentile(f.create_ms, 0.99)}};
  std::cout << row.dump() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainyard;
  ::signal(SIGPIPE, SIG_IGN);
  api::ApiServerOptions options;
  options.port = 0;
  options.http_threads = Arg(argc, argv, "--http-threads", options.http_threads);
  options.max_long_polls = Arg(argc, argv, "--max-long-polls", options.max_long_polls);
  options.keep_alive_seconds = Arg(argc, argv, "--keep-alive-seconds", options.keep_alive_seconds);
  Load load;
  load.streams = Arg(argc, argv, "--streams", load.streams);
  load.idle = Arg(argc, argv, "--idle", load.idle);
  load.clients = Arg(argc, argv, "--clients", load.clients);
  load.creates = Arg(argc, argv, "--creates", load.creates);

  const auto dir =
      std::filesystem::temp_directory_path() / ("http_load_bench." + std::to_string(::getpid()));
  store::MemoryJobStore store;
  executor::FakeExecutor executor;
  controller::OperationController operations(&store);
  spec::ImageCatalog images = spec::ImageCatalog::BuiltIn();
  controller::JobController jobs(&store, &executor, &images, nullptr,
                                 controller::JobControllerOptions{dir / "jobs"});
  if (!jobs.Start().ok()) return 1;
  api::ApiServer server(api::ApiControllers{&jobs, nullptr, &operations}, options);
  auto port = server.Bind();
  if (!port.ok()) {
    std::cerr << "http_load_bench: " << port.status() << "\n";
    return 2;
  }
  std::thread serve([&] { server.Serve(); });
  httplib::Client setup("127.0.0.1", *port);
  auto created = setup.Post(kJobs, kTrivialJob, "application/json");
  if (!created || created->status != 200) return 1;
  const std::string job = json::parse(created->body)["name"].get<std::string>();

  const Figures figures = Measure(server, *port, "/v1/" + job + ":logs?waitSeconds=20", load,
                                  [&] { (void)jobs.Cancel(job); });
  server.Stop();
  serve.join();
  std::filesystem::remove_all(dir);
  Report(options, load, figures);
  return 0;
}
