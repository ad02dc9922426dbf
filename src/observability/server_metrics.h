// ServerMetrics: what `trainyard server` exposes at GET /metrics (Prometheus text format; names
// in docs/console.md#prometheus-metrics).
//
// Finished jobs and their replica restarts are counted at the event: JobEnded, which the job
// controller calls once when a job reaches a terminal state (JobControllerOptions::on_job_end),
// so a job that crash-loops and fails between two polls is counted with every restart. Gauges
// (jobs by state, queue, allocations) come from polling the store's unfinished jobs (Collect(): at
// every scrape and, with StartPolling, every interval in between), which also counts, once, a job
// that left the unfinished set without the event (ended under another server process); the
// start-latency histogram counts the starts a poll or the event saw. HTTP figures come from
// CountRequest, called by the HTTP server for every exchange.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>

#include "common/status.h"
#include "common/time.h"
#include "observability/prometheus_text.h"
#include "spec/custom_job.h"
#include "store/job_store.h"

namespace trainyard::observability {

// What one replica of a machine spec occupies.
struct ReplicaResources {
  int cpus = 0;
  int gpus = 0;
  std::string gpu_type;  // the acceleratorType ("" without GPUs)
};
using ResourcesFn = std::function<ReplicaResources(const spec::MachineSpec&)>;
using Clock = WallClock;  // common/time.h

// The route template of a request path, for the `route` label (bounded cardinality): ids become
// {id}, the project and location {p} and {l}; unknown paths are "other".
std::string RouteOf(std::string_view path);

class ServerMetrics {
 public:
  // `store` must outlive this object. `resources` may be null (CPUs/GPUs then come only from
  // acceleratorCount); `clock` null = the system clock.
  ServerMetrics(store::JobStore* store, ResourcesFn resources, Clock clock = nullptr);
  ~ServerMetrics();

  void CountRequest(std::string_view method, std::string_view path, int status);

  // `job` (terminal) ended: counts it in trainyard_jobs_finished_total, with its restarts and
  // start latency if not seen yet. Once per job name; later calls and polls do not count it again.
  void JobEnded(const spec::CustomJob& job);

  // Polls the store once and updates the job figures. The store's error when it fails (the
  // previous figures stay).
  Status Collect();

  // Collect(), then the full exposition text. A failed Collect is reported in
  // trainyard_metrics_collect_errors_total and the last good figures are served.
  std::string Render();

  // Calls Collect every `interval` on a background thread until StopPolling or destruction.
  void StartPolling(std::chrono::milliseconds interval);
  void StopPolling();

 private:
  void Observe(const spec::CustomJob& job);
  void Finish(const std::string& name);

  store::JobStore* store_;
  ResourcesFn resources_;
  Clock clock_;

  std::mutex mu_;
  // HTTP: (method, route, code) -> count.
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  // Jobs.
  std::map<std::string, spec::JobState> unfinished_;  // name -> state at the last poll
  std::map<std::string, int> restarts_seen_;          // name -> replica restarts counted
  // Jobs counted as finished (name -> when), which a poll may still list as unfinished (a
  // snapshot taken before the end, also by a concurrent Collect): skipped by Collect, forgotten a
  // minute after a poll no longer lists them.
  std::map<std::string, TimePoint> counted_;
  std::set<std::string> started_seen_;        // names whose start latency is counted
  std::map<std::string, uint64_t> finished_;  // terminal state name -> count
  uint64_t restarts_total_ = 0;
  uint64_t collect_errors_ = 0;
  Histogram start_latency_;
  double oldest_wait_seconds_ = 0;
  int queue_length_ = 0;
  std::map<std::string, int> allocated_gpus_;  // gpu type -> count
  int allocated_cpus_ = 0;

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  bool stop_polling_ = false;
  std::thread poller_;
};

}  // namespace trainyard::observability
