// The executor conformance suite against the SlurmExecutor over a simulated Slurm: a
// FakeSlurmClient whose jobs this harness "runs" — each Step starts submitted jobs, plays their
// tasks from plan.json (pid, log and status files as trainyard-slurm-task writes them), applies
// scancel (TERM stops tasks that run until stopped; a plain scancel ends the job), ends jobs as
// srun --kill-on-bad-exit would, advances a fake clock by one second and runs one monitor round.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/file_util.h"
#include "executor/executor_conformance.h"
#include "executor/job_log.h"
#include "slurm/fake_slurm_client.h"
#include "slurm/slurm_executor.h"

namespace trainyard::slurm {
namespace {

namespace fs = std::filesystem;
using executor::ExecutorConformanceTest;
using executor::ReplicaPlan;
using Json = nlohmann::json;

class SlurmHarness : public executor::ExecutorHarness {
 public:
  explicit SlurmHarness(fs::path dir) : dir_(std::move(dir)) {
    SlurmNode n;
    n.name = "n1";
    n.partitions = {"debug"};
    n.default_partition = true;
    n.cpus = 16;
    n.memory_mb = 64000;
    n.gpus = 8;  // GRES gpu:8
    n.state = "idle";
    client_.SetNodes({n});
  }

  std::unique_ptr<executor::Executor> Make() override {
    SlurmExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.task_binary = "/bin/true";  // never run: this harness plays the tasks
    o.client = &client_;
    o.clock = &clock_;
    o.start_monitor = false;
    auto e = std::make_unique<SlurmExecutor>(o);
    current_ = e.get();
    return e;
  }

  std::vector<std::string> Command(const ReplicaPlan& plan) override {
    return executor::EncodeReplicaPlan(plan);
  }

  void Step() override {
    clock_.Advance();
    ApplyCancels();
    EndJobs();
    StartJobs();
    current_->PollOnce();
  }
  std::chrono::system_clock::time_point Now() override { return clock_.Now(); }

 private:
  struct Task {
    fs::path dir;
    bool ended = false;
  };
  struct Job {
    std::vector<Task> tasks;
    bool ended = false;
  };

  void WriteStatus(Task& t, int code) {
    // end_time orders exits (the executor blames the first non-zero one); a counter sorts as text.
    char end[32];
    std::snprintf(end, sizeof(end), "t%08d", ++exits_);
    ASSERT_TRUE(
        WriteFileAtomic(t.dir / "status", Json{{"exit_code", code}, {"end_time", end}}.dump())
            .ok());
    t.ended = true;
  }

  void ApplyCancels() {
    auto cancels = client_.cancels();
    for (; cancels_seen_ < cancels.size(); ++cancels_seen_) {
      const std::string& c = cancels[cancels_seen_];
      std::string id = c.substr(0, c.find(':'));
      bool term = c.ends_with(":TERM");
      auto it = jobs_.find(id);
      if (it == jobs_.end()) {
        never_start_.insert(id);  // cancelled while pending
        client_.SetJob(id, "CANCELLED", "0:0");
        continue;
      }
      for (auto& t : it->second.tasks) {
        if (!t.ended && term) WriteStatus(t, 143);  // the replica's SIGTERM ends it
      }
      if (!term && !it->second.ended) {
        it->second.ended = true;
        client_.SetJob(id, "CANCELLED", "0:9");
      }
    }
  }

  void EndJobs() {
    for (auto& [id, job] : jobs_) {
      if (job.ended) continue;
      int bad = 0;
      bool all = true;
      for (const auto& t : job.tasks) {
        if (!t.ended) {
          all = false;
          continue;
        }
        auto code = ReadFile(t.dir / "status");
        int c = Json::parse(*code).at("exit_code").get<int>();
        if (c != 0 && bad == 0) bad = c;
      }
      if (!all && bad == 0) continue;
      for (auto& t : job.tasks) {
        if (!t.ended) WriteStatus(t, 143);  // srun --kill-on-bad-exit
      }
      job.ended = true;
      client_.SetJob(id, bad == 0 ? "COMPLETED" : "FAILED",
                     bad == 0 ? "0:0" : std::to_string(bad) + ":0");
    }
  }

  void StartJobs() {
    for (const auto& sub : client_.submissions()) {
      if (jobs_.count(sub.job_id) || never_start_.count(sub.job_id)) continue;
      auto text = ReadFile(sub.script_path.parent_path() / "plan.json");
      ASSERT_TRUE(text.ok()) << text.status().ToString();
      Json plan = Json::parse(*text);
      Job& job = jobs_[sub.job_id];
      for (const auto& task : plan.at("tasks")) {
        Task t{task.at("dir").get<std::string>()};
        fs::path work = task.at("work_dir").get<std::string>();
        ASSERT_TRUE(MakeDirs(t.dir).ok());
        ASSERT_TRUE(MakeDirs(work).ok());
        // Attempts are counted in the work dir, which every attempt of the replica shares.
        auto count = ReadFile(work / ".attempts");
        int attempt = (count.ok() ? std::stoi(*count) : 0) + 1;
        ASSERT_TRUE(WriteFileAtomic(work / ".attempts", std::to_string(attempt)).ok());
        ASSERT_TRUE(WriteFileAtomic(t.dir / "pid", Json{{"pid", 4000 + attempt}}.dump()).ok());
        auto decoded = executor::DecodeReplicaPlan(task.at("argv").get<std::vector<std::string>>());
        ASSERT_TRUE(decoded.has_value());
        for (bool is_stderr : {false, true}) {
          const std::string& text = is_stderr ? decoded->error : decoded->print;
          if (text.empty()) continue;
          executor::LogRecord rec{clock_.Now(), task.at("pool").get<int>(),
                                  task.at("replica").get<int>(), is_stderr, text};
          ASSERT_TRUE(executor::AppendJobLog(t.dir / "log", executor::LogLimits{}, {rec}).ok());
        }
        int code = executor::PlannedExit(*decoded, attempt);
        if (code != ReplicaPlan::kUntilStopped) WriteStatus(t, code);
        job.tasks.push_back(std::move(t));
      }
      client_.SetJob(sub.job_id, "RUNNING", "", "None", "n1");
    }
  }

  fs::path dir_;
  FakeSlurmClient client_;
  executor::SteppedClock clock_;
  SlurmExecutor* current_ = nullptr;
  std::map<std::string, Job> jobs_;
  std::set<std::string> never_start_;
  size_t cancels_seen_ = 0;
  int exits_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Slurm, ExecutorConformanceTest,
                         ::testing::Values([](const std::filesystem::path& dir) {
                           return std::unique_ptr<executor::ExecutorHarness>(new SlurmHarness(dir));
                         }));

}  // namespace
}  // namespace trainyard::slurm
