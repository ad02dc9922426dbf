#include "slurm/slurm_client.h"

#include <gtest/gtest.h>

#include "slurm/slurm_job_state.h"

namespace trainyard::slurm {
namespace {

// Canned outputs keyed by the command's program name; records every call.
class FakeRunner : public CommandRunner {
 public:
  StatusOr<CommandResult> Run(const std::vector<std::string>& argv, std::chrono::milliseconds,
                              const std::function<void(std::string_view)>&) override {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
    calls.push_back(line);
    auto it = results.find(argv[0]);
    if (it == results.end()) return UnavailableError("cannot run " + argv[0]);
    return it->second;
  }
  StatusOr<std::unique_ptr<BackgroundCommand>> Start(const std::vector<std::string>& argv,
                                                     const std::filesystem::path&) override {
    return UnavailableError("the Slurm client starts nothing in the background: " + argv[0]);
  }
  std::map<std::string, CommandResult> results;
  std::vector<std::string> calls;
};

std::string Render(const std::map<std::string, SlurmJobInfo>& jobs) {
  std::string s;
  for (const auto& [id, j] : jobs) {
    s += id + "=" + j.state + "/" + j.reason + "/" + j.exit_code + "/" + j.nodes + " ";
  }
  return s;
}

TEST(SlurmClientTest, SubmitParsesTheJobId) {
  FakeRunner runner;
  runner.results["sbatch"] = {0, "17;trainyard\n", ""};
  CliSlurmClient client(runner);
  auto id = client.Submit("/j/job.sbatch");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id + " | " + runner.calls.at(0), "17 | sbatch --parsable /j/job.sbatch");
}

TEST(SlurmClientTest, SubmitFailuresCarrySbatchsMessage) {
  FakeRunner runner;
  runner.results["sbatch"] = {1, "", "sbatch: error: invalid partition specified: nope\n"};
  CliSlurmClient client(runner);
  Status s = client.Submit("/j/job.sbatch").status();
  EXPECT_EQ(s.ToString(),
            "INVALID_ARGUMENT: sbatch /j/job.sbatch failed (exit code 1): sbatch: error: invalid "
            "partition specified: nope");
  EXPECT_EQ(ParseSbatchParsable("Submitted batch job 3").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SlurmClientTest, QueryFoldsHetComponentsAndAsksSacctForTheRest) {
  FakeRunner runner;
  runner.results["squeue"] = {
      0, "15+0|RUNNING|None|n1\n15+1|COMPLETED|None|n2\n16|PENDING|Resources|\n", ""};
  runner.results["sacct"] = {0, "14|CANCELLED by 0|0:15|n1|None\n14.batch|CANCELLED||n1|\n", ""};
  CliSlurmClient client(runner);
  auto jobs = client.Query({"14", "15", "16"});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(Render(*jobs) + "| " + runner.calls.at(1),
            "14=CANCELLED/None/0:15/n1 15=RUNNING/None//n1,n2 16=PENDING/Resources// | "
            "sacct --noheader --parsable2 -X -j 14 --format JobID,State,ExitCode,NodeList,Reason");
}

TEST(SlurmClientTest, UnknownIdsAndDisabledAccountingAreNotErrors) {
  FakeRunner runner;
  runner.results["squeue"] = {1, "", "slurm_load_jobs error: Invalid job id specified\n"};
  runner.results["sacct"] = {1, "", "sacct: error: Slurm accounting storage is disabled\n"};
  CliSlurmClient client(runner);
  auto first = client.Query({"9"});
  auto second = client.Query({"9"});
  ASSERT_TRUE(first.ok() && second.ok());
  // sacct is asked once: after "disabled" the client stops trying.
  EXPECT_EQ(std::to_string(first->size() + second->size()) +
                " calls=" + std::to_string(runner.calls.size()),
            "0 calls=3");
}

TEST(SlurmClientTest, FindByNameAsksSqueueThenAccounting) {
  FakeRunner live;
  live.results["squeue"] = {0, "21+0|PENDING|Priority|\n21+1|PENDING|Priority|\n", ""};
  CliSlurmClient a(live);
  auto found = a.FindByName("trainyard-7-2");
  FakeRunner finished;  // squeue forgot it (MinJobAge); accounting still knows it
  finished.results["squeue"] = {0, "", ""};
  finished.results["sacct"] = {0, "20|COMPLETED|0:0|n1|None\n", ""};
  CliSlurmClient b(finished);
  auto old = b.FindByName("trainyard-7-1");
  ASSERT_TRUE(found.ok() && old.ok());
  EXPECT_EQ(
      Render(*found) + "| " + live.calls.at(0) + " | " + Render(*old) + "| " + finished.calls.at(1),
      "21=PENDING/Priority// | squeue --noheader -t all --name=trainyard-7-2 -o %i|%T|%r|%N "
      "| 20=COMPLETED/None/0:0/n1 | sacct --noheader --parsable2 -X --name=trainyard-7-1 "
      "--starttime=now-30days --format JobID,State,ExitCode,NodeList,Reason");
}

TEST(SlurmClientTest, SqueueFailureIsUnavailable) {
  FakeRunner runner;
  runner.results["squeue"] = {1, "", "squeue: error: Unable to contact slurm controller\n"};
  CliSlurmClient client(runner);
  EXPECT_EQ(client.Query({"1"}).status().ToString(),
            "UNAVAILABLE: squeue failed (exit code 1): squeue: error: Unable to contact slurm "
            "controller");
}

TEST(SlurmClientTest, CancelSendsSignalAndToleratesFinishedJobs) {
  FakeRunner runner;
  runner.results["scancel"] = {
      1, "",
      "scancel: error: Kill job error on job id 5: Job/step already completing or completed\n"};
  CliSlurmClient client(runner);
  Status s = client.Cancel("5", "TERM");
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(runner.calls.at(0), "scancel --signal=TERM 5");
}

TEST(SlurmClientTest, NodesOfThePartitionWithGpus) {
  FakeRunner runner;
  runner.results["sinfo"] = {0,
                             "n1|debug*|2|10847|(null)|idle\n"
                             "n1|gpu|2|10847|(null)|idle\n"
                             "g1|gpu|64|512000|gpu:a100:4(S:0-1),shard:8|mixed\n"
                             "g2|gpu|64|512000|gpu:2|down*\n",
                             ""};
  CliSlurmClient client(runner);
  auto gpu = client.Nodes("gpu");
  auto def = client.Nodes("");
  ASSERT_TRUE(gpu.ok() && def.ok());
  std::string s;
  for (const auto& n : *gpu) {
    s += n.name + ":" + std::to_string(n.cpus) + "/" + std::to_string(n.memory_mb) + "/" +
         std::to_string(n.gpus) + (n.Usable() ? " " : "(unusable) ");
  }
  EXPECT_EQ(s + "default=" + def->at(0).name + std::to_string(def->size()),
            "n1:2/10847/0 g1:64/512000/4 g2:64/512000/2(unusable) default=n11");
}

// sinfo's %C column (allocated/idle/other/total CPUs) gives the idle CPUs; without it, -1.
TEST(SlurmClientTest, IdleCpusComeFromTheCpuStateColumn) {
  auto nodes =
      ParseSinfoNodes("n1|debug*|8|1000|(null)|mixed|6/2/0/8\nn2|debug*|4|1000|(null)|idle\n");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(std::to_string(nodes->at(0).idle_cpus) + " " + std::to_string(nodes->at(1).idle_cpus),
            "2 -1");
}

TEST(SlurmClientTest, MalformedSinfoNamesTheLine) {
  EXPECT_EQ(ParseSinfoNodes("n1 debug 2\n").status().message(),
            "sinfo printed an unexpected line 'n1 debug 2' (want "
            "NODE|PARTITION|CPUS|MEMORY|GRES|STATE|A/I/O/T)");
}

TEST(SlurmJobStateTest, MappingTable) {
  std::string s;
  for (const char* st : {"PENDING", "REQUEUED", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED",
                         "COMPLETED", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                         "DEADLINE", "TIMEOUT", "PREEMPTED", "CANCELLED", "SOMETHING_NEW"}) {
    s += std::string(st) + "=" + SlurmStateClassName(ClassifySlurmState(st)) + " ";
  }
  EXPECT_EQ(s,
            "PENDING=queued REQUEUED=queued CONFIGURING=starting RUNNING=running "
            "COMPLETING=running SUSPENDED=running COMPLETED=completed FAILED=failed "
            "NODE_FAIL=failed OUT_OF_MEMORY=failed BOOT_FAIL=failed DEADLINE=failed "
            "TIMEOUT=timeout PREEMPTED=preempted CANCELLED=cancelled SOMETHING_NEW=running ");
}

}  // namespace
}  // namespace trainyard::slurm
