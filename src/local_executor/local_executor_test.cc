// LocalExecutor end to end: real /bin/sh replicas started through the real trainyard-exec-wrapper
// (label: integration). Child scripts sleep in 50 ms steps and kill_grace is 1 s, so the whole
// suite takes seconds.
#include "local_executor/local_executor.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "local_executor/local_executor_state.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class LocalExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestDir(); }

  // Options for an executor over `inventory` with the real wrapper.
  LocalExecutorOptions Options(HostInventory inventory,
                               std::chrono::milliseconds poll_interval = 20ms) {
    LocalExecutorOptions o;
    o.data_dir = dir_ / "data";
    o.inventory = std::move(inventory);
    o.poll_interval = poll_interval;
    o.wrapper_path = testing::ToolPath("trainyard-exec-wrapper");
    return o;
  }

  std::unique_ptr<LocalExecutor> MakeExecutor(int cpus = 4, LogLimits limits = {}) {
    LocalExecutorOptions o = Options(HostInventory{cpus, 16, {}, {}});
    o.log_limits = limits;
    auto e = std::make_unique<LocalExecutor>(o);
    e->SetListener([this](const GangStatus& s) {
      std::lock_guard<std::mutex> lock(mu_);
      std::string name = GangStateName(s.state);
      auto& h = history_[s.job_id];
      if (h.empty() || h.back() != name) h.push_back(name);
    });
    return e;
  }

  GangSpec Spec(const std::string& id, std::vector<std::string> scripts) {
    GangSpec spec;
    spec.job_id = id;
    spec.job_name = "projects/p/locations/l/customJobs/" + id;
    spec.job_dir = dir_ / "jobs" / id;
    spec.kill_grace = 1s;
    spec.max_restarts = 0;
    for (size_t i = 0; i < scripts.size(); ++i) {
      ReplicaSpec r;
      r.pool_index = i == 0 ? 0 : 1;
      r.replica_index = i == 0 ? 0 : static_cast<int>(i) - 1;
      r.machine_type = "n1-standard-1";
      r.argv = {"/bin/sh", "-c", scripts[i]};
      spec.replicas.push_back(r);
    }
    return spec;
  }

  static bool Terminal(GangState s) {
    return s == GangState::kSucceeded || s == GangState::kFailed || s == GangState::kCancelled;
  }

  GangStatus WaitFor(Executor& e, const std::string& id,
                     std::function<bool(const GangStatus&)> pred,
                     std::chrono::milliseconds limit = 15s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      auto s = e.Get(id);
      EXPECT_TRUE(s.ok()) << s.status();
      if (!s.ok() || pred(*s)) return s.ok() ? *s : GangStatus{};
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "timed out waiting for job " << id << " (state " << GangStateName(s->state)
                      << ")";
        return *s;
      }
      std::this_thread::sleep_for(20ms);
    }
  }
  GangStatus WaitDone(Executor& e, const std::string& id) {
    return WaitFor(e, id, [](const GangStatus& s) { return Terminal(s.state); });
  }

  static std::string Logs(const Executor& e, const std::string& id) {
    auto lines = e.ReadLogs(id, -1, 100000);
    EXPECT_TRUE(lines.ok()) << lines.status();
    std::string out;
    for (const auto& l : lines.value_or({})) {
      out += std::to_string(l.pool_index) + "/" + std::to_string(l.replica_index) +
             (l.is_stderr ? " E " : " O ") + l.text + "\n";
    }
    return out;
  }

  void WaitForLog(const Executor& e, const std::string& id, const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (Logs(e, id).find(text) == std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no '" << text << "' in logs";
      std::this_thread::sleep_for(20ms);
    }
  }

  GangSpec KillTestSpec() {
    return Spec("k9", {"while [ ! -f " + (dir_ / "go").string() +
                       " ]; do echo tick; sleep 0.05; done; exit 7"});
  }

  std::string History(const std::string& id) {
    // The listener runs on the executor thread; give it a moment to deliver the last change.
    std::this_thread::sleep_for(100ms);
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& s : history_[id]) out += (out.empty() ? "" : " ") + s;
    return out;
  }

  fs::path dir_;
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> history_;
};

TEST_F(LocalExecutorTest, SingleReplicaSucceedsWithVertexEnvAndTimestampedLogs) {
  auto e = MakeExecutor();
  GangSpec spec = Spec("j1", {"echo job=$CLOUD_ML_JOB_ID rank=$RANK world=$WORLD_SIZE; "
                              "echo model=$AIP_MODEL_DIR; echo cwd=$(pwd); echo oops >&2"});
  spec.base_output_dir = "gs://bucket/out";
  auto before = std::chrono::system_clock::now();
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "j1");
  auto after = std::chrono::system_clock::now();
  EXPECT_EQ(GangStateName(s.state), "SUCCEEDED") << s.error_message;
  ASSERT_EQ(s.replicas.size(), 1u);
  EXPECT_EQ(s.replicas[0].exit_code, 0);
  std::string logs = Logs(*e, "j1");
  EXPECT_NE(logs.find("0/0 O job=j1 rank=0 world=1\n"), std::string::npos) << logs;
  EXPECT_NE(logs.find("0/0 O model=gs://bucket/out/model/\n"), std::string::npos) << logs;
  EXPECT_NE(logs.find("0/0 O cwd=" + ReplicaWorkDir(spec.job_dir, 0, 0).string() + "\n"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("0/0 E oops\n"), std::string::npos) << logs;
  auto lines = e->ReadLogs("j1", -1, 100);
  ASSERT_TRUE(lines.ok());
  for (const auto& line : *lines) {
    EXPECT_GE(line.time, before - 1s);
    EXPECT_LE(line.time, after + 1s);
  }
  EXPECT_EQ(History("j1"), "QUEUED PENDING RUNNING SUCCEEDED");
}

TEST_F(LocalExecutorTest, EndedWrappersAreReaped) {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }  // zombies of earlier tests' executors
  auto e = MakeExecutor();
  ASSERT_TRUE(e->Submit(Spec("z1", {"true"})).ok());
  ASSERT_TRUE(e->Submit(Spec("z2", {"exit 1"})).ok());
  WaitDone(*e, "z1");
  WaitDone(*e, "z2");
  std::this_thread::sleep_for(300ms);  // the wrappers exit just after their status file
  EXPECT_LE(::waitpid(-1, nullptr, WNOHANG), 0) << "a finished wrapper was left a zombie";
}

TEST_F(LocalExecutorTest, FailureReportsReplicaAndExitCode) {
  auto e = MakeExecutor();
  ASSERT_TRUE(e->Submit(Spec("f1", {"exit 3"})).ok());
  GangStatus s = WaitDone(*e, "f1");
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message,
            "FAILED: workerpool0 replica 0 exited with code 3");
  EXPECT_EQ(s.replicas[0].exit_code, 3);
  EXPECT_EQ(e->Submit(Spec("f1", {"true"})).code(), StatusCode::kAlreadyExists);
  // Also once the executor that ran it is gone.
  e.reset();
  EXPECT_EQ(MakeExecutor()->Submit(Spec("f1", {"true"})).code(), StatusCode::kAlreadyExists);
}

TEST_F(LocalExecutorTest, MissingCommandIsRejectedUpFront) {
  auto e = MakeExecutor();
  GangSpec spec = Spec("m1", {""});
  spec.replicas[0].argv = {"no-such-command-trainyard"};
  Status st = e->Submit(spec);
  EXPECT_EQ(st.ToString(),
            "INVALID_ARGUMENT: workerPoolSpecs[0]: command "
            "'no-such-command-trainyard' is not an executable on this host's PATH");
}

TEST_F(LocalExecutorTest, RetriesUpToTheBudgetThenFails) {
  auto e = MakeExecutor();
  GangSpec spec = Spec("r1", {"echo attempt; exit 2"});
  spec.max_restarts = 2;
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "r1");
  EXPECT_EQ(s.error_message, "workerpool0 replica 0 exited with code 2 after 2 restarts");
  EXPECT_EQ(s.replicas[0].restarts, 2);
  std::string logs = Logs(*e, "r1");
  size_t attempts = 0;
  for (size_t p = logs.find("O attempt"); p != std::string::npos;
       p = logs.find("O attempt", p + 1)) {
    ++attempts;
  }
  EXPECT_EQ(attempts, 3u) << logs;
}

TEST_F(LocalExecutorTest, RetrySucceedsOnSecondAttempt) {
  auto e = MakeExecutor();
  GangSpec spec = Spec("r2", {"if [ -f marker ]; then exit 0; fi; touch marker; exit 1"});
  spec.max_restarts = 3;
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "r2");
  EXPECT_EQ(GangStateName(s.state), "SUCCEEDED") << s.error_message;
  EXPECT_EQ(s.replicas[0].restarts, 1);
}

TEST_F(LocalExecutorTest, RestartJobOnWorkerRestartRestartsTheWholeGang) {
  auto e = MakeExecutor();
  std::string d = dir_.string();
  GangSpec spec = Spec("g1", {"echo chief-start; while [ ! -f " + d + "/ok ]; do sleep 0.05; done",
                              "if [ -f " + d + "/marker ]; then touch " + d +
                                  "/ok; exit 0; fi; touch " + d + "/marker; sleep 0.2; exit 1"});
  spec.max_restarts = 1;
  spec.restart_job_on_worker_restart = true;
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "g1");
  EXPECT_EQ(GangStateName(s.state), "SUCCEEDED") << s.error_message << Logs(*e, "g1");
  EXPECT_EQ(s.replicas[0].restarts, 1);
  EXPECT_EQ(s.replicas[1].restarts, 1);
  std::string logs = Logs(*e, "g1");
  EXPECT_NE(logs.find("chief-start"), logs.rfind("chief-start")) << logs;
}

TEST_F(LocalExecutorTest, TimeoutStopsTheGangAndFails) {
  auto e = MakeExecutor();
  GangSpec spec = Spec("t1", {"sleep 30"});
  spec.timeout = 1s;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "t1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message, "FAILED: timed out after 1s");
}

TEST_F(LocalExecutorTest, CancelSendsSigtermAndWaitsForTheGrace) {
  auto e = MakeExecutor();
  ASSERT_TRUE(e->Submit(Spec("c1", {"trap 'echo got-term; exit 0' TERM; echo ready; "
                                    "while true; do sleep 0.05; done"}))
                  .ok());
  WaitForLog(*e, "c1", "ready");
  ASSERT_TRUE(e->Cancel("c1").ok());
  GangStatus s = WaitDone(*e, "c1");
  EXPECT_EQ(GangStateName(s.state), "CANCELLED");
  EXPECT_NE(Logs(*e, "c1").find("O got-term"), std::string::npos) << Logs(*e, "c1");
  EXPECT_EQ(History("c1"), "QUEUED PENDING RUNNING CANCELLING CANCELLED");
  EXPECT_TRUE(e->Cancel("c1").ok());  // no-op once terminal
  EXPECT_EQ(e->Cancel("nope").code(), StatusCode::kNotFound);
}

TEST_F(LocalExecutorTest, CancelKillsAReplicaThatIgnoresSigtermAfterTheGrace) {
  auto e = MakeExecutor();
  ASSERT_TRUE(
      e->Submit(Spec("c2", {"trap '' TERM; echo ready; while true; do sleep 0.05; done"})).ok());
  WaitForLog(*e, "c2", "ready");
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(e->Cancel("c2").ok());
  GangStatus s = WaitDone(*e, "c2");
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(GangStateName(s.state), "CANCELLED");
  EXPECT_GE(took, 900ms);
  EXPECT_EQ(s.replicas[0].exit_code, 128 + SIGKILL);
}

TEST_F(LocalExecutorTest, GangWaitsInQueueUntilItFitsAndQueuedCancelIsImmediate) {
  auto e = MakeExecutor(/*cpus=*/1);
  std::string go = (dir_ / "go").string();
  ASSERT_TRUE(e->Submit(Spec("a", {"while [ ! -f " + go + " ]; do sleep 0.05; done"})).ok());
  ASSERT_TRUE(e->Submit(Spec("b", {"true"})).ok());
  ASSERT_TRUE(e->Submit(Spec("c", {"true"})).ok());
  WaitFor(*e, "a", [](const GangStatus& s) { return s.state == GangState::kRunning; });
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(GangStateName(e->Get("b")->state), "QUEUED");
  ASSERT_TRUE(e->Cancel("c").ok());
  EXPECT_EQ(GangStateName(e->Get("c")->state), "CANCELLED");
  testing::WriteFileOrDie(go, "");
  EXPECT_EQ(GangStateName(WaitDone(*e, "b").state), "SUCCEEDED");
}

// Replicas run on the CPUs the scheduler placed them on, with matching OpenMP/MKL
// thread counts (what keeps two replicas on a 2-core host from oversubscribing it).
TEST_F(LocalExecutorTest, ReplicasArePinnedToTheirOwnCpusWithMatchingThreadCounts) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mine), &mine), 0);
  std::vector<int> ids;
  for (int id = 0; id < CPU_SETSIZE && ids.size() < 2; ++id) {
    if (CPU_ISSET(id, &mine)) ids.push_back(id);
  }
  if (ids.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
  LocalExecutor e(Options(HostInventory{2, 16, {}, ids}));
  const std::string script =
      "grep Cpus_allowed_list /proc/self/status; echo omp=$OMP_NUM_THREADS mkl=$MKL_NUM_THREADS";
  const std::string done = (dir_ / "worker-done").string();
  // Two n1-standard-1 replicas on 2 CPUs; the chief ends only after the worker has printed
  // (the chief's success stops the worker).
  GangSpec spec = Spec("pin", {script + "; while [ ! -f " + done + " ]; do sleep 0.02; done",
                               script + "; touch " + done});
  spec.replicas[1].env["OMP_NUM_THREADS"] = "3";  // the job's own setting wins
  ASSERT_TRUE(e.Submit(spec).ok());
  EXPECT_EQ(GangStateName(WaitDone(e, "pin").state), "SUCCEEDED");
  std::string logs = Logs(e, "pin");
  std::string got;
  for (const char* line : {"0/0 O Cpus_allowed_list:\t", "0/0 O omp=1 mkl=1",
                           "1/0 O Cpus_allowed_list:\t", "1/0 O omp=3 mkl=1"}) {
    size_t at = logs.find(line);
    got += at == std::string::npos ? std::string("missing ") + line
                                   : logs.substr(at, logs.find('\n', at) - at);
    got += "\n";
  }
  EXPECT_EQ(got, "0/0 O Cpus_allowed_list:\t" + std::to_string(ids[0]) +
                     "\n0/0 O omp=1 mkl=1\n1/0 O Cpus_allowed_list:\t" + std::to_string(ids[1]) +
                     "\n1/0 O omp=3 mkl=1\n")
      << logs;
}

// A T4 job gets the host's T4, not the first free GPU.
TEST_F(LocalExecutorTest, GpuJobsGetADeviceOfTheRequestedModel) {
  LocalExecutor e(Options(HostInventory{8, 32, {{0, "NVIDIA L4", 22}, {1, "Tesla T4", 15}}, {}}));
  GangSpec spec = Spec("t4", {"echo gpus=[$CUDA_VISIBLE_DEVICES]"});
  spec.replicas[0].accelerator_type = "NVIDIA_TESLA_T4";
  spec.replicas[0].accelerator_count = 1;
  ASSERT_TRUE(e.Submit(spec).ok());
  EXPECT_EQ(GangStateName(WaitDone(e, "t4").state), "SUCCEEDED");
  EXPECT_NE(Logs(e, "t4").find("0/0 O gpus=[1]"), std::string::npos) << Logs(e, "t4");
}

// Submit->RUNNING latency: with an hour-long poll interval, only the wrapper's exit
// notification (pidfd) can end a job and admit the one queued behind it.
TEST_F(LocalExecutorTest, ExitsAreNoticedWithoutPolling) {
  // One CPU: the second job waits for the first.
  LocalExecutor e(Options(HostInventory{1, 16, {}, {}}, std::chrono::hours(1)));
  ASSERT_TRUE(e.Submit(Spec("first", {"true"})).ok());
  ASSERT_TRUE(e.Submit(Spec("second", {"true"})).ok());
  EXPECT_EQ(
      GangStateName(WaitDone(e, "first").state) + " " + GangStateName(WaitDone(e, "second").state),
      "SUCCEEDED SUCCEEDED");
}

// The cgroup path end to end on a directory tree standing in for /sys/fs/cgroup (this VM has
// cgroup v1): the executor creates the replica's cgroup with its machine type's limits, the
// replica joins it before it runs (the wrapper writes cgroup.procs), and it is removed after.
TEST_F(LocalExecutorTest, EachReplicaJoinsItsOwnCgroupWithTheMachineTypesLimits) {
  fs::path root = dir_ / "cgroupfs";
  fs::path parent = root / "trainyard";
  fs::create_directories(parent);
  testing::WriteFileOrDie(parent / "cgroup.controllers", "cpu memory pids\n");
  testing::WriteFileOrDie(parent / "cgroup.subtree_control", "");
  testing::WriteFileOrDie(dir_ / "self_cgroup", "0::/\n");
  // In a real cgroup the kernel provides cgroup.procs; here the test does.
  fs::path replica_cgroup = parent / "trainyard-cg-workerpool0-0-1";
  fs::create_directories(replica_cgroup);
  testing::WriteFileOrDie(replica_cgroup / "cgroup.procs", "");
  LocalExecutorOptions o = Options(HostInventory{4, 16, {}, {}});
  o.cgroup.mount = root;
  o.cgroup.proc_self_cgroup = dir_ / "self_cgroup";
  o.cgroup.parent = "trainyard";
  o.cgroup.check_filesystem = false;
  LocalExecutor e(o);
  ASSERT_NE(e.LimitNotes().at(1).find("enforced, replica cgroups under " + parent.string()),
            std::string::npos)
      << e.LimitNotes().at(1);
  ASSERT_TRUE(e.Submit(Spec("cg", {"cd " + replica_cgroup.string() +
                                   " && echo procs=$(cat cgroup.procs) mem=$(cat memory.max) "
                                   "cpu=$(cat cpu.max)"}))
                  .ok());
  EXPECT_EQ(GangStateName(WaitDone(e, "cg").state), "SUCCEEDED");
  // n1-standard-1: 1 vCPU, 3.75 GiB.
  EXPECT_NE(Logs(e, "cg").find("0/0 O procs=0 mem=4026531840 cpu=100000 100000"), std::string::npos)
      << Logs(e, "cg");
  EXPECT_FALSE(fs::exists(replica_cgroup));
}

TEST_F(LocalExecutorTest, GpusAreAssignedThroughCudaVisibleDevices) {
  LocalExecutor e(Options(HostInventory{8, 32, {{0, "Tesla T4", 15}, {1, "Tesla T4", 15}}, {}}));
  std::string go = (dir_ / "go").string();
  std::string script =
      "echo gpus=[$CUDA_VISIBLE_DEVICES]; while [ ! -f " + go + " ]; do sleep 0.05; done";
  GangSpec a = Spec("ga", {script});
  a.replicas[0].accelerator_type = "NVIDIA_TESLA_T4";
  a.replicas[0].accelerator_count = 1;
  GangSpec b = a;
  b.job_id = "gb";
  b.job_dir = dir_ / "jobs" / "gb";
  GangSpec c = b;
  c.job_id = "gc";
  c.job_dir = dir_ / "jobs" / "gc";
  GangSpec cpu = Spec("cpu", {script});
  for (const GangSpec* s : {&a, &b, &c, &cpu}) ASSERT_TRUE(e.Submit(*s).ok()) << s->job_id;
  WaitForLog(e, "ga", "gpus=");
  WaitForLog(e, "gb", "gpus=");
  WaitForLog(e, "cpu", "gpus=");
  EXPECT_EQ(GangStateName(e.Get("gc")->state), "QUEUED");  // both GPUs are taken
  std::string got = Logs(e, "ga") + Logs(e, "gb");
  EXPECT_NE(got.find("O gpus=[0]"), std::string::npos) << got;
  EXPECT_NE(got.find("O gpus=[1]"), std::string::npos) << got;
  EXPECT_NE(Logs(e, "cpu").find("O gpus=[]"), std::string::npos);
  EXPECT_NE(Logs(e, "ga").find("(Tesla T4) serves the NVIDIA_TESLA_T4"), std::string::npos);
  testing::WriteFileOrDie(go, "");
  for (const char* id : {"ga", "gb", "gc", "cpu"}) {
    EXPECT_EQ(GangStateName(WaitDone(e, id).state), "SUCCEEDED") << id;
  }
}

TEST_F(LocalExecutorTest, LogsRotateKeepTheStartAndPageWithCursors) {
  auto e = MakeExecutor(4, LogLimits{4096, 3});
  ASSERT_TRUE(
      e->Submit(Spec("l1", {"i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done"}))
          .ok());
  ASSERT_EQ(GangStateName(WaitDone(*e, "l1").state), "SUCCEEDED");
  std::vector<LogLine> all;
  int64_t cursor = -1;
  while (true) {
    auto page = e->ReadLogs("l1", cursor, 50);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const auto& l : *page) {
      EXPECT_GT(l.offset, cursor);
      cursor = l.offset;
      all.push_back(l);
    }
  }
  ASSERT_GT(all.size(), 10u);
  EXPECT_EQ(all.front().text, "line 0");
  bool gap = false;
  bool last = false;
  for (const auto& l : all) {
    gap |= l.text.find("bytes of log were rotated away") != std::string::npos;
    last |= l.text == "line 1999";
  }
  EXPECT_TRUE(gap);
  EXPECT_TRUE(last);
  int segments = 0;
  for (const auto& entry : fs::directory_iterator(JobLogDir(dir_ / "jobs" / "l1"))) {
    segments += entry.path().filename().string().starts_with("segment-");
  }
  EXPECT_LE(segments, 3);
}

TEST_F(LocalExecutorTest, NewExecutorAdoptsARunningReplica) {
  std::string go = (dir_ / "go").string();
  GangSpec spec = Spec("a1", {"echo started; while [ ! -f " + go +
                              " ]; do sleep 0.05; done; "
                              "echo finishing"});
  int64_t pid = 0;
  {
    auto first = MakeExecutor();
    ASSERT_TRUE(first->Submit(spec).ok());
    WaitForLog(*first, "a1", "started");
    pid = WaitFor(*first, "a1", [](const GangStatus& s) { return s.replicas[0].pid > 0; })
              .replicas[0]
              .pid;
    first->Shutdown();  // the "server" goes away; the replica keeps running
  }
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), 0);
  auto second = MakeExecutor();
  auto adopted = second->Adopt(spec);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(GangStateName(adopted->state), "RUNNING");
  EXPECT_EQ(adopted->replicas[0].pid, pid);
  testing::WriteFileOrDie(go, "");
  GangStatus s = WaitDone(*second, "a1");
  EXPECT_EQ(GangStateName(s.state), "SUCCEEDED") << s.error_message;
  std::string logs = Logs(*second, "a1");
  EXPECT_NE(logs.find("O started"), std::string::npos);
  EXPECT_NE(logs.find("O finishing"), std::string::npos) << logs;
}

TEST_F(LocalExecutorTest, AdoptSeesAnExitCodeRecordedWhileTheServerWasDown) {
  std::string go = (dir_ / "go").string();
  GangSpec spec = Spec("a2", {"while [ ! -f " + go + " ]; do sleep 0.05; done; exit 5"});
  {
    auto first = MakeExecutor();
    ASSERT_TRUE(first->Submit(spec).ok());
    WaitFor(*first, "a2", [](const GangStatus& s) { return s.replicas[0].pid > 0; });
    first->Shutdown();
  }
  testing::WriteFileOrDie(go, "");
  fs::path status = ReplicaAttemptFile(spec.job_dir, 0, 0, 1, "status");
  for (int i = 0; i < 250 && !fs::exists(status); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(fs::exists(status));
  auto second = MakeExecutor();
  ASSERT_TRUE(second->Adopt(spec).ok());
  GangStatus s = WaitDone(*second, "a2");
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message,
            "FAILED: workerpool0 replica 0 exited with code 5");
}

TEST_F(LocalExecutorTest, AdoptFailsAReplicaWhoseExitCodeWasLost) {
  GangSpec spec = Spec("a3", {"while true; do sleep 0.05; done"});
  ProcessId wrapper;
  int64_t pid = 0;
  {
    auto first = MakeExecutor();
    ASSERT_TRUE(first->Submit(spec).ok());
    WaitFor(*first, "a3", [](const GangStatus& s) { return s.replicas[0].pid > 0; });
    pid = first->Get("a3")->replicas[0].pid;
    first->Shutdown();
  }
  auto state = nlohmann::json::parse(testing::ReadFileOrDie(LocalStateFile(spec.job_dir)));
  int64_t wrapper_pid = state["replicas"][0]["wrapper_pid"].get<int64_t>();
  ::kill(static_cast<pid_t>(wrapper_pid), SIGKILL);  // supervisor and replica die together
  ::kill(-static_cast<pid_t>(pid), SIGKILL);
  std::this_thread::sleep_for(200ms);
  auto second = MakeExecutor();
  ASSERT_TRUE(second->Adopt(spec).ok());
  GangStatus s = WaitDone(*second, "a3");
  EXPECT_EQ(GangStateName(s.state), "FAILED");
  EXPECT_NE(s.error_message.find("workerpool0 replica 0 ended without a recorded exit code"),
            std::string::npos)
      << s.error_message;
}

// Runs only inside the child process started by the next test: a "server" that submits a job
// and then waits to be killed with SIGKILL.
TEST_F(LocalExecutorTest, ChildServerForKillTest) {
  const char* root = std::getenv("TRAINYARD_TEST_CHILD_SERVER_DIR");
  if (root == nullptr) GTEST_SKIP() << "helper for KillNineOfTheServer";
  dir_ = root;
  auto e = MakeExecutor();
  ASSERT_TRUE(e->Submit(KillTestSpec()).ok());
  WaitFor(*e, "k9", [](const GangStatus& s) { return s.replicas[0].pid > 0; });
  testing::WriteFileOrDie(dir_ / "ready", "");
  std::this_thread::sleep_for(60s);
}

TEST_F(LocalExecutorTest, KillNineOfTheServerKeepsTheReplicaItsLogsAndItsExitCode) {
  std::string self = fs::read_symlink("/proc/self/exe").string();
  pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    ::setenv("TRAINYARD_TEST_CHILD_SERVER_DIR", dir_.c_str(), 1);
    ::execl(self.c_str(), self.c_str(), "--gtest_filter=LocalExecutorTest.ChildServerForKillTest",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 500 && !fs::exists(dir_ / "ready"); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(fs::exists(dir_ / "ready"));
  ASSERT_EQ(::kill(server, SIGKILL), 0);
  ASSERT_EQ(::waitpid(server, nullptr, 0), server);

  GangSpec spec = KillTestSpec();
  auto e = MakeExecutor();
  auto adopted = e->Adopt(spec);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(GangStateName(adopted->state), "RUNNING");
  // The replica kept writing through the wrapper while no server existed.
  size_t ticks_at_adopt = e->ReadLogs("k9", -1, 100000)->size();
  std::this_thread::sleep_for(300ms);
  EXPECT_GT(e->ReadLogs("k9", -1, 100000)->size(), ticks_at_adopt);
  testing::WriteFileOrDie(dir_ / "go", "");
  GangStatus s = WaitDone(*e, "k9");
  EXPECT_EQ(GangStateName(s.state) + ": " + s.error_message,
            "FAILED: workerpool0 replica 0 exited with code 7");
}

TEST_F(LocalExecutorTest, AdoptOfAJobThatNeverStartedQueuesIt) {
  auto e = MakeExecutor();
  auto adopted = e->Adopt(Spec("q1", {"echo late start"}));
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(GangStateName(adopted->state), "QUEUED");
  EXPECT_EQ(GangStateName(WaitDone(*e, "q1").state), "SUCCEEDED");
}

TEST_F(LocalExecutorTest, ReplicaLargerThanTheHostRunsWithAWarning) {
  auto e = MakeExecutor(/*cpus=*/1);
  GangSpec spec = Spec("big", {"echo ran"});
  spec.replicas[0].machine_type = "n1-standard-32";
  ASSERT_TRUE(e->Submit(spec).ok());
  EXPECT_EQ(GangStateName(WaitDone(*e, "big").state), "SUCCEEDED");
  std::string logs = Logs(*e, "big");
  EXPECT_NE(logs.find("0/0 E [trainyard] warning: workerpool0-0: n1-standard-32 asks for 32 vCPUs "
                      "/ 120 GiB but this host has 1 vCPUs / 16 GiB; it runs taking the whole "
                      "host (oversubscribed)"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("0/0 O ran"), std::string::npos);
}

TEST_F(LocalExecutorTest, EndedJobStaysReadableFromANewExecutor) {
  {
    auto first = MakeExecutor();
    ASSERT_TRUE(first->Submit(Spec("e1", {"echo kept"})).ok());
    WaitDone(*first, "e1");
  }
  auto second = MakeExecutor();
  auto s = second->Get("e1");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(GangStateName(s->state), "SUCCEEDED");
  EXPECT_NE(Logs(*second, "e1").find("O kept"), std::string::npos);
  EXPECT_TRUE(second->Cancel("e1").ok());  // ended: a no-op, not NOT_FOUND
}

TEST_F(LocalExecutorTest, DistributedGangGetsDistinctPortsAndRanks) {
  auto e = MakeExecutor();
  std::string show = "echo rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT";
  ASSERT_TRUE(
      e->Submit(Spec("d1", {show + "; echo spec=$CLUSTER_SPEC; sleep 0.5", show, show})).ok());
  ASSERT_EQ(GangStateName(WaitDone(*e, "d1").state), "SUCCEEDED");
  std::string logs = Logs(*e, "d1");
  size_t at = logs.find("0/0 O spec=");
  ASSERT_NE(at, std::string::npos) << logs;
  auto spec = nlohmann::json::parse(logs.substr(at + 11, logs.find('\n', at) - at - 11));
  std::string chief = spec["cluster"]["workerpool0"][0];
  std::string w0 = spec["cluster"]["workerpool1"][0];
  std::string w1 = spec["cluster"]["workerpool1"][1];
  EXPECT_NE(chief, w0);
  EXPECT_NE(w0, w1);
  EXPECT_NE(logs.find("0/0 O rank=0 world=3 master=" + chief), std::string::npos) << logs;
  EXPECT_NE(logs.find("1/0 O rank=1 world=3 master=" + chief), std::string::npos) << logs;
  EXPECT_NE(logs.find("1/1 O rank=2 world=3 master=" + chief), std::string::npos) << logs;
}

// GangSpec::run_as: the replica (not the wrapper) switches to that user, gets its HOME, and owns
// its work dir; the job log and status files stay the server's.
TEST_F(LocalExecutorTest, ReplicasRunAsTheGangsUserWithTheirOwnWorkDir) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root";
  auto e = MakeExecutor();
  GangSpec spec = Spec("u1", {"echo uid=$(id -u) gid=$(id -g) groups=$(id -G) home=$HOME; "
                              "touch mine && echo made-file"});
  spec.run_as = RunAs{"nobody", 65534, 65534, {4242}, "/nonexistent", std::nullopt};
  ASSERT_TRUE(e->Submit(spec).ok());
  GangStatus s = WaitDone(*e, "u1");
  EXPECT_EQ(GangStateName(s.state), "SUCCEEDED") << s.error_message << Logs(*e, "u1");
  const std::string logs = Logs(*e, "u1");
  EXPECT_NE(logs.find("uid=65534 gid=65534 groups=65534 4242 home=/nonexistent"), std::string::npos)
      << logs;
  EXPECT_NE(logs.find("made-file"), std::string::npos) << logs;
  struct stat st {};
  ASSERT_EQ(::stat(ReplicaWorkDir(spec.job_dir, 0, 0).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  ASSERT_EQ(::stat(JobLogDir(spec.job_dir).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

}  // namespace
}  // namespace trainyard::executor
