// Nothing lost at the end of a run (issue 24), end to end: a root `trainyard server` whose
// replicas run as `nobody` (docs/security.md "Who replicas run as") and the real trainer.
//   - A bucket made by hand (root's `mkdir -p BUCKETS/bkt/data`, 0755, not the bucket group) with
//     baseOutputDirectory gs://bkt/out: the server makes out/ and the AIP_* dirs for the replica
//     user, with the bucket group and setgid, so the export (staged beside AIP_MODEL_DIR, in out/)
//     lands and the job SUCCEEDS.
//   - A --job-dir under a root-only dir: the trainer finds it in its first second, before it
//     reads any data, and exits 78 (replica_contract::kExitConfig); the job FAILS at once, without
//     a restart, with the path in error.message.
//   - An existing output dir nobody cannot write: the create is refused (400) naming it.
// Each with the local executor (host processes) and, where a local Slurm cluster runs
// (scripts/slurm-local.sh), with --executor slurm (the same on its tasks). The container variant
// is in container_e2e_test. Skipped, with the reason, without root or trainyard-bert.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/time.h"
#include "e2e_harness.h"
#include "testing/sentiment_data.h"

namespace trainyard::e2e {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kCreate = "/v1/projects/p/locations/us-central1/customJobs";

class OutputsE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "output dir tests need root (a root server's replicas run as nobody)";
    }
    bert_ = testing::ToolPath("trainyard-bert");
    if (!HaveLocalExecutor() || !fs::exists(bert_)) {
      GTEST_SKIP() << "output dir tests need the local executor and trainyard-bert";
    }
    dir_ = testing::MakeTestDir();
    buckets_ = dir_ / "buckets";
    // The bucket: made by root outside Trainyard, holding the user's data.
    const fs::path data = buckets_ / "bkt" / "data";
    fs::create_directories(data);
    for (const fs::path& d : {buckets_ / "bkt", data}) ::chmod(d.c_str(), 0755);
    testing::WriteFileOrDie(data / "train.csv", testing::SentimentCsv(96, 1));
    testing::WriteFileOrDie(data / "eval.csv", testing::SentimentCsv(32, 2));
    testing::WriteFileOrDie(data / "test.csv", testing::SentimentCsv(32, 3));
    testing::WriteFileOrDie(data / "vocab.txt", testing::SentimentVocab());
    // The replicas (nobody) run the trainer from a copy in the test dir: a build tree in a
    // private home (a clone under /root) is not theirs to execute.
    const fs::path bin = dir_ / "bin";
    fs::create_directories(bin);
    std::error_code linked;  // a hard link where it can (62 MB), else a copy
    fs::create_hard_link(bert_, bin / "trainyard-bert", linked);
    if (linked) fs::copy_file(bert_, bin / "trainyard-bert", fs::copy_options::overwrite_existing);
    for (const fs::path& p : {bin, bin / "trainyard-bert"}) ::chmod(p.c_str(), 0755);
    env_ = {"TRAINYARD_BUCKET_ROOT=" + buckets_.string(),
            "PATH=" + bin.string() + ":" + std::getenv("PATH")};
  }

  // A root server whose replicas run as nobody, with `executor`.
  void Start(const std::string& executor) {
    std::string error;
    std::vector<std::string> args = {"--executor", executor, "--kill-grace-seconds", "5"};
    if (executor == "local") args.insert(args.end(), {"--gpus", "0"});
    server_ = ServerProcess::Start(dir_ / ("data-" + executor), args, &error, env_,
                                   /*allow_root_replicas=*/false);
    ASSERT_NE(server_, nullptr) << error;
  }

  // `trainyard-bert train` (the catalog's trainyard/bert-sentiment) on the bucket's data.
  static json TrainJob(const std::string& base_output, const std::vector<std::string>& extra) {
    json args = json::array(
        {"--training-file=gs://bkt/data/train.csv", "--validation-file=gs://bkt/data/eval.csv",
         "--testing-file=gs://bkt/data/test.csv", "--vocab=gs://bkt/data/vocab.txt", "--epochs=1",
         "--batch-size=16", "--max-length=24", "--threads=1"});
    for (const std::string& a : extra) args.push_back(a);
    json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                 {"replicaCount", "1"},
                 {"containerSpec", {{"imageUri", "trainyard/bert-sentiment"}, {"args", args}}}};
    json spec = {{"workerPoolSpecs", json::array({pool})}};
    if (!base_output.empty()) spec["baseOutputDirectory"] = {{"outputUriPrefix", base_output}};
    return {{"displayName", "outputs"}, {"jobSpec", spec}};
  }

  // Creates the job, waits for its end; the job, with its log in *logs.
  json Run(const json& job, std::string* logs) {
    auto created = Http(server_->port(), "POST", kCreate, job.dump());
    EXPECT_EQ(created.status, 200) << created.body.dump();
    const std::string name = created.body.value("name", "");
    json done = WaitForJob(server_->port(), name, {}, 300);
    *logs = Cli(server_->endpoint(), {"ai", "custom-jobs", "stream-logs", name}, env_).out;
    return done;
  }

  // "STATE code message"
  static std::string Outcome(const json& job) {
    return job.value("state", "") + " " + std::to_string(job["error"].value("code", 0)) + " " +
           job["error"].value("message", "");
  }

  static int Restarts(const json& job) {
    int n = 0;
    for (const auto& r : job["trainyardInfo"]["replicas"]) n += r.value("restarts", 0);
    return n;
  }

  // "uid:gid mode" of a directory.
  static std::string Owner(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "missing";
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + " " + mode;
  }

  void HandMadeBucketSucceedsWithItsModel(const std::string& executor) {
    ASSERT_NO_FATAL_FAILURE(Start(executor));
    const std::string out = "out-" + executor;
    std::string logs;
    json job = Run(TrainJob("gs://bkt/" + out, {}), &logs);
    ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED")
        << job.dump(2) << logs << server_->Stderr();
    EXPECT_TRUE(fs::exists(buckets_ / "bkt" / out / "model" / "model.safetensors")) << logs;
    const group* g = ::getgrnam("trainyard");
    const std::string gid = g != nullptr ? std::to_string(g->gr_gid) : "65534";
    EXPECT_EQ(Owner(buckets_ / "bkt" / out) + " | " + Owner(buckets_ / "bkt" / out / "model"),
              "65534:" + gid + " 2775 | 65534:" + gid + " 2775");
  }

  void JobDirUnderARootOnlyDirFailsBeforeTraining(const std::string& executor) {
    ASSERT_NO_FATAL_FAILURE(Start(executor));
    const fs::path root_only = dir_ / "root-only";
    fs::create_directories(root_only);
    ::chmod(root_only.c_str(), 0700);
    std::string logs;
    json job = Run(TrainJob("", {"--job-dir=" + (root_only / "model").string()}), &logs);
    const std::string outcome = Outcome(job);
    const std::string want =
        "JOB_STATE_FAILED 9 workerpool0 replica 0 exited with code 78 (a "
        "configuration error, not restarted): trainyard-bert train: --job-dir " +
        (root_only / "model").string() + ": cannot create directory " +
        (root_only / "model").string() + ".tmp.";
    EXPECT_EQ(outcome.substr(0, want.size()) + " | restarts " + std::to_string(Restarts(job)) +
                  " | data read " +
                  std::to_string(logs.find("Read and tokenized") != std::string::npos),
              want + " | restarts 0 | data read 0")
        << outcome << "\n"
        << logs;
    EXPECT_NE(outcome.find(root_only.string() + " is owned by root:"), std::string::npos)
        << outcome;
    EXPECT_NE(outcome.find("mode 0700"), std::string::npos) << outcome;
    // For the record (not a threshold): how long the job ran before it failed.
    auto start = ParseTimestamp(job.value("startTime", ""));
    auto end = ParseTimestamp(job.value("endTime", ""));
    if (start.ok() && end.ok()) {
      std::cout << "[ measured ] " << executor << ": RUNNING -> FAILED in "
                << std::chrono::duration<double>(*end - *start).count() << " s\n";
    }
  }

  fs::path bert_, dir_, buckets_;
  std::vector<std::string> env_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(OutputsE2ETest, AHandMadeBucketEndsSucceededWithItsModel) {
  HandMadeBucketSucceedsWithItsModel("local");
}

TEST_F(OutputsE2ETest, AJobDirUnderARootOnlyDirFailsBeforeTrainingWithoutARestart) {
  JobDirUnderARootOnlyDirFailsBeforeTraining("local");
}

TEST_F(OutputsE2ETest, AHandMadeBucketEndsSucceededWithItsModelOnSlurm) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  HandMadeBucketSucceedsWithItsModel("slurm");
}

TEST_F(OutputsE2ETest, AJobDirUnderARootOnlyDirFailsBeforeTrainingWithoutARestartOnSlurm) {
  if (std::string why = SlurmSkipReason(); !why.empty()) GTEST_SKIP() << why;
  JobDirUnderARootOnlyDirFailsBeforeTraining("slurm");
}

TEST_F(OutputsE2ETest, AnExistingOutputDirNobodyCannotWriteIsRefusedAtCreate) {
  ASSERT_NO_FATAL_FAILURE(Start("local"));
  fs::create_directories(buckets_ / "bkt" / "taken");
  ::chmod((buckets_ / "bkt" / "taken").c_str(), 0755);
  auto refused = Http(server_->port(), "POST", kCreate, TrainJob("gs://bkt/taken", {}).dump());
  const std::string taken = (buckets_ / "bkt" / "taken").string();
  const std::string message = refused.body["error"].value("message", "");
  EXPECT_EQ(std::to_string(refused.status) + " " + message.substr(0, message.find(" is owned")),
            "400 jobSpec.baseOutputDirectory.outputUriPrefix: user 'nobody' (uid 65534), who runs "
            "this job's replicas, cannot write " +
                taken + ": it")
      << refused.body.dump();
  EXPECT_NE(message.find("mode 0755. Fix it (chown nobody " + taken), std::string::npos) << message;
}

}  // namespace
}  // namespace trainyard::e2e
