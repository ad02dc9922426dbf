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
            "trainyard_replica_restarts_total 2\n"
            "trainyard_allocated_cpus 0\n"
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
            "trainyard_replica_restarts_total 3\n");
  EXPECT_EQ(Lines(metrics.Render(), {"trainyard_jobs_finished_total{state=\"JOB_STATE_SUCC"}),
            "trainyard_jobs_finished_total{state=\"JOB_STATE_SUCCEEDED\"} 2\n");
}

TEST(ServerMetricsTest, RunningJobsAllocateTheirMachinesAndGpus) {
  store::MemoryJobStore store;
  auto resources = [](const spec::MachineSpec& m) { return ReplicaResources{4, 0, ""}; };
  ServerMetrics metrics(&store, resources, [] { return kT0; });
  auto job = Job("1", JobState::kRunning, 2, "n1-standard-4", "NVIDIA_TESLA_T4", 2);
  job.start_time = kT0 + seconds(1);
  ASSERT_TRUE(store.Create(job).ok());
  EXPECT_EQ(Lines(metrics.Render(),
                  {"trainyard_allocated", "trainyard_job_start_latency_seconds_bucket{le=\"1\"}"}),
            "trainyard_job_start_latency_seconds_bucket{le=\"1\"} 1\n"
            "trainyard_allocated_cpus 8\n"
            "trainyard_allocated_gpus 4\n"
            "trainyard_allocated_gpus_by_type{accelerator_type=\"NVIDIA_TESLA_T4\"} 4\n");
}

}  // namespace
}  // namespace trainyard::observability
