#include "observability/server_metrics.h"

#include <algorithm>
#include <vector>

namespace trainyard::observability {
namespace {

using spec::JobState;

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

ServerMetrics::ServerMetrics(store::JobStore* store, ResourcesFn resources, Clock clock)
    : store_(store),
      resources_(std::move(resources)),
      clock_(OrSystemClock(std::move(clock))),
      start_latency_({0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}) {}

ServerMetrics::~ServerMetrics() { StopPolling(); }

void ServerMetrics::CountRequest(std::string_view method, std::string_view path, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{std::string(method), RouteOf(path), status}];
}

// Counts the job's start latency once, and replica restarts it gained since the last poll.
// Caller holds mu_.
void ServerMetrics::Observe(const spec::CustomJob& job) {
  if (job.start_time && job.create_time && started_seen_.insert(job.name).second) {
    start_latency_.Observe(
        std::max(0.0, std::chrono::duration<double>(*job.start_time - *job.create_time).count()));
  }
  if (job.trainyard_info) {
    int restarts = 0;
    for (const auto& r : job.trainyard_info->replicas) restarts += r.restarts;
    int& seen = restarts_seen_[job.name];
    if (restarts > seen) restarts_total_ += static_cast<uint64_t>(restarts - seen);
    seen = std::max(seen, restarts);
  }
}

Status ServerMetrics::Collect() {
  auto jobs = store_->ListUnfinished();
  if (!jobs.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++collect_errors_;
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
    allocated_gpus_.clear();
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
      if (job.state != JobState::kRunning && job.state != JobState::kCancelling) continue;
      for (const auto& pool : job.job_spec.worker_pool_specs) {
        if (!pool.machine_spec) continue;
        ReplicaResources r;
        if (resources_) r = resources_(*pool.machine_spec);
        if (r.gpus == 0 && pool.machine_spec->accelerator_count > 0) {
          r.gpus = pool.machine_spec->accelerator_count;
          r.gpu_type = pool.machine_spec->accelerator_type;
        }
        allocated_cpus_ += r.cpus * static_cast<int>(pool.replica_count);
        if (r.gpus > 0)
          allocated_gpus_[r.gpu_type] += r.gpus * static_cast<int>(pool.replica_count);
      }
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

std::string ServerMetrics::Render() {
  (void)Collect();
  std::lock_guard<std::mutex> lock(mu_);
  PrometheusText t;
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
  t.Family("trainyard_job_start_latency_seconds", "histogram",
           "Time from job creation (submit) to RUNNING.");
  t.HistogramSamples("trainyard_job_start_latency_seconds", {}, start_latency_);
  t.Family("trainyard_replica_restarts_total", "counter",
           "Replica restarts after failures or preemption.");
  t.Sample("trainyard_replica_restarts_total", {}, static_cast<double>(restarts_total_));

  t.Family("trainyard_allocated_cpus", "gauge", "vCPUs of the machine types of running jobs.");
  t.Sample("trainyard_allocated_cpus", {}, allocated_cpus_);
  int gpus = 0;
  for (const auto& [type, n] : allocated_gpus_) gpus += n;
  t.Family("trainyard_allocated_gpus", "gauge", "GPUs of running jobs.");
  t.Sample("trainyard_allocated_gpus", {}, gpus);
  t.Family("trainyard_allocated_gpus_by_type", "gauge", "GPUs of running jobs by acceleratorType.");
  for (const auto& [type, n] : allocated_gpus_) {
    t.Sample("trainyard_allocated_gpus_by_type", {{"accelerator_type", type}}, n);
  }

  t.Family("trainyard_http_requests_total", "counter",
           "HTTP requests served, by method, route template and status code.");
  for (const auto& [key, n] : requests_) {
    const auto& [method, route, code] = key;
    t.Sample("trainyard_http_requests_total",
             {{"method", method}, {"route", route}, {"code", std::to_string(code)}},
             static_cast<double>(n));
  }
  t.Family("trainyard_metrics_collect_errors_total", "counter",
           "Polls of the job store that failed (figures are then from the last good poll).");
  t.Sample("trainyard_metrics_collect_errors_total", {}, static_cast<double>(collect_errors_));
  return t.text();
}

void ServerMetrics::StartPolling(std::chrono::milliseconds interval) {
  StopPolling();
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    stop_polling_ = false;
  }
  poller_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lock(poll_mu_);
    while (!poll_cv_.wait_for(lock, interval, [this] { return stop_polling_; })) {
      lock.unlock();
      (void)Collect();
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
