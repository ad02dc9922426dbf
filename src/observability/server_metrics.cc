#include "observability/server_metrics.h"

#include <algorithm>
#include <vector>

// The project's version, from CMake (src/observability/CMakeLists.txt).
#ifndef TRAINYARD_VERSION
#define TRAINYARD_VERSION "unknown"
#endif

namespace trainyard::observability {
namespace {

using spec::JobState;

constexpr RestartReason kRestartReasons[] = {RestartReason::kExitCode, RestartReason::kSigkill,
                                             RestartReason::kSignal, RestartReason::kUnknown};

double Seconds(std::chrono::system_clock::duration d) {
  return std::max(0.0, std::chrono::duration<double>(d).count());
}

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

bool KnownCollection(std::string_view c) {
  return c == "customJobs" || c == "hyperparameterTuningJobs";
}

std::string_view VerbOf(std::string_view segment) {
  const size_t colon = segment.find(':');
  return colon == std::string_view::npos ? std::string_view() : segment.substr(colon);
}

}  // namespace

std::string RouteOf(std::string_view path) {
  if (path == "/healthz" || path == "/metrics" || path == "/") return std::string(path);
  const std::vector<std::string_view> p = SplitPath(path);
  if (!p.empty() && p[0] == "assets") return "/assets/*";
  // v1 / projects / P / locations / L / collection[:verb] [/ id[:verb]]
  if (p.size() < 6 || p[0] != "v1" || p[1] != "projects" || p[3] != "locations") return "other";
  const std::string_view collection_segment = p[5];
  const std::string_view collection = collection_segment.substr(0, collection_segment.find(':'));
  if (!KnownCollection(collection)) return "other";
  std::string route = "/v1/projects/{p}/locations/{l}/" + std::string(collection);
  if (p.size() == 6) return route + std::string(VerbOf(collection_segment));
  if (p.size() == 7) return route + "/{id}" + std::string(VerbOf(p[6]));
  return "other";
}

std::string_view TrainyardVersion() { return TRAINYARD_VERSION; }

ServerMetrics::ServerMetrics(store::JobStore* store, ServerMetricsOptions options)
    : store_(store),
      options_(std::move(options)),
      clock_(OrSystemClock(options_.clock)),
      start_latency_({0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}) {
  if (!options_.disk_stat) options_.disk_stat = StatDisk;
  if (!options_.host) options_.host = RealHost();
}

ServerMetrics::ServerMetrics(store::JobStore* store, ResourcesFn resources, Clock clock)
    : ServerMetrics(store, ServerMetricsOptions{.resources = std::move(resources),
                                                .clock = std::move(clock)}) {}

ServerMetrics::~ServerMetrics() { StopPolling(); }

void ServerMetrics::CountRequest(std::string_view method, std::string_view path, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{std::string(method), RouteOf(path), status}];
}

// Counts the job's start latency once, and replica restarts it gained since the last poll.
// Caller holds mu_.
void ServerMetrics::Observe(const spec::CustomJob& job) {
  if (job.start_time && job.create_time && started_seen_.insert(job.name).second) {
    start_latency_.Observe(Seconds(*job.start_time - *job.create_time));
  }
  for (const auto& [reason, n] : NewRestarts(job, restarts_seen_[job.name])) {
    restarts_total_[reason] += static_cast<uint64_t>(n);
  }
}

// Adds what a RUNNING or CANCELLING job holds to the allocation figures. Caller holds mu_.
void ServerMetrics::Allocate(const spec::CustomJob& job, TimePoint now) {
  for (const auto& pool : job.job_spec.worker_pool_specs) {
    if (!pool.machine_spec) continue;
    ReplicaResources r;
    if (options_.resources) r = options_.resources(*pool.machine_spec);
    if (r.gpus == 0 && pool.machine_spec->accelerator_count > 0) {
      r.gpus = pool.machine_spec->accelerator_count;
      r.gpu_type = pool.machine_spec->accelerator_type;
    }
    const int replicas = static_cast<int>(pool.replica_count);
    allocated_cpus_ += r.cpus * replicas;
    allocated_memory_gib_ += r.memory_gib * replicas;
    if (r.gpus > 0) allocated_gpus_[r.gpu_type] += r.gpus * replicas;
  }
  if (job.start_time) {
    longest_running_seconds_ = std::max(longest_running_seconds_, Seconds(now - *job.start_time));
  }
}

Status ServerMetrics::Collect() {
  auto jobs = store_->ListUnfinished();
  if (!jobs.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++collect_errors_["jobs"];
    return jobs.status();
  }
  std::vector<std::string> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = clock_();
    std::map<std::string, JobState> current;
    queue_length_ = 0;
    oldest_wait_seconds_ = 0;
    allocated_cpus_ = 0;
    allocated_memory_gib_ = 0;
    allocated_gpus_.clear();
    longest_running_seconds_ = 0;
    std::set<std::string> listed;
    for (const spec::CustomJob& job : *jobs) {
      listed.insert(job.name);
      if (counted_.count(job.name)) continue;  // ended after this snapshot was taken
      current[job.name] = job.state;
      Observe(job);
      if (job.state == JobState::kQueued || job.state == JobState::kPending) {
        ++queue_length_;
        if (job.create_time) {
          oldest_wait_seconds_ = std::max(
              oldest_wait_seconds_, std::chrono::duration<double>(now - *job.create_time).count());
        }
      }
      if (job.state == JobState::kRunning || job.state == JobState::kCancelling) Allocate(job, now);
    }
    for (const auto& [name, state] : unfinished_) {
      if (!current.count(name)) gone.push_back(name);
    }
    unfinished_ = std::move(current);
    std::erase_if(counted_, [&](const auto& entry) {
      return !listed.count(entry.first) && now - entry.second > std::chrono::minutes(1);
    });
  }
  for (const std::string& name : gone) Finish(name);
  return Status::Ok();
}

// A job left the unfinished set: count its terminal state and its last restarts.
void ServerMetrics::Finish(const std::string& name) {
  auto job = store_->Get(name);
  std::lock_guard<std::mutex> lock(mu_);
  // Recorded as counted too: the job controller's JobEnded for this job may still be on its way
  // (the store is written before the controller tells the metrics).
  if (job.ok() && counted_.emplace(name, clock_()).second) {
    Observe(*job);
    ++finished_[std::string(spec::JobStateName(job->state))];
  }
  restarts_seen_.erase(name);
  started_seen_.erase(name);
}

void ServerMetrics::JobEnded(const spec::CustomJob& job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!counted_.emplace(job.name, clock_()).second) return;
  Observe(job);
  ++finished_[std::string(spec::JobStateName(job.state))];
  unfinished_.erase(job.name);
  restarts_seen_.erase(job.name);
  started_seen_.erase(job.name);
}

Status ServerMetrics::CollectSystem() {
  Status first = Status::Ok();
  auto failed = [&](const std::string& source, const Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    ++collect_errors_[source];
    if (first.ok()) first = status;
  };
  for (const auto& [volume, path] : options_.volumes) {
    auto disk = options_.disk_stat(path);
    if (!disk.ok()) {
      failed("disk", disk.status());
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    disks_[volume] = *disk;
  }
  if (auto host = options_.host(); host.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    host_ = *host;
  } else {
    failed("host", host.status());
  }
  if (auto counts = CountResources(store_, options_.tuning_store, options_.resource_store);
      counts.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    resource_counts_ = std::move(*counts);
  } else {
    failed("resources", counts.status());
  }
  if (!options_.executor_probe) return first;
  const TimePoint now = clock_();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (last_probe_ && now - *last_probe_ < options_.probe_interval) return first;
    last_probe_ = now;
  }
  // Without the lock: the probe may block for its timeout while scrapes go on.
  auto probed = options_.executor_probe();
  std::lock_guard<std::mutex> lock(mu_);
  executor_up_ = probed.ok();
  if (probed.ok()) cluster_ = *probed;  // a failed probe keeps the last figures
  return first;
}

std::string ServerMetrics::Render() {
  (void)Collect();
  std::lock_guard<std::mutex> lock(mu_);
  PrometheusText t;
  t.Family("trainyard_build_info", "gauge", "Always 1; the labels say which Trainyard serves.");
  t.Sample("trainyard_build_info", {{"version", std::string(TrainyardVersion())}}, 1);
  RenderJobs(t);
  RenderProjects(t);
  RenderServing(t);
  RenderCapacity(t);
  RenderSystem(t);
  RenderHttp(t);
  return t.text();
}

void ServerMetrics::RenderJobs(PrometheusText& t) const {
  t.Family("trainyard_jobs", "gauge", "Unfinished custom jobs by state (trials included).");
  std::map<std::string, int> by_state;
  for (JobState s :
       {JobState::kQueued, JobState::kPending, JobState::kRunning, JobState::kCancelling}) {
    by_state[std::string(spec::JobStateName(s))] = 0;
  }
  for (const auto& [name, state] : unfinished_) ++by_state[std::string(spec::JobStateName(state))];
  for (const auto& [state, n] : by_state) t.Sample("trainyard_jobs", {{"state", state}}, n);

  t.Family("trainyard_jobs_finished_total", "counter",
           "Custom jobs this server saw reach a terminal state, by state.");
  std::map<std::string, uint64_t> finished = finished_;
  for (JobState s : {JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    finished.emplace(std::string(spec::JobStateName(s)), 0);
  }
  for (const auto& [state, n] : finished) {
    t.Sample("trainyard_jobs_finished_total", {{"state", state}}, static_cast<double>(n));
  }

  t.Family("trainyard_queue_length", "gauge", "Jobs waiting for resources (QUEUED or PENDING).");
  t.Sample("trainyard_queue_length", {}, queue_length_);
  t.Family("trainyard_queue_oldest_wait_seconds", "gauge",
           "Age of the oldest QUEUED or PENDING job (0 when none waits).");
  t.Sample("trainyard_queue_oldest_wait_seconds", {}, oldest_wait_seconds_);
  t.Family("trainyard_longest_running_job_seconds", "gauge",
           "Time since the start of the longest RUNNING or CANCELLING custom job (0 when none).");
  t.Sample("trainyard_longest_running_job_seconds", {}, longest_running_seconds_);
  t.Family("trainyard_job_start_latency_seconds", "histogram",
           "Time from job creation (submit) to RUNNING.");
  t.HistogramSamples("trainyard_job_start_latency_seconds", {}, start_latency_);
  t.Family("trainyard_replica_restarts_total", "counter",
           "Replica restarts after failures or preemption, by the exit before them: exit_code, "
           "sigkill (137: the OOM killer, a memory limit or kill -9), signal, unknown.");
  for (RestartReason reason : kRestartReasons) {
    auto it = restarts_total_.find(reason);
    t.Sample("trainyard_replica_restarts_total",
             {{"reason", std::string(RestartReasonName(reason))}},
             it == restarts_total_.end() ? 0 : static_cast<double>(it->second));
  }
  if (resource_counts_) {
    t.Family("trainyard_resources", "gauge",
             "Stored resources by kind and state, finished ones included (no series: none).");
    for (const ResourceCount& c : *resource_counts_) {
      Labels labels = {{"kind", c.kind}};
      if (!c.state.empty()) labels.emplace_back("state", c.state);
      t.Sample("trainyard_resources", labels, static_cast<double>(c.count));
    }
  }
}

void ServerMetrics::RenderCapacity(PrometheusText& t) const {
  t.Family("trainyard_allocated_cpus", "gauge", "vCPUs of the machine types of running jobs.");
  t.Sample("trainyard_allocated_cpus", {}, allocated_cpus_);
  t.Family("trainyard_allocated_memory_bytes", "gauge",
           "Memory of the machine types of running jobs.");
  t.Sample("trainyard_allocated_memory_bytes", {}, allocated_memory_gib_ * kGib);
  int gpus = 0;
  for (const auto& [type, n] : allocated_gpus_) gpus += n;
  t.Family("trainyard_allocated_gpus", "gauge", "GPUs of running jobs.");
  t.Sample("trainyard_allocated_gpus", {}, gpus);
  t.Family("trainyard_allocated_gpus_by_type", "gauge", "GPUs of running jobs by acceleratorType.");
  for (const auto& [type, n] : allocated_gpus_) {
    t.Sample("trainyard_allocated_gpus_by_type", {{"accelerator_type", type}}, n);
  }
  if (!host_) return;
  t.Family("trainyard_host_cpus", "gauge", "CPUs of the server's host it may use.");
  t.Sample("trainyard_host_cpus", {}, host_->cpus);
  t.Family("trainyard_host_memory_bytes", "gauge", "Memory of the server's host (MemTotal).");
  t.Sample("trainyard_host_memory_bytes", {}, static_cast<double>(host_->memory_bytes));
  t.Family("trainyard_host_memory_available_bytes", "gauge",
           "Memory of the server's host available without swapping (MemAvailable).");
  t.Sample("trainyard_host_memory_available_bytes", {},
           static_cast<double>(host_->memory_available_bytes));
  if (host_->gpus) {
    t.Family("trainyard_host_gpus", "gauge", "GPUs of the server's host (nvidia-smi).");
    t.Sample("trainyard_host_gpus", {}, *host_->gpus);
  }
  if (!options_.host_runs_replicas) return;
  t.Family("trainyard_host_free_cpus", "gauge",
           "CPUs of the host not allocated to running jobs (0 when oversubscribed).");
  t.Sample("trainyard_host_free_cpus", {}, std::max(0, host_->cpus - allocated_cpus_));
  if (host_->gpus) {
    t.Family("trainyard_host_free_gpus", "gauge",
             "GPUs of the host not allocated to running jobs.");
    t.Sample("trainyard_host_free_gpus", {}, std::max(0, *host_->gpus - gpus));
  }
}

void ServerMetrics::RenderServing(PrometheusText& t) const {
  if (!options_.serving) return;
  const std::vector<ServingFigures> serving = options_.serving();
  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    std::function<double(const ServingFigures&)> value;
  };
  const Gauge gauges[] = {
      {"trainyard_serving_replicas", "gauge", "Serving replicas of a deployed model.",
       [](const ServingFigures& f) { return f.replicas; }},
      {"trainyard_serving_healthy_replicas", "gauge",
       "Serving replicas whose health route answers 200 (they get traffic).",
       [](const ServingFigures& f) { return f.healthy; }},
      {"trainyard_serving_in_flight", "gauge", "Predictions being forwarded to a deployed model.",
       [](const ServingFigures& f) { return f.in_flight; }},
      {"trainyard_predictions_total", "counter",
       "Predictions (predict and rawPredict) forwarded to a deployed model's replicas.",
       [](const ServingFigures& f) { return static_cast<double>(f.requests); }},
      {"trainyard_prediction_failures_total", "counter",
       "Forwarded predictions no replica answered (answered 503, retryable).",
       [](const ServingFigures& f) { return static_cast<double>(f.failed); }},
      {"trainyard_prediction_seconds_total", "counter",
       "Time forwarded predictions took, summed (divide by trainyard_predictions_total).",
       [](const ServingFigures& f) { return f.seconds; }},
  };
  for (const Gauge& g : gauges) {
    t.Family(g.name, g.type, g.help);
    for (const ServingFigures& f : serving) {
      t.Sample(g.name, {{"endpoint", f.endpoint}, {"deployed_model", f.deployed_model}},
               g.value(f));
    }
  }
}

void ServerMetrics::RenderProjects(PrometheusText& t) const {
  if (!options_.projects) return;
  const std::vector<ProjectFigures> projects = options_.projects();
  t.Family("trainyard_project_used", "gauge",
           "What a project's started and executor-queued jobs hold, by resource (vcpus, "
           "memory_gib, jobs, gpus:<acceleratorType>).");
  for (const auto& p : projects) {
    for (const auto& [resource, v] : p.used) {
      t.Sample("trainyard_project_used", {{"project", p.project}, {"resource", resource}}, v);
    }
  }
  t.Family("trainyard_project_quota", "gauge",
           "A project's quota by resource (limited ones only).");
  for (const auto& p : projects) {
    for (const auto& [resource, v] : p.quota) {
      t.Sample("trainyard_project_quota", {{"project", p.project}, {"resource", resource}}, v);
    }
  }
  t.Family("trainyard_project_weight", "gauge", "A project's fair-share weight (default 1).");
  for (const auto& p : projects)
    t.Sample("trainyard_project_weight", {{"project", p.project}}, p.weight);
  t.Family("trainyard_project_held_jobs", "gauge",
           "A project's jobs held QUEUED by its quota, a pause or draining.");
  for (const auto& p : projects) {
    t.Sample("trainyard_project_held_jobs", {{"project", p.project}}, p.held_jobs);
  }
  t.Family("trainyard_project_paused", "gauge",
           "1 while an admin has the project paused (its new jobs are held), else 0.");
  for (const auto& p : projects) {
    t.Sample("trainyard_project_paused", {{"project", p.project}}, p.paused ? 1 : 0);
  }
}

void ServerMetrics::RenderSystem(PrometheusText& t) const {
  struct DiskFamily {
    const char* name;
    const char* help;
    uint64_t DiskUsage::*field;
  };
  static constexpr DiskFamily kDiskFamilies[] = {
      {"trainyard_disk_total_bytes", "Size of the file system of a volume of the server.",
       &DiskUsage::total_bytes},
      {"trainyard_disk_free_bytes", "Bytes the server's user can still write on the volume.",
       &DiskUsage::free_bytes},
      {"trainyard_disk_total_inodes", "Inodes of the file system of the volume.",
       &DiskUsage::total_inodes},
      {"trainyard_disk_free_inodes", "Inodes the server's user can still use on the volume.",
       &DiskUsage::free_inodes},
  };
  for (const DiskFamily& family : kDiskFamilies) {
    if (disks_.empty()) break;
    t.Family(family.name, "gauge", family.help);
    for (const auto& [volume, path] : options_.volumes) {
      auto it = disks_.find(volume);
      if (it == disks_.end()) continue;
      t.Sample(family.name, {{"volume", volume}, {"path", path.string()}},
               static_cast<double>(it->second.*family.field));
    }
  }
  if (!options_.executor_probe || executor_up_) {
    t.Family("trainyard_executor_up", "gauge",
             "1 while the executor answers its probe (Slurm: sinfo), 0 otherwise.");
    t.Sample("trainyard_executor_up", {{"executor", options_.executor}},
             !options_.executor_probe || *executor_up_ ? 1 : 0);
  }
  if (cluster_) RenderCluster(t, *cluster_);
}

void ServerMetrics::RenderCluster(PrometheusText& t,
                                  const executor::Executor::ClusterCapacity& c) const {
  const std::vector<std::pair<std::string, std::string>> labels = {{"executor", options_.executor}};
  struct Gauge {
    const char* name;
    const char* help;
    double value;
  };
  std::vector<Gauge> gauges = {
      {"trainyard_executor_nodes",
       "Nodes the executor may run replicas on (Slurm: the partition's).",
       static_cast<double>(c.nodes)},
      {"trainyard_executor_usable_nodes", "Of those, nodes not down, drained or failing.",
       static_cast<double>(c.usable_nodes)},
      {"trainyard_executor_cpus", "CPUs of the usable nodes.", static_cast<double>(c.cpus)},
      {"trainyard_executor_gpus", "GPUs of the usable nodes.", static_cast<double>(c.gpus)},
      {"trainyard_executor_memory_bytes", "Memory of the usable nodes.",
       static_cast<double>(c.memory_bytes)}};
  if (c.free_cpus >= 0) {
    gauges.push_back({"trainyard_executor_free_cpus", "Idle CPUs of the usable nodes.",
                      static_cast<double>(c.free_cpus)});
  }
  for (const Gauge& g : gauges) {
    t.Family(g.name, "gauge", g.help);
    t.Sample(g.name, labels, g.value);
  }
}

void ServerMetrics::RenderHttp(PrometheusText& t) const {
  t.Family("trainyard_http_requests_total", "counter",
           "HTTP requests served, by method, route template and status code.");
  for (const auto& [key, n] : requests_) {
    const auto& [method, route, code] = key;
    t.Sample("trainyard_http_requests_total",
             {{"method", method}, {"route", route}, {"code", std::to_string(code)}},
             static_cast<double>(n));
  }
  t.Family("trainyard_metrics_collect_errors_total", "counter",
           "Failed collections by source (jobs, resources, disk, host); the figures are then "
           "from the last good one.");
  std::map<std::string, uint64_t> errors = collect_errors_;
  for (const char* source : {"jobs", "resources", "disk", "host"}) errors.emplace(source, 0);
  for (const auto& [source, n] : errors) {
    t.Sample("trainyard_metrics_collect_errors_total", {{"source", source}},
             static_cast<double>(n));
  }
}

void ServerMetrics::StartPolling(std::chrono::milliseconds interval) {
  StopPolling();
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    stop_polling_ = false;
  }
  poller_ = std::thread([this, interval] {
    (void)CollectSystem();  // the first scrape finds the volumes and the host already
    std::unique_lock<std::mutex> lock(poll_mu_);
    while (!poll_cv_.wait_for(lock, interval, [this] { return stop_polling_; })) {
      lock.unlock();
      (void)Collect();
      (void)CollectSystem();
      lock.lock();
    }
  });
}

void ServerMetrics::StopPolling() {
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    stop_polling_ = true;
  }
  poll_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

}  // namespace trainyard::observability
