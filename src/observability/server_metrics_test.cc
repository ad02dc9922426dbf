#include "observability/server_metrics.h"

#include <gtest/gtest.h>

#include <sstream>

#include "store/memory_job_store.h"

namespace trainyard::observability {
namespace {

using spec::JobState;
using std::chrono::seconds;

const auto kT0 = std::chrono::system_clock::time_point(seconds(1'700'000'000));

spec::CustomJob Job(const std::string& id, JobState state, int replicas, std::string machine,
                    std::string gpu = "", int gpus = 0) {
  spec::CustomJob job;
  job.name = "projects/p/locations/l/customJobs/" + id;
  job.state = state;
  job.create_time = kT0;
  job.update_time = kT0;
  spec::WorkerPoolSpec pool;
  pool.machine_spec = spec::MachineSpec{std::move(machine), std::move(gpu), gpus};
  pool.replica_count = replicas;
  job.job_spec.worker_pool_specs.push_back(pool);
  return job;
}

// The lines of `text` that start with one of `prefixes`.
std::string Lines(const std::string& text, std::initializer_list<std::string> prefixes) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    for (const auto& p : prefixes) {
      if (line.rfind(p, 0) == 0) {
        out += line + "\n";
        break;
      }
    }
  }
  return out;
}

TEST(ServerMetricsTest, RouteTemplatesBoundTheLabel) {
  EXPECT_EQ(RouteOf("/v1/projects/p/locations/l/customJobs") + " " +
                RouteOf("/v1/projects/p/locations/l/customJobs/42:logs") + " " +
                RouteOf("/v1/projects/x/locations/y/hyperparameterTuningJobs/7") + " " +
                RouteOf("/assets/index-abc.js") + " " + RouteOf("/metrics") + " " +
                RouteOf("/v1/projects/p/locations/l/secrets/1") + " " + RouteOf("/x/y/z"),
            "/v1/projects/{p}/locations/{l}/customJobs "
            "/v1/projects/{p}/locations/{l}/customJobs/{id}:logs "
            "/v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id} /assets/* /metrics "
            "other other");
}

TEST(ServerMetricsTest, JobsQueueAllocationsLatencyRestartsAndFinishedJobs) {
  store::MemoryJobStore store;
  auto now = kT0 + seconds(100);
  auto resources = [](const spec::MachineSpec& m) {
    return ReplicaResources{m.machine_type == "n1-standard-8" ? 8 : 4, 0, ""};
  };
  ServerMetrics metrics(&store, resources, [&] { return now; });
  ASSERT_TRUE(store.Create(Job("1", JobState::kQueued, 1, "n1-standard-4")).ok());
  auto running = Job("2", JobState::kRunning, 2, "n1-standard-8", "NVIDIA_TESLA_T4", 1);
  running.start_time = kT0 + seconds(3);
  running.trainyard_info = spec::TrainyardInfo{};
  running.trainyard_info->replicas = {{0, 0, std::nullopt, 1}, {0, 1, std::nullopt, 0}};
  ASSERT_TRUE(store.Create(running).ok());
  auto pending = Job("3", JobState::kPending, 1, "n1-standard-4");
  pending.create_time = kT0 + seconds(40);
  ASSERT_TRUE(store.Create(pending).ok());
  ASSERT_TRUE(metrics.Collect().ok());
  // Job 2 ends with one more restart.
  ASSERT_TRUE(store
                  .Mutate(running.name,
                          [](spec::CustomJob& j) -> Status {
                            j.state = JobState::kSucceeded;
                            j.trainyard_info->replicas[1].restarts = 1;
                            return Status::Ok();
                          })
                  .ok());
  now = kT0 + seconds(200);
  metrics.CountRequest("GET", "/v1/projects/p/locations/l/customJobs/2", 200);
  metrics.CountRequest("GET", "/v1/projects/p/locations/l/customJobs/9", 404);
  metrics.CountRequest("GET", "/v1/projects/p/locations/l/customJobs/3", 200);
  const std::string text = metrics.Render();
  EXPECT_EQ(Lines(text, {"trainyard_jobs", "trainyard_queue", "trainyard_replica",
                         "trainyard_allocated", "trainyard_http",
                         "trainyard_job_start_latency_"
                         "seconds_count"}),
            "trainyard_jobs{state=\"JOB_STATE_CANCELLING\"} 0\n"
            "trainyard_jobs{state=\"JOB_STATE_PENDING\"} 1\n"
            "trainyard_jobs{state=\"JOB_STATE_QUEUED\"} 1\n"
            "trainyard_jobs{state=\"JOB_STATE_RUNNING\"} 0\n"
            "trainyard_jobs_finished_total{state=\"JOB_STATE_CANCELLED\"} 0\n"
            "trainyard_jobs_finished_total{state=\"JOB_STATE_FAILED\"} 0\n"
            "trainyard_jobs_finished_total{state=\"JOB_STATE_SUCCEEDED\"} 1\n"
            "trainyard_queue_length 2\n"
            "trainyard_queue_oldest_wait_seconds 200\n"
            "trainyard_job_start_latency_seconds_count 1\n"
            "trainyard_replica_restarts_total{reason=\"exit_code\"} 0\n"
            "trainyard_replica_restarts_total{reason=\"sigkill\"} 0\n"
            "trainyard_replica_restarts_total{reason=\"signal\"} 0\n"
            "trainyard_replica_restarts_total{reason=\"unknown\"} 2\n"
            "trainyard_allocated_cpus 0\n"
            "trainyard_allocated_memory_bytes 0\n"
            "trainyard_allocated_gpus 0\n"
            "trainyard_http_requests_total{method=\"GET\",route=\"/v1/projects/{p}/locations/{l}/"
            "customJobs/{id}\",code=\"200\"} 2\n"
            "trainyard_http_requests_total{method=\"GET\",route=\"/v1/projects/{p}/locations/{l}/"
            "customJobs/{id}\",code=\"404\"} 1\n");
}

// A job that crash-loops and fails between two polls: counted at the event with every restart,
// once, whatever the polls around it saw (a poll whose snapshot still lists it included).
TEST(ServerMetricsTest, AJobThatEndsBetweenPollsIsCountedAtTheEventOnce) {
  store::MemoryJobStore store;
  auto now = kT0 + seconds(10);
  ServerMetrics metrics(&store, nullptr, [&] { return now; });
  auto job = Job("7", JobState::kFailed, 1, "n1-standard-4");
  job.trainyard_info = spec::TrainyardInfo{};
  job.trainyard_info->replicas = {{0, 0, 1, 3}};
  // Restart 3 came between two status reports: no step of its own.
  job.trainyard_info->state_history = {
      {JobState::kRunning, kT0, "workerpool0-0 restarted (restart 1, it had exited with code 1)"},
      {JobState::kRunning, kT0,
       "workerpool0-0 restarted (restart 2, it had exited with code 137)"}};
  ASSERT_TRUE(store.Create(job).ok());
  metrics.JobEnded(job);
  metrics.JobEnded(job);  // told twice: counted once
  ASSERT_TRUE(metrics.Collect().ok());
  auto again = Job("8", JobState::kRunning, 1, "n1-standard-4");
  ASSERT_TRUE(store.Create(again).ok());
  ASSERT_TRUE(metrics.Collect().ok());  // seen running
  again.state = JobState::kSucceeded;
  metrics.JobEnded(again);  // the store still says RUNNING: a poll's stale snapshot
  ASSERT_TRUE(metrics.Collect().ok());
  ASSERT_TRUE(store
                  .Mutate(again.name,
                          [](spec::CustomJob& j) -> Status {
                            j.state = JobState::kSucceeded;
                            return Status::Ok();
                          })
                  .ok());
  // Job 9: a poll sees it end before the controller's event arrives; the event does not recount.
  auto late = Job("9", JobState::kRunning, 1, "n1-standard-4");
  ASSERT_TRUE(store.Create(late).ok());
  ASSERT_TRUE(metrics.Collect().ok());
  late.state = JobState::kSucceeded;
  ASSERT_TRUE(store
                  .Mutate(late.name,
                          [](spec::CustomJob& j) -> Status {
                            j.state = JobState::kSucceeded;
                            return Status::Ok();
                          })
                  .ok());
  ASSERT_TRUE(metrics.Collect().ok());
  metrics.JobEnded(late);
  now += seconds(120);
  const std::string text = metrics.Render();
  EXPECT_EQ(Lines(text, {"trainyard_jobs_finished", "trainyard_replica_restarts"}),
            "trainyard_jobs_finished_total{state=\"JOB_STATE_CANCELLED\"} 0\n"
            "trainyard_jobs_finished_total{state=\"JOB_STATE_FAILED\"} 1\n"
            "trainyard_jobs_finished_total{state=\"JOB_STATE_SUCCEEDED\"} 2\n"
            "trainyard_replica_restarts_total{reason=\"exit_code\"} 1\n"
            "trainyard_replica_restarts_total{reason=\"sigkill\"} 1\n"
            "trainyard_replica_restarts_total{reason=\"signal\"} 0\n"
            "trainyard_replica_restarts_total{reason=\"unknown\"} 1\n");
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_jobs_finished_total{state=\"JOB_STATE_SUCC"}),
            "trainyard_jobs_finished_total{state=\"JOB_STATE_SUCCEEDED\"} 2\n");
}

TEST(ServerMetricsTest, RunningJobsAllocateTheirMachinesAndGpus) {
  store::MemoryJobStore store;
  auto resources = [](const spec::MachineSpec& m) { return ReplicaResources{4, 0, "", 15}; };
  ServerMetrics metrics(&store, resources, [] { return kT0 + seconds(90); });
  auto job = Job("1", JobState::kRunning, 2, "n1-standard-4", "NVIDIA_TESLA_T4", 2);
  job.start_time = kT0 + seconds(1);
  ASSERT_TRUE(store.Create(job).ok());
  auto younger = Job("2", JobState::kRunning, 1, "n1-standard-4");
  younger.start_time = kT0 + seconds(60);
  ASSERT_TRUE(store.Create(younger).ok());
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_allocated", "trainyard_longest",
                                     "trainyard_job_start_latency_seconds_bucket{le=\"1\"}"}),
            "trainyard_longest_running_job_seconds 89\n"
            "trainyard_job_start_latency_seconds_bucket{le=\"1\"} 1\n"
            "trainyard_allocated_cpus 12\n"
            "trainyard_allocated_memory_bytes 48318382080\n"  // 3 x 15 GiB
            "trainyard_allocated_gpus 4\n"
            "trainyard_allocated_gpus_by_type{accelerator_type=\"NVIDIA_TESLA_T4\"} 4\n");
}

TEST(ServerMetricsTest, BuildInfoNamesTheVersion) {
  store::MemoryJobStore store;
  ServerMetrics metrics(&store, nullptr);
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_build_info"}),
            "trainyard_build_info{version=\"" + std::string(TrainyardVersion()) + "\"} 1\n");
  EXPECT_NE(TrainyardVersion(), "unknown");
}

// The world of CollectSystem, injected: volumes whose statvfs the test sets, a host, an executor
// probe that answers what the test says and counts its calls.
struct FakeWorld {
  std::map<std::string, StatusOr<DiskUsage>> disks = {{"/srv/trainyard", DiskUsage{}},
                                                      {"/srv/buckets", DiskUsage{}}};
  StatusOr<HostCapacity> host = HostCapacity{8, 32ull << 30, 3ull << 30, 2};
  using Capacity = executor::Executor::ClusterCapacity;
  StatusOr<std::optional<Capacity>> executor = std::optional<Capacity>();
  int probes = 0;

  ServerMetricsOptions Options(std::function<TimePoint()> clock) {
    ServerMetricsOptions o;
    o.clock = std::move(clock);
    o.volumes = {{"data_dir", "/srv/trainyard"}, {"bucket_root", "/srv/buckets"}};
    o.disk_stat = [this](const std::filesystem::path& p) { return disks.at(p.string()); };
    o.host = [this] { return host; };
    o.executor = "slurm";
    o.executor_probe = [this] {
      ++probes;
      return executor;
    };
    return o;
  }
};

// A full data dir shows as 0 free bytes; a volume that cannot be read keeps its last figures
// and is counted as an error.
TEST(ServerMetricsTest, VolumesReportTheirSpaceAndAFailedStatKeepsTheLastFigures) {
  store::MemoryJobStore store;
  FakeWorld world;
  world.disks.insert_or_assign("/srv/trainyard", DiskUsage{100ull << 30, 0, 1000, 0});
  world.disks.insert_or_assign("/srv/buckets", DiskUsage{2ull << 40, 1ull << 40, 5000, 4000});
  ServerMetrics metrics(&store, world.Options([] { return kT0; }));
  ASSERT_TRUE(metrics.CollectSystem().ok());
  world.disks.insert_or_assign("/srv/buckets",
                               UnavailableError("statvfs /srv/buckets: Stale file handle"));
  EXPECT_EQ(metrics.CollectSystem().message(), "statvfs /srv/buckets: Stale file handle");
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_disk_free", "trainyard_metrics_collect"}),
            "trainyard_disk_free_bytes{volume=\"data_dir\",path=\"/srv/trainyard\"} 0\n"
            "trainyard_disk_free_bytes{volume=\"bucket_root\",path=\"/srv/buckets\"} "
            "1099511627776\n"
            "trainyard_disk_free_inodes{volume=\"data_dir\",path=\"/srv/trainyard\"} 0\n"
            "trainyard_disk_free_inodes{volume=\"bucket_root\",path=\"/srv/buckets\"} 4000\n"
            "trainyard_metrics_collect_errors_total{source=\"disk\"} 1\n"
            "trainyard_metrics_collect_errors_total{source=\"host\"} 0\n"
            "trainyard_metrics_collect_errors_total{source=\"jobs\"} 0\n"
            "trainyard_metrics_collect_errors_total{source=\"resources\"} 0\n");
}

// The local executor's host runs the replicas: its free CPUs and GPUs are what running jobs
// leave.
TEST(ServerMetricsTest, HostCapacityAndWhatRunningJobsLeaveOfIt) {
  store::MemoryJobStore store;
  FakeWorld world;
  ServerMetricsOptions o = world.Options([] { return kT0; });
  o.volumes.clear();
  o.executor = "local";
  o.executor_probe = nullptr;
  o.host_runs_replicas = true;
  o.resources = [](const spec::MachineSpec&) { return ReplicaResources{4, 1, "NVIDIA_L4", 16}; };
  ServerMetrics metrics(&store, std::move(o));
  ASSERT_TRUE(store.Create(Job("1", JobState::kRunning, 1, "g2-standard-4")).ok());
  ASSERT_TRUE(metrics.CollectSystem().ok());
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_host", "trainyard_executor"}),
            "trainyard_host_cpus 8\n"
            "trainyard_host_memory_bytes 34359738368\n"
            "trainyard_host_memory_available_bytes 3221225472\n"
            "trainyard_host_gpus 2\n"
            "trainyard_host_free_cpus 4\n"
            "trainyard_host_free_gpus 1\n"
            "trainyard_executor_up{executor=\"local\"} 1\n");
}

// The probe runs at most every probe_interval, and a failing one shows as 0 until one succeeds.
TEST(ServerMetricsTest, ExecutorUpFollowsTheProbeAtMostEveryInterval) {
  store::MemoryJobStore store;
  FakeWorld world;
  auto now = kT0;
  ServerMetrics metrics(&store, world.Options([&] { return now; }));
  std::string seen = Lines(metrics.Render(), {"trainyard_executor_up"});  // not probed yet
  world.executor = UnavailableError("sinfo failed; is the Slurm controller up?");
  ASSERT_TRUE(metrics.CollectSystem().ok());  // a failing probe is a figure, not an error
  seen += Lines(metrics.Render(), {"trainyard_executor_up"});
  world.executor = std::optional<FakeWorld::Capacity>();
  now += seconds(5);
  ASSERT_TRUE(metrics.CollectSystem().ok());  // too soon: not probed again
  seen += Lines(metrics.Render(), {"trainyard_executor_up"});
  now += seconds(10);
  ASSERT_TRUE(metrics.CollectSystem().ok());
  seen += Lines(metrics.Render(), {"trainyard_executor_up"});
  EXPECT_EQ(seen + std::to_string(world.probes) + " probes",
            "trainyard_executor_up{executor=\"slurm\"} 0\n"
            "trainyard_executor_up{executor=\"slurm\"} 0\n"
            "trainyard_executor_up{executor=\"slurm\"} 1\n"
            "2 probes");
}

// A cluster executor's capacity (Slurm's partition) from its probe; a failed probe keeps the
// last figures (executor_up says 0).
TEST(ServerMetricsTest, ClusterCapacityComesFromTheExecutorsProbe) {
  store::MemoryJobStore store;
  FakeWorld world;
  auto now = kT0;
  world.executor =
      std::optional<FakeWorld::Capacity>(FakeWorld::Capacity{3, 2, 16, 10, 1, 64ll << 30});
  ServerMetrics metrics(&store, world.Options([&] { return now; }));
  ASSERT_TRUE(metrics.CollectSystem().ok());
  world.executor = UnavailableError("sinfo timed out");
  now += seconds(20);
  ASSERT_TRUE(metrics.CollectSystem().ok());
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_executor"}),
            "trainyard_executor_up{executor=\"slurm\"} 0\n"
            "trainyard_executor_nodes{executor=\"slurm\"} 3\n"
            "trainyard_executor_usable_nodes{executor=\"slurm\"} 2\n"
            "trainyard_executor_cpus{executor=\"slurm\"} 16\n"
            "trainyard_executor_gpus{executor=\"slurm\"} 1\n"
            "trainyard_executor_memory_bytes{executor=\"slurm\"} 68719476736\n"
            "trainyard_executor_free_cpus{executor=\"slurm\"} 10\n");
}

// Every kind the stores hold, by state; kinds without a state have no state label.
TEST(ServerMetricsTest, EveryResourceKindIsCountedByState) {
  store::MemoryJobStore store;
  FakeWorld world;
  ServerMetricsOptions o = world.Options([] { return kT0; });
  o.volumes.clear();
  o.tuning_store = &store;
  o.resource_store = &store;
  ServerMetrics metrics(&store, std::move(o));
  ASSERT_TRUE(store.Create(Job("1", JobState::kRunning, 1, "n1-standard-4")).ok());
  ASSERT_TRUE(store.Create(Job("2", JobState::kSucceeded, 1, "n1-standard-4")).ok());
  store::TuningJobRecord study;
  study.job.name = "projects/p/locations/l/hyperparameterTuningJobs/3";
  study.job.state = JobState::kPending;
  study.job.create_time = kT0;
  ASSERT_TRUE(store.CreateTuningJob(study).ok());
  auto add = [&](const std::string& kind, const std::string& id, int64_t state) {
    store::ResourceRecord r;
    r.parent = "projects/p/locations/l";
    r.name = r.parent + "/" + kind + "/" + id;
    r.state = state;
    r.create_time = kT0;
    ASSERT_TRUE(store.CreateResource(kind, r).ok());
  };
  add("trainingPipelines", "4", 3);
  add("jobs", "5", 5);
  add("models", "6", 0);
  add("models", "7", 0);
  add("operations", "8", 1);
  add("operations", "9", 2);
  ASSERT_TRUE(metrics.CollectSystem().ok());
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_resources{"}),
            "trainyard_resources{kind=\"customJobs\",state=\"JOB_STATE_RUNNING\"} 1\n"
            "trainyard_resources{kind=\"customJobs\",state=\"JOB_STATE_SUCCEEDED\"} 1\n"
            "trainyard_resources{kind=\"hyperparameterTuningJobs\",state=\"JOB_STATE_PENDING\"} "
            "1\n"
            "trainyard_resources{kind=\"trainingPipelines\",state=\"PIPELINE_STATE_RUNNING\"} "
            "1\n"
            "trainyard_resources{kind=\"jobs\",state=\"FAILED\"} 1\n"
            "trainyard_resources{kind=\"models\"} 2\n"
            "trainyard_resources{kind=\"operations\",state=\"RUNNING\"} 1\n"
            "trainyard_resources{kind=\"operations\",state=\"DONE\"} 1\n");
}

}  // namespace
}  // namespace trainyard::observability
