// ServerMetrics: what `trainyard server` exposes at GET /metrics (Prometheus text format; names
// in docs/console.md#prometheus-metrics).
//
// Finished jobs and their replica restarts are counted at the event: JobEnded, which the job
// controller calls once when a job reaches a terminal state (JobControllerOptions::on_job_end),
// so a job that crash-loops and fails between two polls is counted with every restart (by reason,
// restart_reasons.h). Job gauges (jobs by state, queue, allocations, the longest running job) come
// from polling the store's unfinished jobs (Collect(): at every scrape and, with StartPolling,
// every interval in between), which also counts, once, a job that left the unfinished set without
// the event (ended under another server process); the start-latency histogram counts the starts a
// poll or the event saw. HTTP figures come from CountRequest, called by the HTTP server for every
// exchange.
//
// What may be slow or may block is collected by CollectSystem, on the polling thread only, never
// on a scrape: the volumes (statvfs), the host, every resource kind by state (resource_counts.h)
// and, at most every probe_interval, the executor's reachability probe (which may block for its
// own timeout, e.g. sinfo's). A scrape serves their last values.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"
#include "observability/prometheus_text.h"
#include "observability/resource_counts.h"
#include "observability/restart_reasons.h"
#include "observability/system_gauges.h"
#include "spec/custom_job.h"
#include "store/job_store.h"
#include "store/resource_store.h"
#include "store/tuning_job_store.h"

namespace trainyard::observability {

// What one replica of a machine spec occupies.
struct ReplicaResources {
  int cpus = 0;
  int gpus = 0;
  std::string gpu_type;  // the acceleratorType ("" without GPUs)
  double memory_gib = 0;
};
using ResourcesFn = std::function<ReplicaResources(const spec::MachineSpec&)>;
using Clock = WallClock;  // common/time.h

// The version `trainyard_build_info` reports (the project's version, CMake's PROJECT_VERSION).
std::string_view TrainyardVersion();

// One project's figures for the trainyard_project_* gauges (controller/project_quota.h): what its
// admitted jobs hold and its limits, by resource ("vcpus", "memory_gib", "jobs", and
// "gpus:<acceleratorType>"), and how many of its jobs are held.
struct ProjectFigures {
  std::string project;
  std::map<std::string, double> used;
  std::map<std::string, double> quota;  // only the resources with a limit
  double weight = 1;
  int held_jobs = 0;
  bool paused = false;  // an admin paused the project (trainyard admin drain --project P)
};

// One deployed model's serving figures for the trainyard_serving_* and trainyard_prediction*
// families (serving_proxy/replica_router.h): its replicas, the healthy ones, the requests in
// flight, and the predictions forwarded so far (how many, how many got no answer, their time).
struct ServingFigures {
  std::string endpoint;        // projects/P/locations/L/endpoints/E
  std::string deployed_model;  // its id
  int replicas = 0;
  int healthy = 0;
  int in_flight = 0;
  uint64_t requests = 0;
  uint64_t failed = 0;
  double seconds = 0;
};

struct ServerMetricsOptions {
  ResourcesFn resources;  // null: CPUs/GPUs come only from acceleratorCount, no memory
  Clock clock;            // null: the system clock
  // Counted in trainyard_resources with the custom jobs; null: that store's kinds are left out.
  store::TuningJobStore* tuning_store = nullptr;
  store::ResourceStore* resource_store = nullptr;
  // Volumes whose space is reported: (the `volume` label, e.g. "data_dir", path).
  std::vector<std::pair<std::string, std::filesystem::path>> volumes;
  DiskStatFn disk_stat;  // null: StatDisk (statvfs)
  HostFn host;           // null: RealHost(); the host's gauges are left out when it fails
  // The host runs the replicas (the local executor): its free CPUs and GPUs are reported as the
  // host's minus the allocated ones.
  bool host_runs_replicas = false;
  // trainyard_executor_up{executor=<executor>}: 1 while `executor_probe` answers OK (null: always
  // 1), and the cluster's capacity where it reports one (trainyard_executor_cpus, ..._free_cpus,
  // ..._gpus, ..._memory_bytes, ..._nodes, ..._usable_nodes: Slurm's partition). The probe runs
  // on the polling thread, at most every `probe_interval`.
  std::string executor;
  std::function<StatusOr<std::optional<executor::Executor::ClusterCapacity>>()> executor_probe;
  std::chrono::seconds probe_interval{15};
  // Per-project use and quotas, read at every scrape (cheap: the controller's counters); null:
  // the trainyard_project_* families are left out.
  std::function<std::vector<ProjectFigures>()> projects;
  // Deployed models' serving figures, read at every scrape (the router's counters); null: the
  // serving families are left out.
  std::function<std::vector<ServingFigures>()> serving;
};

// The route template of a request path, for the `route` label (bounded cardinality): ids become
// {id}, the project and location {p} and {l}; unknown paths are "other".
std::string RouteOf(std::string_view path);

class ServerMetrics {
 public:
  // `store` and the options' stores must outlive this object.
  ServerMetrics(store::JobStore* store, ServerMetricsOptions options);
  // Custom jobs and HTTP only: no other kinds, volumes or executor (the host is still read).
  ServerMetrics(store::JobStore* store, ResourcesFn resources, Clock clock = nullptr);
  ~ServerMetrics();

  void CountRequest(std::string_view method, std::string_view path, int status);

  // `job` (terminal) ended: counts it in trainyard_jobs_finished_total, with its restarts and
  // start latency if not seen yet. Once per job name; later calls and polls do not count it again.
  void JobEnded(const spec::CustomJob& job);

  // Polls the store once and updates the job figures. The store's error when it fails (the
  // previous figures stay).
  Status Collect();

  // Reads the volumes, the host and the resource counts, and probes the executor if the last probe
  // is probe_interval old (or there was none). Each source that fails keeps its last figures and
  // is counted in trainyard_metrics_collect_errors_total{source}; the first error is returned.
  // Slow (see the top of this file): the polling thread calls it, Render does not.
  Status CollectSystem();

  // Collect(), then the full exposition text. A failed Collect is reported in
  // trainyard_metrics_collect_errors_total and the last good figures are served.
  std::string Render();

  // Calls CollectSystem at once, then Collect and CollectSystem every `interval` on a background
  // thread until StopPolling or destruction. StopPolling waits for a probe in progress.
  void StartPolling(std::chrono::milliseconds interval);
  void StopPolling();

 private:
  void Observe(const spec::CustomJob& job);
  void Finish(const std::string& name);
  void Allocate(const spec::CustomJob& job, TimePoint now);
  // Caller holds mu_.
  void RenderJobs(PrometheusText& t) const;
  void RenderCapacity(PrometheusText& t) const;
  void RenderProjects(PrometheusText& t) const;
  void RenderServing(PrometheusText& t) const;
  void RenderSystem(PrometheusText& t) const;
  void RenderCluster(PrometheusText& t, const executor::Executor::ClusterCapacity& c) const;
  void RenderHttp(PrometheusText& t) const;

  store::JobStore* store_;
  ServerMetricsOptions options_;
  Clock clock_;

  std::mutex mu_;
  // HTTP: (method, route, code) -> count.
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  // Jobs.
  std::map<std::string, spec::JobState> unfinished_;  // name -> state at the last poll
  // name -> (task -> replica restarts counted)
  std::map<std::string, std::map<std::string, int>> restarts_seen_;
  // Jobs counted as finished (name -> when), which a poll may still list as unfinished (a
  // snapshot taken before the end, also by a concurrent Collect): skipped by Collect, forgotten a
  // minute after a poll no longer lists them.
  std::map<std::string, TimePoint> counted_;
  std::set<std::string> started_seen_;        // names whose start latency is counted
  std::map<std::string, uint64_t> finished_;  // terminal state name -> count
  std::map<RestartReason, uint64_t> restarts_total_;
  std::map<std::string, uint64_t> collect_errors_;  // source -> failed collections
  Histogram start_latency_;
  double oldest_wait_seconds_ = 0;
  int queue_length_ = 0;
  std::map<std::string, int> allocated_gpus_;  // gpu type -> count
  int allocated_cpus_ = 0;
  double allocated_memory_gib_ = 0;
  double longest_running_seconds_ = 0;
  // From CollectSystem.
  std::map<std::string, DiskUsage> disks_;  // volume -> its last reading
  std::optional<HostCapacity> host_;
  std::optional<std::vector<ResourceCount>> resource_counts_;
  std::optional<bool> executor_up_;                             // unset until the first probe
  std::optional<executor::Executor::ClusterCapacity> cluster_;  // from the last good probe
  std::optional<TimePoint> last_probe_;

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  bool stop_polling_ = false;
  std::thread poller_;
};

}  // namespace trainyard::observability
